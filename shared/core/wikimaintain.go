package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/sheaf-dev/sheaf/shared/llm"
	"github.com/sheaf-dev/sheaf/shared/vault"
)

// wiki_maintain: one LLM-assisted maintenance pass. The findings of lint
// (broken links, orphans, uncompiled sources, ...) and, when asked,
// lint_semantic, with excerpts of the notes they name, go to the model,
// which proposes concrete edits: each a call of a write tool with its
// arguments and a reason. The core checks every edit and returns the plan;
// the door applies it (through the write tools' own guards) only when
// asked.

// MaintainTools are the write tools a plan may use.
var MaintainTools = []string{"apply_edits", "patch_section", "write_note"}

// WikiMaintainIn is wiki_maintain's input.
type WikiMaintainIn struct {
	VaultArg
	PathPrefix  string `json:"path_prefix,omitempty" jsonschema:"Only findings about notes whose path starts with this plain string."`
	MaxFindings int    `json:"max_findings,omitempty" jsonschema:"How many lint findings to plan for at most (errors first)." schema:"minimum=1,maximum=50,default=20"`
	MaxNotes    int    `json:"max_notes,omitempty" jsonschema:"How many of the notes they name to show the model (about 4 KB each)." schema:"minimum=1,maximum=20,default=8"`
	MaxTokens   int    `json:"max_tokens,omitempty" jsonschema:"The most tokens the model may write for the plan." schema:"minimum=500,maximum=8000,default=3000"`
	Semantic    bool   `json:"semantic,omitempty" jsonschema:"Also run lint_semantic first (one more LLM call) and plan over its findings too."`
	Apply       bool   `json:"apply,omitempty" jsonschema:"Apply the plan: each edit is a call of its tool, with its checks (write scope; a propose-only key gets proposals). Default false: the plan only."`
}

// PlannedEdit is one edit of a plan: a write tool's call and why.
type PlannedEdit struct {
	Tool      string         `json:"tool" jsonschema:"apply_edits, patch_section or write_note"`
	Arguments map[string]any `json:"arguments" jsonschema:"the tool's arguments, as its input schema takes them"`
	Reason    string         `json:"reason" jsonschema:"the finding it fixes, in words"`
	Rule      string         `json:"rule,omitempty" jsonschema:"the lint rule or semantic kind it addresses"`
	// Outcome, when the plan was applied: applied, proposed, or the
	// error kind of the call.
	Outcome string `json:"outcome,omitempty" jsonschema:"with apply: applied, proposed (a proposal was queued), or the error kind the call returned"`
	Detail  string `json:"detail,omitempty" jsonschema:"with apply: the written path's new content_hash, the proposal id, or the error's message"`
}

// MaintainBudget is what the pass spent or was allowed.
type MaintainBudget struct {
	Findings     int `json:"findings" jsonschema:"findings shown to the model"`
	FindingsAll  int `json:"findings_all" jsonschema:"findings there were in scope"`
	Notes        int `json:"notes" jsonschema:"note excerpts shown to the model"`
	PromptBytes  int `json:"prompt_bytes"`
	MaxTokens    int `json:"max_tokens" jsonschema:"the cap on the model's reply"`
	ApproxTokens int `json:"approx_tokens" jsonschema:"prompt and reply tokens, estimated at 4 bytes a token"`
	LLMCalls     int `json:"llm_calls"`
}

// WikiMaintainOut is wiki_maintain's result.
type WikiMaintainOut struct {
	Coverage
	Edits   []PlannedEdit  `json:"edits"`
	Dropped int            `json:"dropped" jsonschema:"edits the model proposed that were not valid (unknown tool, missing or write-once path, outside path_prefix) and were left out"`
	Applied bool           `json:"applied" jsonschema:"true when apply was asked and each edit was called (see each outcome)"`
	Budget  MaintainBudget `json:"budget"`
	Model   string         `json:"model"`
}

const (
	maintainExcerpt = 4 << 10
	maxPlannedEdits = 30
)

// WikiMaintain plans a maintenance pass; it writes nothing.
func (s *Core) WikiMaintain(ctx context.Context, in WikiMaintainIn) (*WikiMaintainOut, error) {
	v, cat, err := s.open(ctx, in.VaultArg)
	if err != nil {
		return nil, err
	}
	if v.LLM == nil {
		return nil, llmNotConfigured("wiki_maintain")
	}
	in.MaxFindings = cmpOr(in.MaxFindings, 20)
	in.MaxNotes = cmpOr(in.MaxNotes, 8)
	in.MaxTokens = cmpOr(in.MaxTokens, 3000)
	out := &WikiMaintainOut{Edits: []PlannedEdit{}, Model: v.LLM.Model(), Budget: MaintainBudget{MaxTokens: in.MaxTokens}}

	type finding struct{ Rule, Path, Message, Suggestion string }
	var all []finding
	for _, f := range lintAll(cat) {
		if strings.HasPrefix(f.Path, in.PathPrefix) {
			all = append(all, finding{f.Rule, f.Path, f.Message, f.Suggestion})
		}
	}
	if in.Semantic {
		sem, err := s.LintSemantic(ctx, LintSemanticIn{VaultArg: in.VaultArg, PathPrefix: in.PathPrefix, MaxNotes: 40})
		if err != nil {
			return nil, err
		}
		out.Budget.LLMCalls++
		for _, f := range sem.Findings {
			p := ""
			if len(f.Paths) > 0 {
				p = f.Paths[0]
			}
			all = append(all, finding{f.Kind, p, f.Message, f.Suggestion})
		}
	}
	out.Budget.FindingsAll = len(all)
	if len(all) == 0 {
		return out, nil
	}
	shown := all[:min(len(all), in.MaxFindings)]
	out.Budget.Findings = len(shown)

	nonce := newNonce()
	var doc strings.Builder
	doc.WriteString("Findings:\n")
	seen := map[string]bool{}
	var paths []string
	for i, f := range shown {
		fmt.Fprintf(&doc, "%d. [%s] %s: %s (suggested: %s)\n", i+1, f.Rule, jsonString(f.Path), f.Message, f.Suggestion)
		if f.Path != "" && !seen[f.Path] {
			seen[f.Path] = true
			paths = append(paths, f.Path)
		}
	}
	doc.WriteString("\nThe notes they name:\n\n")
	var excerpts []PageRef
	for _, p := range paths {
		if len(excerpts) >= in.MaxNotes {
			break
		}
		text, _, ok := noteExcerpt(ctx, v, p, maintainExcerpt)
		if !ok {
			continue
		}
		fmt.Fprintf(&doc, "<<<NOTE-%s path=%s>>>\n%s\n<<<END-%s>>>\n\n", nonce, jsonString(p), text, nonce)
		excerpts = append(excerpts, PageRef{Path: p})
	}
	out.Budget.Notes = len(excerpts)
	system := `You maintain a personal wiki of Markdown notes. For the findings below, propose concrete edits, at most 30, each one call of a write tool:
- apply_edits {"path": "<note>", "edits": [{"find": "<exact text in the note, unique>", "replace": "<new text>"}]}: fix a broken link, a wrong claim, a typo;
- patch_section {"path": "<note>", "heading_path": ["<heading>"], "operation": "append", "content": "<markdown>"}: add to a section;
- write_note {"path": "<new note>.md", "content": "<markdown>"} (mode create, a new page only) or {"path": "<note>", "mode": "append", "content": "<markdown>"}: a missing hub page, links that adopt an orphan.
Never edit notes under sources/ (write-once): link to them instead. Use [[wikilinks]]. Copy paths exactly. Give each edit a short reason and the rule it addresses.
` + dataRule + `
Reply with one JSON object and nothing else:
{"edits": [{"tool": "apply_edits|patch_section|write_note", "arguments": {...}, "reason": "<why>", "rule": "<rule>"}]}`
	user := doc.String()
	out.Budget.PromptBytes = len(system) + len(user)
	var reply struct {
		Edits []struct {
			Tool      string         `json:"tool"`
			Arguments map[string]any `json:"arguments"`
			Reason    string         `json:"reason"`
			Rule      string         `json:"rule"`
		} `json:"edits"`
	}
	raw, err := askJSON(ctx, v.LLM, []llm.Message{{Role: "system", Content: system}, {Role: "user", Content: user}}, in.MaxTokens, func(b []byte) error {
		reply.Edits = nil
		if err := json.Unmarshal(b, &reply); err != nil {
			return err
		}
		if reply.Edits == nil {
			return errors.New(`it has no "edits" array`)
		}
		return nil
	})
	out.Budget.LLMCalls++
	out.Budget.ApproxTokens = (out.Budget.PromptBytes + len(raw)) / 4
	if errors.Is(err, errBadReply) {
		return nil, newError(KindInternal, nil, "the model did not reply with the plan JSON, twice; try again or use another model")
	}
	if err != nil {
		return nil, llmError(err)
	}
	for _, e := range reply.Edits {
		pe, ok := v.validEdit(cat, in.PathPrefix, e.Tool, e.Arguments, e.Reason, e.Rule)
		if !ok || len(out.Edits) >= maxPlannedEdits {
			out.Dropped++
			continue
		}
		out.Edits = append(out.Edits, pe)
	}
	return out, nil
}

// validEdit checks one proposed edit: a known tool, a path argument that
// is a note of the vault (a new note for write_note's create), mutable,
// under prefix; the vault argument is set to this vault's.
func (v *Vault) validEdit(cat *vault.Catalog, prefix, tool string, args map[string]any, reason, rule string) (PlannedEdit, bool) {
	tool = strings.TrimSpace(tool)
	path, _ := args["path"].(string)
	if !slices.Contains(MaintainTools, tool) || path == "" || strings.TrimSpace(reason) == "" {
		return PlannedEdit{}, false
	}
	p, err := writablePath("path", path)
	if err != nil || !strings.HasPrefix(p, prefix) || v.immutablePrefix(p) != "" {
		return PlannedEdit{}, false
	}
	_, exists := cat.Note(p)
	mode, _ := args["mode"].(string)
	creates := tool == "write_note" && (mode == "" || mode == "create")
	if creates == exists {
		return PlannedEdit{}, false // a create over a note, or an edit of a missing one
	}
	if tool == "write_note" && mode == "overwrite" {
		return PlannedEdit{}, false // a plan never replaces a whole note
	}
	clean := make(map[string]any, len(args)+1)
	for k, a := range args {
		clean[k] = a
	}
	clean["path"] = p
	clean["vault"] = v.ID
	return PlannedEdit{Tool: tool, Arguments: clean, Reason: clipBytes(strings.TrimSpace(reason), 500), Rule: clipBytes(strings.TrimSpace(rule), 100)}, true
}

func cmpOr(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}
