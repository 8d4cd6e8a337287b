package core

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/sheaf-dev/sheaf/shared/history"
	"github.com/sheaf-dev/sheaf/shared/store"
	"github.com/sheaf-dev/sheaf/shared/vault"
)

type WriteNoteIn struct {
	VaultArg
	TxArg
	ConflictArg
	Path           string `json:"path" jsonschema:"Vault-relative path of the note, ending in .md, e.g. \"Inbox/idea.md\"." schema:"minLength=1"`
	Content        string `json:"content" jsonschema:"The Markdown to write; for append, the text to add."`
	Mode           string `json:"mode,omitempty" jsonschema:"create (default): a new note; overwrite: replace the whole note (expected_hash required); append: add content at the end, on a new line." schema:"enum=create|overwrite|append,default=create"`
	ExpectedHash   string `json:"expected_hash,omitempty" jsonschema:"The content_hash read_note returned: the write happens only if the note is still that version, else proposal-stale with current_hash. Required for overwrite; optional for append." schema:"pattern=^[0-9a-fA-F]{64}$"`
	IdempotencyKey string `json:"idempotency_key,omitempty" jsonschema:"append only: a key of your choosing (a UUID, say). An append retried with the same path and key lands once; the retry returns the first call's result with replayed: true." schema:"minLength=1,maxLength=128"`
}

type writeNoteOut struct {
	noteResult
	MergeInfo
	Mode     string `json:"mode"`
	Created  bool   `json:"created"`
	Replayed bool   `json:"replayed,omitempty" jsonschema:"an append with this idempotency_key had already landed: nothing was written now"`
}

// WriteNote implements write_note.
func (s *Core) WriteNote(ctx context.Context, in WriteNoteIn) (*writeNoteOut, error) {
	ctx = withTx(ctx, in.TxArg)
	v, err := s.vault(ctx, in.VaultArg)
	if err != nil {
		return nil, err
	}
	defer v.writing()()
	path, err := writablePath("path", in.Path)
	if err != nil {
		return nil, err
	}
	if err := v.tooBig("content", len(in.Content)); err != nil {
		return nil, err
	}
	if in.Mode == "" {
		in.Mode = "create"
	}
	if in.OnConflict == "merge" && in.Mode != "overwrite" {
		return nil, newError(KindArgsInvalid, map[string]any{"argument": "on_conflict"},
			"on_conflict merge is for mode overwrite: create is once-only and append never conflicts.")
	}
	if in.IdempotencyKey != "" && in.Mode != "append" {
		return nil, newError(KindArgsInvalid, map[string]any{"argument": "idempotency_key"},
			"idempotency_key is for mode append: create is already once-only (note-exists) and overwrite is guarded by expected_hash.")
	}
	switch in.Mode {
	case "create":
		return s.createNote(ctx, v, path, []byte(in.Content))
	case "overwrite":
		if in.ExpectedHash == "" {
			return nil, newError(KindArgsInvalid, map[string]any{"argument": "expected_hash"},
				"overwrite needs expected_hash, the content_hash read_note gave you, so that a change made since is never lost. To add text, use mode append or apply_edits.")
		}
		if err := v.mustBeMutable("path", path, "overwritten"); err != nil {
			return nil, err
		}
		prev, data, mi, err := v.mutateOn(ctx, in.ConflictArg, path, in.ExpectedHash, history.OpOverwrite, func(*current) ([]byte, error) { return []byte(in.Content), nil })
		if err != nil {
			return nil, err
		}
		out := &writeNoteOut{noteResult: s.noteResult(ctx, v, "write", path+" (overwrite)", prev.path, prev, data), MergeInfo: mi, Mode: in.Mode}
		return out, nil
	default:
		if err := v.mustBeMutable("path", path, "appended to"); err != nil {
			return nil, err
		}
		if in.IdempotencyKey != "" {
			return s.appendOnce(ctx, v, path, in)
		}
		prev, _, data, err := v.mutate(ctx, path, in.ExpectedHash, history.OpAppend, func(c *current) ([]byte, error) {
			return appendText(c.data, in.Content), nil
		})
		if err != nil {
			return nil, err
		}
		return &writeNoteOut{noteResult: s.noteResult(ctx, v, "write", path+" (append)", prev.path, prev, data), Mode: in.Mode}, nil
	}
}

// createNote writes a new note, failing with note-exists if there is one.
func (s *Core) createNote(ctx context.Context, v *Vault, path string, data []byte) (*writeNoteOut, error) {
	if err := v.create(ctx, "path", path, data); err != nil {
		return nil, err
	}
	return &writeNoteOut{noteResult: s.noteResult(ctx, v, "write", path+" (create)", path, nil, data), Mode: "create", Created: true}, nil
}

// create puts a new note at path, failing with note-exists if one is there.
func (v *Vault) create(ctx context.Context, arg, path string, data []byte) error {
	// A new note's name is checked; a note already there is note-exists
	// (from createObj) whatever its name, so the store is asked only when
	// the name is refused.
	nameErr := linkableName(arg, path)
	if nameErr == nil {
		nameErr = v.caseTwin(arg, path, "")
	}
	if nameErr != nil {
		if _, err := v.Store.Stat(ctx, path); errors.Is(err, store.ErrNotFound) {
			return nameErr
		}
	}
	_, err := v.createObj(ctx, arg, v.change(ctx, path, history.OpWrite, data, nil))
	return err
}

// linkableName refuses a note name a [[wikilink]] cannot spell: one with
// [ ] | # or ^ (Obsidian refuses them in names too).
func linkableName(arg, path string) error {
	if name := vault.NameOf(path); strings.ContainsAny(name, "[]|#^") {
		return newError(KindArgsInvalid, map[string]any{"argument": arg},
			"The name %q holds one of [ ] | # ^, which a [[wikilink]] cannot spell: choose a name without them.", name)
	}
	return nil
}

// caseTwin refuses a new note at path when another note's path differs
// from it only in case (other than self, a note being renamed): links
// resolve without case and could not tell the two apart, and on a macOS
// or Windows disk they are one file. It asks the catalog only where it is
// held in memory (the local door): a stateless handler would load it for
// every create. A twin outside the caller's folders is not named.
func (v *Vault) caseTwin(arg, path, self string) error {
	cat := residentCatalog(v.Catalogs)
	if cat == nil {
		return nil
	}
	n, ok := cat.Note(path)
	switch {
	case !ok || n.Path == path || n.Path == self:
		return nil
	case !v.allows(n.Path):
		return newError(KindNoteExists, map[string]any{"argument": arg},
			"%s differs from another note's path only in case: links, which ignore case, could not tell them apart. Nothing was written: choose another name.", path)
	}
	return newError(KindNoteExists, map[string]any{"argument": arg, "existing": n.Path},
		"%s differs from the note %s only in case: links, which ignore case, could not tell them apart (and on macOS or Windows they are one file). Nothing was written: write to %s, or choose another name.", path, n.Path, n.Path)
}

// createObj creates the note c describes (its Path, Data and Op), failing
// with note-exists if one is there, and records the version.
func (v *Vault) createObj(ctx context.Context, arg string, c history.Change) (store.Object, error) {
	unlock := v.lockPaths(c.Path)
	defer unlock()
	obj, err := v.createUnrecorded(ctx, arg, c)
	if err == nil {
		c.Object = obj
		v.record(ctx, c)
	}
	return obj, err
}

// createUnrecorded creates the note c describes, with its attribution as
// metadata, and leaves recording the version to the caller (who holds the
// path's lock).
func (v *Vault) createUnrecorded(ctx context.Context, arg string, c history.Change) (store.Object, error) {
	if err := binaryText(c.Path, c.Data); err != nil {
		return store.Object{}, err
	}
	path := c.Path
	opts := store.PutOptions{IfNoneMatch: true}
	if v.History != nil {
		opts.Meta = history.Metadata(c)
	}
	obj, err := v.Store.Put(ctx, path, c.Data, opts)
	if !errors.Is(err, store.ErrConflict) {
		return obj, err
	}
	cur, serr := v.Store.Stat(ctx, path)
	if serr != nil {
		return obj, newError(KindPathInvalid, map[string]any{"argument": arg, "reason": "in-the-way"},
			"%s cannot be created: a folder (or a file where a folder should be) is in the way.", path)
	}
	return obj, newError(KindNoteExists, map[string]any{"argument": arg, "current_hash": v.currentHash(ctx, cur.Path)},
		"%s already exists: nothing was written. To change it, read it and use overwrite with its content_hash, append, apply_edits or patch_section.", cur.Path)
}

// appendText adds text to a note's end, on a line of its own, in the
// note's line endings.
func appendText(note []byte, text string) []byte {
	eol := "\n"
	if bytes.Count(note, []byte("\r\n")) > 0 && bytes.Count(note, []byte("\r\n"))*2 >= bytes.Count(note, []byte("\n")) {
		eol = "\r\n"
		text = strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\n", eol)
	}
	out := bytes.Clone(note)
	if len(out) > 0 && !bytes.HasSuffix(out, []byte("\n")) && text != "" {
		out = append(out, eol...)
	}
	return append(out, text...)
}

// appendRecord remembers an idempotent append, at
// .sheaf/appends/<sha256(path, key)>.json. State pending is written before
// the note, with what the append is about to write; done after.
type appendRecord struct {
	Path     string `json:"path"`
	State    string `json:"state"` // pending | done
	Base     string `json:"base_hash"`
	BaseETag string `json:"base_etag,omitempty"` // the version the write is conditioned on
	New      string `json:"new_hash"`
	NewSize  int    `json:"new_size"`
	// The seam is where the appended text meets the note: the note's last
	// bytes before it (up to seamTail), then the text as written. Found in
	// the note, it shows the append landed, wherever edits since have
	// moved it. SeamHead is its first bytes, to find candidates.
	SeamHead []byte `json:"seam_head,omitempty"`
	SeamLen  int    `json:"seam_len,omitempty"`
	SeamHash string `json:"seam_hash,omitempty"`
	// The block is the appended text alone, as written; BaseCount is how
	// often the note held it before. More of them now shows the append
	// landed even when edits since touched the bytes before it.
	BlockHead []byte    `json:"block_head,omitempty"`
	BlockLen  int       `json:"block_len,omitempty"`
	BlockHash string    `json:"block_hash,omitempty"`
	BaseCount int       `json:"base_count,omitempty"`
	At        time.Time `json:"at"`
}

const (
	appendDir     = ".sheaf/appends"
	appendTTL     = 24 * time.Hour   // how long a key is remembered
	appendPending = 30 * time.Second // a pending record older than this is a crashed call's
	seamTail      = 64               // bytes of the note before the appended text in its seam
)

func appendKeyPath(path, key string) string {
	return appendDir + "/" + hashOf([]byte(path+"\x00"+key)) + ".json"
}

// newAppendClaim is the pending record of appending to c, giving next.
func newAppendClaim(c *current, next []byte) *appendRecord {
	seam := next[max(0, len(c.data)-seamTail):]
	block := next[len(c.data):]
	rec := &appendRecord{Path: c.path, State: "pending", Base: c.hash, BaseETag: c.obj.ETag, New: hashOf(next), NewSize: len(next),
		SeamHead: bytes.Clone(seam[:min(len(seam), 2*seamTail)]), SeamLen: len(seam), SeamHash: hashOf(seam),
		BlockHead: bytes.Clone(block[:min(len(block), seamTail)]), BlockLen: len(block), BlockHash: hashOf(block), At: time.Now().UTC()}
	rec.BaseCount = occurrences(c.data, rec.BlockHead, rec.BlockLen, rec.BlockHash)
	return rec
}

// landing is what a note tells of an append recorded as pending.
type landing int

const (
	notLanded landing = iota // and it cannot land any more: the version it was conditioned on is gone
	mayLand                  // not yet: the note is still the version its write is conditioned on
	landed
)

// landingOf reads the note c (nil: gone) for the append rec records:
// landed when the note is its result, holds its seam (edits since moved
// it, or added to the note) or holds its text more often than before;
// mayLand while the note is still the version the append was conditioned
// on; else notLanded. Only an edit of the appended text itself (with one
// of the bytes before it, or with an earlier copy of the text removed)
// makes a landed append look notLanded.
func landingOf(rec *appendRecord, c *current) landing {
	switch {
	case rec.State == "done":
		return landed
	case c == nil:
		return notLanded // gone: a retry answers note-not-found
	case c.hash == rec.New:
		return landed
	case rec.BaseETag != "" && c.obj.ETag == rec.BaseETag:
		return mayLand
	case rec.SeamHash != "" && occurrences(c.data, rec.SeamHead, rec.SeamLen, rec.SeamHash) > 0:
		return landed
	case rec.BlockHash != "" && rec.BlockLen > 0 && occurrences(c.data, rec.BlockHead, rec.BlockLen, rec.BlockHash) > rec.BaseCount:
		return landed
	case rec.SeamHash == "" && len(c.data) >= rec.NewSize && hashOf(c.data[:rec.NewSize]) == rec.New:
		return landed // a record of an earlier version: only the prefix tells
	}
	return notLanded
}

// occurrences counts the places data holds the n bytes of hash hash that
// start with head (overlapping ones included).
func occurrences(data, head []byte, n int, hash string) int {
	if len(head) == 0 || n <= 0 {
		return 0
	}
	count := 0
	for off := 0; ; {
		i := bytes.Index(data[off:], head)
		if i < 0 {
			return count
		}
		at := off + i
		if at+n <= len(data) && hashOf(data[at:at+n]) == hash {
			count++
		}
		off = at + 1
	}
}

// appendOnce appends with an idempotency key: a record of the key is
// claimed before the note is written and marked done after, so that a
// retry of a call that landed replays its result, and a retry of one that
// did not (or a call racing its twin) appends at most once. A retry after
// a crash between the append and its record finds out from the note
// itself (see landingOf) whether the append landed, whatever was written
// to the note since. A claim whose append may still land (the note is
// still the version it was conditioned on) is taken over at once: this
// call's write is conditioned on that same version, so exactly one of the
// two lands, and this call then replays the other's. Only a claim younger
// than appendPending that shows no sign of its append makes a retry wait
// (target-is-being-edited with the claim's remaining time): its call may
// be alive and about to record its result.
func (s *Core) appendOnce(ctx context.Context, v *Vault, path string, in WriteNoteIn) (*writeNoteOut, error) {
	rp := appendKeyPath(path, in.IdempotencyKey)
	mine := ""                 // the ETag of the claim this call wrote, once it has
	var others []*appendRecord // claims of other calls with this key that this call saw
	replay := func(rec *appendRecord, tag string) *writeNoteOut {
		if rec.State != "done" && tag != "" {
			done := *rec
			done.State = "done"
			_, _ = putAppendRecord(ctx, v.Store, rp, &done, tag)
		}
		return &writeNoteOut{noteResult: noteResult{Path: path, ContentHash: rec.New, PreviousHash: rec.Base, Size: int64(rec.NewSize),
			Index: WriteIndex{State: "current"}}, Mode: "append", Replayed: true}
	}
	for attempt := 0; attempt <= casRetries; attempt++ {
		rec, recTag, err := readAppendRecord(ctx, v.Store, rp)
		if err != nil {
			return nil, err
		}
		current := rec != nil && rec.Path == path && time.Since(rec.At) < appendTTL && (mine == "" || recTag != mine)
		if current {
			if rec.State == "done" {
				return replay(rec, ""), nil
			}
			if !slices.ContainsFunc(others, func(o *appendRecord) bool { return o.At.Equal(rec.At) && o.New == rec.New }) {
				others = append(others, rec)
			}
		}
		c, err := v.readForWrite(ctx, path)
		if err != nil {
			return nil, err
		}
		for _, o := range others {
			tag := mine // the record is this call's claim over o: it becomes o's result
			if current && o == rec {
				tag = recTag
			}
			switch landingOf(o, c) {
			case landed:
				return replay(o, tag), nil
			case notLanded:
				if left := appendPending - time.Since(o.At); current && o == rec && left > 0 {
					return nil, newError(KindTargetIsBeingEdited, map[string]any{"retry_after_ms": max(left.Milliseconds(), 1), "since": o.At.Format(time.RFC3339)},
						"An append to %s with this idempotency_key is in progress: retry in %d ms to get its result.", path, max(left.Milliseconds(), 1))
				}
			}
		}
		if err := checkExpected(c, in.ExpectedHash); err != nil {
			return nil, err
		}
		next := appendText(c.data, in.Content)
		claim := newAppendClaim(c, next)
		cobj, err := putAppendRecord(ctx, v.Store, rp, claim, recTag)
		if errors.Is(err, store.ErrConflict) {
			mine = ""
			continue // a twin claimed it: look again
		}
		if err != nil {
			return nil, err
		}
		mine = cobj.ETag
		if rand.IntN(64) == 0 {
			go pruneAppendRecords(context.WithoutCancel(ctx), v.Store)
		}
		_, err = v.putIfMatch(ctx, c, next, history.OpAppend)
		if errors.Is(err, errStale) {
			if in.ExpectedHash != "" {
				_ = v.Store.Delete(ctx, rp, mine)
				return nil, staleError(path, in.ExpectedHash, v.currentHash(ctx, path))
			}
			// Someone wrote first (perhaps a call whose claim this one took
			// over: the next look tells): redo the append on the new text.
			if err := jitter(ctx, attempt); err != nil {
				return nil, err
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		appendLandedHook()
		claim.State = "done"
		_, _ = putAppendRecord(ctx, v.Store, rp, claim, mine)
		return &writeNoteOut{noteResult: s.noteResult(ctx, v, "write", path+" (append)", path, c, next), Mode: "append"}, nil
	}
	return nil, staleError(path, in.ExpectedHash, v.currentHash(ctx, path))
}

// appendLandedHook runs between an idempotent append's note write and its
// record: tests stop the call there, as a crash would.
var appendLandedHook = func() {}

// SetAppendLandedHook makes f run between every idempotent append's note
// write and its record, for crash tests of a whole process (sheaf serve
// under SHEAF_TEST_HANG_AFTER_APPEND). Not for use otherwise.
func SetAppendLandedHook(f func()) { appendLandedHook = f }

func readAppendRecord(ctx context.Context, st store.Store, p string) (*appendRecord, string, error) {
	data, obj, err := st.Get(ctx, p, 1<<16)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, "", nil
	case err != nil:
		return nil, "", err
	}
	var rec appendRecord
	if json.Unmarshal(data, &rec) != nil {
		return nil, obj.ETag, nil // damaged: overwrite it
	}
	return &rec, obj.ETag, nil
}

// putAppendRecord writes rec over the version etag ("" creates it).
func putAppendRecord(ctx context.Context, st store.Store, p string, rec *appendRecord, etag string) (store.Object, error) {
	data, _ := json.Marshal(rec)
	return st.Put(ctx, p, data, store.PutOptions{IfMatch: etag, IfNoneMatch: etag == ""})
}

// pruneAppendRecords deletes idempotency records past their TTL.
func pruneAppendRecords(ctx context.Context, st store.Store) {
	var old []store.Object
	_ = st.List(ctx, appendDir, func(o store.Object) error {
		if !o.Modified.IsZero() && time.Since(o.Modified) > appendTTL {
			old = append(old, o)
		}
		return nil
	})
	for _, o := range old {
		_ = st.Delete(ctx, o.Path, o.ETag)
	}
}

type editsIn struct {
	VaultArg
	TxArg
	ConflictArg
	Path         string       `json:"path" jsonschema:"Vault-relative path of the note." schema:"minLength=1"`
	Edits        []vault.Edit `json:"edits" jsonschema:"Find-and-replace edits, applied in order; each find must occur exactly once in the text the edits before it left." schema:"minItems=1,maxItems=200"`
	ExpectedHash string       `json:"expected_hash,omitempty" jsonschema:"The content_hash read_note returned: fail with proposal-stale if the note changed at all since." schema:"pattern=^[0-9a-fA-F]{64}$"`
}

type editsOut struct {
	noteResult
	MergeInfo
	Applied int `json:"applied" jsonschema:"edits applied (all of them)"`
}

// noteToEdit opens the vault for an edit of the note at raw (argument
// "path"): the writes lock held until release, the note there and mutable.
func (s *Core) noteToEdit(ctx context.Context, va VaultArg, raw string) (v *Vault, path string, release func(), err error) {
	if v, err = s.vault(ctx, va); err != nil {
		return nil, "", nil, err
	}
	release = v.writing()
	if path, err = notePath(ctx, v, "path", raw); err == nil {
		err = v.mustBeMutable("path", path, "edited")
	}
	if err != nil {
		release()
		return nil, "", nil, err
	}
	return v, path, release, nil
}

// ApplyEdits implements apply_edits.
func (s *Core) ApplyEdits(ctx context.Context, in editsIn) (*editsOut, error) {
	ctx = withTx(ctx, in.TxArg)
	v, path, release, err := s.noteToEdit(ctx, in.VaultArg, in.Path)
	if err != nil {
		return nil, err
	}
	defer release()
	if len(in.Edits) == 0 {
		return nil, newError(KindArgsInvalid, map[string]any{"argument": "edits"}, "edits is empty: give at least one {find, replace}.")
	}
	for i, e := range in.Edits {
		if e.Find == "" {
			return nil, newError(KindArgsInvalid, map[string]any{"argument": fmt.Sprintf("edits[%d].find", i)},
				"Edit %d has an empty find: give the exact text to replace.", i)
		}
	}
	prev, data, mi, err := v.mutateOn(ctx, in.ConflictArg, path, in.ExpectedHash, history.OpEdit, func(c *current) ([]byte, error) {
		out, err := vault.ApplyEdits(c.data, in.Edits)
		if err != nil {
			return nil, matchError("edits", err)
		}
		if err := v.tooBig("result", len(out)); err != nil {
			return nil, err
		}
		return out, nil
	})
	if err != nil {
		return nil, err
	}
	return &editsOut{noteResult: s.noteResult(ctx, v, "edit", path, prev.path, prev, data), MergeInfo: mi, Applied: len(in.Edits)}, nil
}

type patchIn struct {
	VaultArg
	TxArg
	ConflictArg
	Path           string   `json:"path" jsonschema:"Vault-relative path of the note." schema:"minLength=1"`
	HeadingPath    []string `json:"heading_path,omitempty" jsonschema:"The section's heading title, after the titles of headings above it if needed to tell it apart: [\"Plan\", \"Risks\"]. Titles as read_outline shows them; [\"#id\"] names a heading by its read_outline id." schema:"minItems=1,maxItems=12,minLength=1"`
	Block          string   `json:"block,omitempty" jsonschema:"A block id (the ^id at the end of a paragraph or list item), with or without ^." schema:"minLength=1,maxLength=200"`
	FrontmatterKey string   `json:"frontmatter_key,omitempty" jsonschema:"A top-level key of the note's YAML frontmatter." schema:"minLength=1,maxLength=200"`
	Operation      string   `json:"operation" jsonschema:"replace, append, prepend, insert_before or insert_after (see the tool description); a frontmatter key takes replace, append or prepend." schema:"enum=replace|append|prepend|insert_before|insert_after"`
	Content        string   `json:"content" jsonschema:"The Markdown to put in; for a frontmatter key, a YAML value (a word, \"[a, b]\", a number)."`
	ExpectedHash   string   `json:"expected_hash,omitempty" jsonschema:"The content_hash read_note returned: fail with proposal-stale if the note changed at all since." schema:"pattern=^[0-9a-fA-F]{64}$"`
}

type patchOut struct {
	noteResult
	MergeInfo
	Target string `json:"target" jsonschema:"what was patched"`
}

// PatchSection implements patch_section.
func (s *Core) PatchSection(ctx context.Context, in patchIn) (*patchOut, error) {
	ctx = withTx(ctx, in.TxArg)
	v, err := s.vault(ctx, in.VaultArg)
	if err != nil {
		return nil, err
	}
	defer v.writing()()
	t := vault.PatchTarget{HeadingPath: in.HeadingPath, Block: in.Block, FrontmatterKey: in.FrontmatterKey}
	arg, n := "heading_path", 0
	for name, set := range map[string]bool{"heading_path": len(in.HeadingPath) > 0, "block": in.Block != "", "frontmatter_key": in.FrontmatterKey != ""} {
		if set {
			arg, n = name, n+1
		}
	}
	if n != 1 {
		return nil, newError(KindArgsInvalid, map[string]any{"argument": "heading_path"},
			"Name exactly one target: heading_path, block or frontmatter_key (%d given).", n)
	}
	path, err := notePath(ctx, v, "path", in.Path)
	if err != nil {
		return nil, err
	}
	if err := v.mustBeMutable("path", path, "edited"); err != nil {
		return nil, err
	}
	prev, data, mi, err := v.mutateOn(ctx, in.ConflictArg, path, in.ExpectedHash, history.OpEdit, func(c *current) ([]byte, error) {
		out, err := vault.PatchSection(c.data, t, vault.PatchOp(in.Operation), in.Content)
		if err != nil {
			return nil, matchError(arg, err)
		}
		if err := v.tooBig("result", len(out)); err != nil {
			return nil, err
		}
		return out, nil
	})
	if err != nil {
		return nil, err
	}
	return &patchOut{noteResult: s.noteResult(ctx, v, "patch", path+" ("+t.String()+")", prev.path, prev, data), MergeInfo: mi, Target: t.String()}, nil
}

type DeleteNoteIn struct {
	VaultArg
	TxArg
	Path         string `json:"path" jsonschema:"Vault-relative path of the note." schema:"minLength=1"`
	Confirm      bool   `json:"confirm,omitempty" jsonschema:"Must be true: deleting is only done when asked for explicitly."`
	ExpectedHash string `json:"expected_hash,omitempty" jsonschema:"The content_hash read_note returned: fail with proposal-stale if the note changed since." schema:"pattern=^[0-9a-fA-F]{64}$"`
}

type deleteOut struct {
	Coverage
	Path        string     `json:"path"`
	TrashPath   string     `json:"trash_path" jsonschema:"where the note is kept: restore it with sheaf restore <trash_path>, or move the file back"`
	ContentHash string     `json:"content_hash" jsonschema:"of the note deleted"`
	Backlinks   int        `json:"backlinks" jsonschema:"links to the note, left as they are (lint reports them as unresolved)"`
	Index       WriteIndex `json:"index"`
	Ledger      *string    `json:"ledger,omitempty"`
}

// TrashDir is where delete_note keeps deleted notes: TrashDir/<UTC
// time>-<random>/<the note's path>.
const TrashDir = ".sheaf/trash"

// DeleteNote implements delete_note.
func (s *Core) DeleteNote(ctx context.Context, in DeleteNoteIn) (*deleteOut, error) {
	ctx = withTx(ctx, in.TxArg)
	v, cat, err := s.open(ctx, in.VaultArg)
	if err != nil {
		return nil, err
	}
	defer v.writing()()
	path, err := notePath(ctx, v, "path", in.Path)
	if err != nil {
		return nil, err
	}
	if !in.Confirm {
		return nil, newError(KindConfirmationRequired, map[string]any{"argument": "confirm"},
			"Deleting %s needs confirm: true. Nothing was deleted.", path)
	}
	if err := v.mustBeMutable("path", path, "deleted"); err != nil {
		return nil, err
	}
	trash, c, err := v.trash(ctx, path, in.ExpectedHash, s.now())
	if err != nil {
		return nil, err
	}
	out := &deleteOut{Path: path, TrashPath: trash, ContentHash: c.hash, Backlinks: len(cat.Backlinks(path))}
	out.Index, out.Ledger = s.written(ctx, v, "delete", path, path)
	return out, nil
}

// trash copies the note at path into the trash and deletes it, both
// conditional on the version read: a note changed meanwhile is neither
// deleted nor left copied.
func (v *Vault) trash(ctx context.Context, path, expected string, now time.Time) (string, *current, error) {
	for attempt := 0; ; attempt++ {
		c, err := v.readForWrite(ctx, path)
		if err != nil {
			return "", nil, err
		}
		if err := checkExpected(c, expected); err != nil {
			return "", nil, err
		}
		trash := fmt.Sprintf("%s/%s-%04x/%s", TrashDir, now.UTC().Format("20060102T150405Z"), rand.IntN(1<<16), c.path)
		if _, err := v.Store.Put(ctx, trash, c.data, store.PutOptions{IfNoneMatch: true}); err != nil {
			return "", nil, err
		}
		err = v.deleteNote(ctx, v.change(ctx, c.path, history.OpDelete, nil, c), c)
		if err == nil {
			return trash, c, nil
		}
		_ = v.Store.Delete(ctx, trash, "")
		switch {
		case errors.Is(err, store.ErrNotFound):
			return "", nil, noNote("path", c.path)
		case !errors.Is(err, store.ErrConflict):
			return "", nil, err
		case expected != "":
			return "", nil, staleError(c.path, expected, v.currentHash(ctx, c.path))
		case attempt == casRetries:
			return "", nil, busyError(c.path)
		}
		if err := jitter(ctx, attempt); err != nil {
			return "", nil, err
		}
	}
}

// RestoreNote puts a note delete_note kept in the trash back where it was,
// failing with note-exists if a note is there now, logs it and indexes it.
// trashPath is delete_note's trash_path; it returns the restored path.
func (s *Core) RestoreNote(ctx context.Context, va VaultArg, trashPath string) (string, WriteIndex, error) {
	v, err := s.vault(ctx, va)
	if err != nil {
		return "", WriteIndex{}, err
	}
	defer v.writing()()
	p, err := cleanArg("trash_path", trashPath)
	if err != nil {
		return "", WriteIndex{}, err
	}
	rest, ok := strings.CutPrefix(p, TrashDir+"/")
	_, orig, ok2 := strings.Cut(rest, "/")
	if !ok || !ok2 || !vault.IsNotePath(orig) {
		return "", WriteIndex{}, newError(KindArgsInvalid, map[string]any{"argument": "trash_path"},
			"%s is not a deleted note's trash_path (%s/<time>/<path>.md).", trashPath, TrashDir)
	}
	data, obj, err := v.Store.Get(ctx, p, 0)
	if errors.Is(err, store.ErrNotFound) {
		return "", WriteIndex{}, newError(KindNoteNotFound, map[string]any{"argument": "trash_path"}, "Nothing is kept at %s.", p)
	}
	if err != nil {
		return "", WriteIndex{}, err
	}
	ch := v.change(ctx, orig, history.OpRestore, data, nil)
	if v.History != nil {
		if ver, err := v.History.Find(ctx, orig, hashOf(data)); err == nil {
			ch.Restored = ver.ID
		}
	}
	if _, err := v.createObj(ctx, "trash_path", ch); err != nil {
		return "", WriteIndex{}, err
	}
	if err := v.Store.Delete(ctx, p, obj.ETag); err != nil {
		return "", WriteIndex{}, err
	}
	idx, _ := s.written(ctx, v, "restore", orig, orig)
	return orig, idx, nil
}
