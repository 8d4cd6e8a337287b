package core

// The write tools' shared machinery: the checks every target path passes,
// compare-and-swap reads and writes, the ledger line and read-your-writes.
//
// Every write is compare-and-swap twice over: the caller's expected_hash
// (read_note's content_hash) is compared with the note as read, and the
// store write is conditional on the ETag of that read (If-Match, or
// If-None-Match to create), so a write that lands between our read and our
// write fails ours instead of being overwritten. A mismatch is the
// proposal-stale kind (the spec's "the target drifted: re-read, re-issue")
// with current_hash.

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"time"

	"golang.org/x/text/unicode/norm"

	"github.com/sheaf-dev/sheaf/shared/history"
	"github.com/sheaf-dev/sheaf/shared/internal/provider"
	"github.com/sheaf-dev/sheaf/shared/store"
	"github.com/sheaf-dev/sheaf/shared/vault"
)

// WriteIndex says whether this server's indexes show a write yet.
type WriteIndex struct {
	State string `json:"state" jsonschema:"current: this server's search, lists, backlinks and outline already show the write; pending: they will shortly (note says why)"`
	Note  string `json:"note,omitempty"`
}

// casRetries bounds the re-reads of a write whose store condition failed
// because someone else wrote in between (a write without expected_hash
// simply redoes its change on the new text). 8 lost 1 to 5 of 30 appends
// made at once by three clients; each retry waits a little longer.
const casRetries = 16

// AsError is the tool error err stands for, as a tool call would report
// it (for callers outside MCP, such as the CLI).
func AsError(err error) *Error { return toError(err) }

// current is a note as read for a write.
type current struct {
	path string
	data []byte
	obj  store.Object
	hash string
}

// readForWrite reads the note at path (clean, a note path) for a write.
func (v *Vault) readForWrite(ctx context.Context, path string) (*current, error) {
	data, obj, err := v.getNote(ctx, path, v.maxNote(), "edits at once")
	if err != nil {
		return nil, err
	}
	if errors.Is(vault.Check(data), vault.ErrBinary) {
		return nil, newError(KindNotMarkdown, map[string]any{"argument": "path"},
			"%s has binary content, not Markdown text: Sheaf does not edit it.", path)
	}
	return &current{path: obj.Path, data: data, obj: obj, hash: hashOf(data)}, nil
}

// binaryText refuses to write text that would make the note binary to
// Sheaf (a NUL byte, many control characters, a binary file's header:
// vault.Check): no tool could then read, edit or delete it.
func binaryText(path string, data []byte) error {
	if errors.Is(vault.Check(data), vault.ErrBinary) {
		return newError(KindArgsInvalid, map[string]any{"argument": "content", "reason": "binary"},
			"The new text of %s would read as a binary file, not a note (a NUL byte, many control characters, or a start like a PDF's or an image's header): nothing was written. Remove them (tabs and line breaks are fine).", path)
	}
	return nil
}

// staleError is the compare-and-swap mismatch: the note is not the version
// the caller (or this call) read.
func staleError(path, expected, cur string) *Error {
	f := map[string]any{"argument": "expected_hash", "reason": "hash-mismatch", "current_hash": cur}
	if expected != "" {
		f["expected_hash"] = expected
	}
	if cur == "" {
		return newError(KindProposalStale, f, "%s was deleted since you read it: nothing was written.", path)
	}
	return newError(KindProposalStale, f,
		"%s changed since you read it (content_hash is now %s): nothing was written. Read it again, redo your change on the new text and send the new content_hash.", path, cur)
}

// busyError is a write without expected_hash that Sheaf redid on each new
// text casRetries+1 times while others kept writing first.
func busyError(path string) *Error {
	return newError(KindProposalStale, map[string]any{"reason": "busy"},
		"%s kept changing under other writers: Sheaf redid your change %d times and someone wrote first each time. Nothing was written: send the call again in a moment.", path, casRetries+1)
}

// checkExpected compares the caller's expected_hash with the note as read.
func checkExpected(c *current, expected string) error {
	if expected != "" && !strings.EqualFold(strings.TrimSpace(expected), c.hash) {
		return staleError(c.path, expected, c.hash)
	}
	return nil
}

// currentHash is the content_hash of the note at path now ("" when gone).
func (v *Vault) currentHash(ctx context.Context, path string) string {
	data, _, err := v.Store.Get(ctx, path, v.maxNote())
	if err != nil {
		return ""
	}
	return hashOf(data)
}

// putIfMatch writes data over the version c as op, or reports that c is
// stale; the version is recorded in the vault's history.
func (v *Vault) putIfMatch(ctx context.Context, c *current, data []byte, op history.Op) (store.Object, error) {
	obj, _, err := v.putVersion(ctx, c, v.change(ctx, c.path, op, data, c))
	return obj, err
}

// putVersion writes ch (its Data) over the version c, or reports that c is
// stale, and returns the version recorded (zero without history).
func (v *Vault) putVersion(ctx context.Context, c *current, ch history.Change) (store.Object, history.Version, error) {
	obj, ver, err := v.putNote(ctx, ch, c)
	if errors.Is(err, store.ErrConflict) {
		return obj, ver, errStale
	}
	return obj, ver, err
}

// errStale is a store condition that failed: someone wrote first.
var errStale = errors.New("the note changed during the write")

// mutate is the read-modify-write loop of every edit: read the note, check
// expected (first read only: after a conflict the caller's hash is stale by
// definition), compute the new text, write it conditionally; on a
// conflict, with no expected hash, redo the change on the new text.
func (v *Vault) mutate(ctx context.Context, path, expected string, op history.Op, change func(c *current) ([]byte, error)) (before *current, after store.Object, data []byte, err error) {
	for attempt := 0; ; attempt++ {
		c, err := v.readForWrite(ctx, path)
		if err != nil {
			return nil, store.Object{}, nil, err
		}
		if err := checkExpected(c, expected); err != nil {
			return nil, store.Object{}, nil, err
		}
		next, err := change(c)
		if err != nil {
			return nil, store.Object{}, nil, err
		}
		obj, err := v.putIfMatch(ctx, c, next, op)
		switch {
		case err == nil:
			return c, obj, next, nil
		case !errors.Is(err, errStale):
			return nil, store.Object{}, nil, err
		case expected != "":
			return nil, store.Object{}, nil, staleError(c.path, expected, v.currentHash(ctx, c.path))
		case attempt == casRetries:
			return nil, store.Object{}, nil, busyError(c.path)
		}
		if err := jitter(ctx, attempt); err != nil {
			return nil, store.Object{}, nil, err
		}
	}
}

// jitter sleeps a little before retry attempt+1, so racing writers spread.
func jitter(ctx context.Context, attempt int) error {
	return provider.Sleep(ctx, time.Duration(1+rand.IntN(4<<min(attempt, 5)))*time.Millisecond)
}

// writablePath checks a path a write creates: vault-relative, outside the
// hidden folders (.obsidian, .sheaf, .trash), and a Markdown note.
func writablePath(arg, raw string) (string, error) {
	p, err := cleanArg(arg, raw)
	if err != nil {
		return "", err
	}
	if vault.IsHidden(p) {
		return "", hiddenPath(arg, p)
	}
	if !vault.IsNotePath(p) {
		return "", newError(KindNotMarkdown, map[string]any{"argument": arg},
			"The %s %q is not a Markdown note: write tools write notes, whose paths end in .md.", arg, p)
	}
	return p, nil
}

// immutablePrefix returns the write-once prefix path is under, or "".
// Prefixes are folders ("sources" and "sources/" alike) compared without
// regard to case, as a case-insensitive file system would.
func (v *Vault) immutablePrefix(path string) string {
	lp := strings.ToLower(norm.NFC.String(path))
	for _, pre := range v.ImmutablePaths {
		pre = strings.TrimLeft(strings.TrimSpace(pre), "/")
		if pre == "" {
			continue
		}
		dir := strings.ToLower(norm.NFC.String(strings.TrimSuffix(pre, "/"))) + "/"
		if strings.HasPrefix(lp, dir) || lp == strings.TrimSuffix(dir, "/") {
			return strings.TrimSuffix(pre, "/") + "/"
		}
	}
	return ""
}

// mustBeMutable refuses to change a note under a write-once prefix.
func (v *Vault) mustBeMutable(arg, path, what string) error {
	if pre := v.immutablePrefix(path); pre != "" {
		return newError(KindImmutablePath, map[string]any{"argument": arg, "prefix": pre},
			"%s is under %s, which is write-once on this vault: notes there are created, never %s. Create a new note instead (write_note with mode create, or file_page).", path, pre, what)
	}
	return nil
}

// tooBig refuses content over the server's note size limit.
func (v *Vault) tooBig(arg string, n int) error {
	if int64(n) > v.maxNote() {
		return newError(KindUnsupported, map[string]any{"argument": arg, "max_bytes": v.maxNote()},
			"The %s is %d bytes, over the %d bytes of a note on this server.", arg, n, v.maxNote())
	}
	return nil
}

// ledgerPath is the vault's activity ledger, "" when off.
func (v *Vault) ledgerPath() string {
	switch v.Ledger {
	case "":
		return "log.md"
	case "off", "-":
		return ""
	}
	return v.Ledger
}

// ledger appends "- YYYY-MM-DD op: title" to the vault's log.md (creating
// it), retrying on conflicts; it reports whether the line landed. A write
// of log.md itself is not logged in it.
func (s *Core) ledger(ctx context.Context, v *Vault, op, title string, changed []string) (string, bool) {
	lp := v.ledgerPath()
	if lp == "" {
		return "", false
	}
	for _, p := range changed {
		if strings.EqualFold(p, lp) {
			return "", false
		}
	}
	e := vault.LedgerEntry{Date: s.now().UTC().Format(time.DateOnly), Op: op, Title: title}
	for attempt := range casRetries + 8 {
		data, obj, err := v.Store.Get(ctx, lp, v.maxNote())
		opts := store.PutOptions{IfMatch: obj.ETag}
		switch {
		case errors.Is(err, store.ErrNotFound):
			data, opts = nil, store.PutOptions{IfNoneMatch: true}
		case err != nil:
			return lp, false
		}
		if _, err = v.Store.Put(ctx, lp, vault.AppendLedger(data, e), opts); err == nil {
			return lp, true
		}
		if !errors.Is(err, store.ErrConflict) || jitter(ctx, attempt) != nil {
			return lp, false
		}
	}
	return lp, false
}

// written finishes a write: the ledger line, then read-your-writes for
// every changed path (and the ledger). It never fails the write, which has
// landed: what did not happen is said in the result.
func (s *Core) written(ctx context.Context, v *Vault, op, title string, changed ...string) (WriteIndex, *string) {
	lp, logged := s.ledger(ctx, v, op, title, changed)
	paths := changed
	if logged {
		paths = append(append([]string{}, changed...), lp)
	}
	var ledger *string
	if logged {
		ledger = &lp
	}
	if v.Reindex == nil {
		return WriteIndex{State: "pending", Note: "this server indexes the vault from its change events: search, lists and backlinks show the write within seconds"}, ledger
	}
	if err := v.Reindex.Reindex(ctx, paths...); err != nil {
		return WriteIndex{State: "pending", Note: "not indexed yet: " + err.Error()}, ledger
	}
	wi := WriteIndex{State: "current"}
	if v.Lagging != nil {
		wi.Note = "other servers of this vault show it once the indexer has processed the change (usually seconds)"
	}
	return wi, ledger
}

// noteResult is what every write tool returns about the note it wrote.
type noteResult struct {
	Coverage
	Path         string     `json:"path"`
	ContentHash  string     `json:"content_hash" jsonschema:"hex SHA-256 of the note as written: pass it as expected_hash to the next write"`
	PreviousHash string     `json:"previous_hash,omitempty" jsonschema:"the content_hash the write replaced"`
	Size         int64      `json:"size"`
	Index        WriteIndex `json:"index"`
	Ledger       *string    `json:"ledger,omitempty" jsonschema:"the activity ledger the write was logged in (log.md)"`
}

func (s *Core) noteResult(ctx context.Context, v *Vault, op, title string, path string, prev *current, data []byte) noteResult {
	idx, ledger := s.written(ctx, v, op, title, path)
	r := noteResult{Path: path, ContentHash: hashOf(data), Size: int64(len(data)), Index: idx, Ledger: ledger}
	if prev != nil {
		r.PreviousHash = prev.hash
	}
	return r
}

// matchError maps an editor's *vault.MatchError to its kind:
// target-not-found when nothing matched, edit-not-unique with matches and
// candidates when several did.
func matchError(arg string, err error) error {
	var me *vault.MatchError
	var ee *vault.EditError
	switch {
	case errors.As(err, &ee):
		return newError(KindEditNotUnique, map[string]any{"argument": "edits", "edit": ee.Index, "matches": ee.Matches},
			"Edit %d's find matches %d times in the note, not exactly once: nothing was changed. Re-read the note and make the find longer (or exact) so it matches once.", ee.Index, ee.Matches)
	case errors.As(err, &me) && me.Matches == 0:
		f := map[string]any{"argument": arg}
		if len(me.Candidates) > 0 {
			f["candidates"] = me.Candidates
		}
		return newError(KindTargetNotFound, f, "The %s: nothing was written and nothing created.", strings.TrimSuffix(me.Error(), "."))
	case errors.As(err, &me):
		return newError(KindEditNotUnique, map[string]any{"argument": arg, "matches": me.Matches, "candidates": me.Candidates},
			"The %s: nothing was written.", me.Error())
	case errors.Is(err, vault.ErrBadEdit):
		return newError(KindArgsInvalid, map[string]any{"argument": arg}, "%s: nothing was written.", strings.TrimPrefix(err.Error(), vault.ErrBadEdit.Error()+": "))
	}
	return err
}
