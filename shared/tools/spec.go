package tools

import "fmt"

// Spec declares one tool, once, beside its handler in its family's file:
// what tools/list shows of it (name, title, description, annotations), who
// may call it and what it touches (access.go), the profiles it is in,
// whether it spends on a provider, and what must be configured for it to
// work. The server, the access guard, the rate limiter, the profile filter
// and tools/list all read it; a tool whose Spec is incomplete or does not
// fit its handler stops the server at start-up (see check and accessOf).
type Spec struct {
	Name        string
	Title       string
	Description string
	Hints       hints  // its MCP annotations, all four stated
	Access      access // scope, path arguments, writes (see access.go)
	// Core puts the tool in the "core" profile, the dozen most used
	// tools; every tool is in "full".
	Core bool
	// Paid tools spend on the user's embeddings or LLM key: their calls
	// share a per-identity limit (PaidCallsPerMinute).
	Paid  bool
	Needs Needs
}

// Needs is what a tool needs configured to do its work; without it the
// tool answers unsupported (reason not-configured).
type Needs struct {
	Embeddings bool // an embeddings provider and a vector index
	LLM        bool // a chat model
}

// provider reports whether the tool needs a provider at all.
func (n Needs) provider() bool { return n.Embeddings || n.LLM }

// check panics when the Spec is incomplete: a tool must never be served
// half declared.
func (sp Spec) check() {
	switch {
	case sp.Name == "":
		panic("a tool Spec without a name")
	case sp.Title == "" || sp.Description == "":
		panic(fmt.Sprintf("tool %s: its Spec needs a title and a description", sp.Name))
	case sp.Needs.provider() && !sp.Paid:
		panic(fmt.Sprintf("tool %s: it needs a provider, so its calls spend on the user's key: mark it Paid", sp.Name))
	}
}

// hints are a tool's MCP annotations. Every tool states all four: mcp-go's
// defaults are pessimistic and would mislead clients.
type hints struct {
	readOnly, destructive, idempotent, openWorld bool
}

var readOnly = hints{readOnly: true, idempotent: true}

// The hints of the tools that change notes. write_note's overwrite
// replaces a whole note, apply_edits and patch_section's replace drop
// text: destructive, and repeating them can change a note again. Deleting
// or moving again finds nothing to do: idempotent. Creating once only
// (file_page) and flipping a marker (complete_directive) lose nothing.
var (
	writeHints       = hints{destructive: true}
	idempotentWrites = hints{destructive: true, idempotent: true}
	additiveOnce     = hints{idempotent: true}
)
