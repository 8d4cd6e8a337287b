package toolstest

// Call is one tools/call: a tool and its arguments.
type Call struct {
	Tool string
	Args map[string]any
}

// ColdStartCalls are the first calls the cold-start benchmarks time, each on
// a new server: get_vault_info (answered from the catalog manifest's
// summary), search (the catalog loaded), read_note (its name indexes too),
// list_tags (its tag index) and list_backlinks (its name and link indexes),
// reading and linking to note.
func ColdStartCalls(note string) []Call {
	return []Call{
		{"get_vault_info", map[string]any{}},
		{"search", map[string]any{"query": "compost"}},
		{"read_note", map[string]any{"path": note}},
		{"list_tags", map[string]any{}},
		{"list_backlinks", map[string]any{"path": note}},
	}
}
