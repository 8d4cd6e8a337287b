package tools

import (
	"encoding/json"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/sheaf-dev/sheaf/shared/auth"
	"github.com/sheaf-dev/sheaf/shared/core"
	"github.com/sheaf-dev/sheaf/shared/vault"
)

// What a tool's Spec declares of access: the scope it needs, the arguments
// that name paths, whether it writes. The guard (access.go) enforces it.

// argKind is what a path argument names.
type argKind int

const (
	argNote   argKind = iota // a note or file ("Projects/Plan.md"; ".md" may be omitted)
	argFolder                // a folder to list under ("" is the root)
	argScope                 // a note, or a folder of notes
	argChunk                 // a chunk id, "<path>#p<ordinal>"
)

// pathArg is one argument that names a path.
type pathArg struct {
	name string
	kind argKind
}

// proposeRule says what a propose-only caller's call of a write tool does.
type proposeRule int

const (
	proposeQueue  proposeRule = iota // becomes a proposal (a deferred call of the tool)
	proposeRefuse                    // unsupported: a folder operation a proposal cannot express
)

// access is what one tool needs and touches.
type access struct {
	scope auth.Scope
	paths []pathArg
	// writes: the tool changes notes. Propose-only callers' calls then
	// follow propose; folder-scoped callers need a gated path argument.
	writes  bool
	propose proposeRule
	// whole: the tool works on the whole vault with no path to gate on
	// (e.g. reindexing): forbidden to folder-scoped callers.
	whole bool
	// own: the tool writes only Sheaf's own objects (.sheaf/), such as
	// feedback records, which is not writing the vault.
	own bool
	// reviews: the tool decides over proposals, which needs a caller that
	// may write directly (not propose-only). Its writes are the proposed
	// tool's, gated when it runs.
	reviews bool
}

func reads(paths ...pathArg) access { return access{scope: auth.ScopeRead, paths: paths} }

func note(name string) pathArg { return pathArg{name, argNote} }

func folder(name string) pathArg { return pathArg{name, argFolder} }

// edits is a write tool gated on its path arguments.
func edits(rule proposeRule, paths ...pathArg) access {
	return access{scope: auth.ScopeWrite, paths: paths, writes: true, propose: rule}
}

// gatePath checks one path argument's value. The always-denied folders
// (auth.AlwaysDenied: Sheaf's keys and proposals, the editor's settings, git,
// the trash) are folder-not-allowed to every folder-scoped caller, and
// path-invalid to a writer no folders limit (what is wrong is the path,
// not a credential); a whole-vault reader gets what the read tools say of
// hidden folders (they are not part of the vault: note-not-found).
func gatePath(id auth.Identity, p pathArg, raw string, writes bool) *Error {
	var path string
	var err error
	switch p.kind {
	case argFolder:
		path, err = cleanDirArg(p.name, raw)
	case argChunk:
		i := strings.LastIndex(raw, "#p")
		if i <= 0 {
			return nil // malformed: the handler says how
		}
		path, err = cleanArg(p.name, raw[:i])
	default:
		path, err = cleanArg(p.name, raw)
	}
	if err != nil {
		return toError(err)
	}
	if auth.Denied(path) && (writes || id.Scoped()) {
		if !id.Scoped() {
			return core.HiddenPath(p.name, path) // no credential limits this caller: say what is wrong
		}
		return core.FolderNotAllowed(path)
	}
	if !id.Scoped() {
		return nil
	}
	f := id.Folders
	ok := false
	switch p.kind {
	case argFolder:
		ok = f.Reaches(path)
	case argScope:
		ok = f.Allows(path) || f.Reaches(path)
	default:
		ok = f.Allows(path) && (vault.IsNotePath(path) || strings.Contains(lastSegment(path), ".") || f.Allows(path+".md"))
	}
	if !ok {
		return core.FolderNotAllowed(path)
	}
	return nil
}

func lastSegment(p string) string { return p[strings.LastIndexByte(p, '/')+1:] }

// rawArgs is a call's arguments as JSON values, for the checks.
type rawArgs map[string]any

func argsOf(req mcp.CallToolRequest) rawArgs {
	var m map[string]any
	if raw := []byte(req.Params.RawArguments); len(raw) > 0 {
		_ = json.Unmarshal(raw, &m)
	}
	if m == nil {
		if a, ok := req.Params.Arguments.(map[string]any); ok {
			m = a
		}
	}
	return m
}

// strings returns the argument's string values: one string, or the strings
// of an array; other shapes fail the tool's own validation.
func (a rawArgs) strings(name string) []string {
	switch v := a[name].(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, x := range v {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}
