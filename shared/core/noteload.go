package core

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"

	"golang.org/x/sync/semaphore"

	"github.com/sheaf-dev/sheaf/shared/store"
	"github.com/sheaf-dev/sheaf/shared/vault"
)

// Note loading, below every tool that reads or writes a note: a path
// argument checked once (notePath), a note read whole with its failures
// mapped to their kinds (getNote, loadNote), an id resolved (noteByID), and
// the content hash every answer and write compares.

// noteByID finds the one note with this id or unambiguous id prefix.
func noteByID(cat *vault.Catalog, id string) (string, error) {
	matches := cat.ByID(id)
	switch {
	case len(matches) == 1:
		return matches[0].Path, nil
	case len(matches) == 0 && len(id) < 6:
		return "", newError(KindNoteNotFound, nil, "no note has id %q (an id prefix needs at least 6 characters)", id)
	case len(matches) == 0:
		return "", newError(KindNoteNotFound, nil, "no note has id %q or an id starting with it", id)
	default:
		var paths []string
		for _, m := range matches {
			paths = append(paths, m.Path)
		}
		return "", newError(KindArgsInvalid, map[string]any{"candidates": paths},
			"id prefix %q is ambiguous: %d notes match; send more characters", id, len(matches))
	}
}

// loadedNote is a note read fresh from the store.
type loadedNote struct {
	obj      store.Object
	text     string
	hash     string
	parsed   *vault.Parsed // nil when loaded by loadNoteBody
	body     string        // the text after the frontmatter (vault.Parsed.Body)
	warnings []string
}

// notePath checks the note path given as argument arg: clean, visible, a
// Markdown note (".md" may be left out) that exists.
func notePath(ctx context.Context, v *Vault, arg, raw string) (string, error) {
	path, err := cleanArg(arg, raw)
	if err != nil {
		return "", err
	}
	if vault.IsHidden(path) {
		return "", newError(KindNoteNotFound, map[string]any{"argument": arg},
			"No note at %q: folders whose name starts with a dot are not part of the vault.", path)
	}
	if vault.IsNotePath(path) {
		return path, nil
	}
	if _, err := v.Store.Stat(ctx, path+".md"); err == nil {
		return path + ".md", nil // "a note may be named without .md"
	}
	if _, err := v.Store.Stat(ctx, path); err == nil {
		return "", newError(KindNotMarkdown, map[string]any{"argument": arg},
			"%s is not a Markdown note: read it with read_attachment.", path)
	}
	return "", noNote(arg, raw)
}

// noNote is note-not-found for the path given as argument arg.
func noNote(arg, path string) *Error {
	return newError(KindNoteNotFound, map[string]any{"argument": arg},
		"No note at %q (%s). Paths are vault-relative and case-sensitive: find the right one with list_notes or search.", path, arg)
}

// getNote reads the whole note at path (clean, a note path), at most max
// bytes, mapping a missing note, and one over the parse limit, to their
// kinds; tooLarge ends the message for the latter ("%s is bigger than the
// N bytes this server <tooLarge>"). A note over a max below that limit is
// store.ErrTooLarge.
func (v *Vault) getNote(ctx context.Context, path string, max int64, tooLarge string) ([]byte, store.Object, error) {
	data, obj, err := v.Store.Get(ctx, path, max)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, obj, noNote("path", path)
	case errors.Is(err, store.ErrTooLarge) && max >= v.maxNote():
		return nil, obj, newError(KindUnsupported, map[string]any{"max_bytes": v.maxNote(), "argument": "path"},
			"%s is bigger than the %d bytes this server %s.", path, v.maxNote(), tooLarge)
	}
	return data, obj, err
}

// loadNote reads and parses a note, mapping every failure to its kind.
func loadNote(ctx context.Context, v *Vault, raw string) (*loadedNote, error) {
	return loadNoteUpTo(ctx, v, raw, v.maxNote())
}

// loadNoteBody is loadNote for a caller that needs only the note's text,
// hash and body: the Markdown is not parsed (parsed is nil).
func loadNoteBody(ctx context.Context, v *Vault, raw string) (*loadedNote, error) {
	return readNote(ctx, v, raw, v.maxNote(), false)
}

// loadNoteUpTo is loadNote for a note of at most max bytes: a bigger one,
// when max is below the parse limit, is store.ErrTooLarge.
func loadNoteUpTo(ctx context.Context, v *Vault, raw string, max int64) (*loadedNote, error) {
	return readNote(ctx, v, raw, max, true)
}

// readNote reads the note at raw, of at most max bytes, and parses it when
// parse is set.
func readNote(ctx context.Context, v *Vault, raw string, max int64, parse bool) (*loadedNote, error) {
	path, err := notePath(ctx, v, "path", raw)
	if err != nil {
		return nil, err
	}
	// Big notes wait for the parse budget: before the read when the
	// catalog in memory knows the size, else once the bytes are in.
	var held int64
	defer func() { releaseParse(held) }()
	if cat := residentCatalog(v.Catalogs); parse && cat != nil {
		if n, ok := cat.Note(path); ok {
			if held, err = gateParse(ctx, n.Size); err != nil {
				return nil, err
			}
		}
	}
	data, obj, err := v.getNote(ctx, path, max, "parses at once: read it by pages with read_note (offset)")
	if err != nil {
		return nil, err
	}
	if parse && held == 0 {
		if held, err = gateParse(ctx, int64(len(data))); err != nil {
			return nil, err
		}
	}
	ln := &loadedNote{obj: obj}
	switch cerr := vault.Check(data); {
	case errors.Is(cerr, vault.ErrBinary):
		return nil, newError(KindNotMarkdown, map[string]any{"argument": "path"},
			"%s has binary content, not Markdown text: read it with read_attachment if it is a file you need.", path)
	case errors.Is(cerr, vault.ErrInvalidUTF8):
		ln.warnings = append(ln.warnings, "the file is not valid UTF-8: invalid bytes are shown as U+FFFD")
	}
	ln.hash = hashOf(data)
	ln.text = strings.ToValidUTF8(string(data), "\uFFFD")
	if parse {
		ln.parsed = vault.Parse(obj.Path, data)
		ln.body = ln.parsed.Body
	} else {
		ln.body = vault.Body(data)
	}
	return ln, nil
}

// parseGate bounds the bytes of big notes read and parsed at once, over
// the whole process: parsing takes about ten times a note's size, and 50
// agents asking at once for the outline of one 10 MB note took 4.3 GB.
// A note of parseBudget or more waits until it is alone.
var parseGate = semaphore.NewWeighted(parseBudget)

const (
	parseBudget = 32 << 20
	gateFrom    = 1 << 20 // smaller notes are read and parsed without waiting
)

// gateParse waits until a note of size bytes may be parsed and returns the
// weight to give back with releaseParse (0 for a note under gateFrom,
// which does not wait).
func gateParse(ctx context.Context, size int64) (int64, error) {
	if size < gateFrom {
		return 0, nil
	}
	w := min(size, parseBudget)
	if err := parseGate.Acquire(ctx, w); err != nil {
		return 0, err
	}
	return w, nil
}

// releaseParse gives back what gateParse took.
func releaseParse(w int64) {
	if w > 0 {
		parseGate.Release(w)
	}
}

// ContentHash is the content_hash of a note's bytes, as read_note reports
// it and the write tools' expected_hash takes it.
func ContentHash(b []byte) string { return hashOf(b) }

// hashOf is the content_hash of bytes.
func hashOf(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// catalogNote finds a note in the catalog by a path argument, mapping
// failures to path-invalid, not-markdown or note-not-found.
func catalogNote(cat *vault.Catalog, raw string) (vault.Note, error) {
	path, err := cleanArg("path", raw)
	if err != nil {
		return vault.Note{}, err
	}
	if vault.IsHidden(path) {
		return vault.Note{}, newError(KindNoteNotFound, map[string]any{"argument": "path"},
			"No note at %q: folders whose name starts with a dot are not part of the vault.", path)
	}
	if !vault.IsNotePath(path) {
		if n, ok := cat.Note(path + ".md"); ok {
			return n, nil
		}
		if _, ok := cat.Attachment(path); ok {
			return vault.Note{}, newError(KindNotMarkdown, map[string]any{"argument": "path"},
				"%s is a file, not a Markdown note: this tool works on notes (read_attachment reads files).", path)
		}
		if why := cat.Problem(path + ".md"); why != "" {
			return vault.Note{}, unindexedNote(path+".md", why)
		}
		return vault.Note{}, noNote("path", raw)
	}
	n, ok := cat.Note(path)
	if !ok {
		if why := cat.Problem(path); why != "" {
			return vault.Note{}, unindexedNote(path, why)
		}
		return vault.Note{}, noNote("path", raw)
	}
	return n, nil
}

// unindexedNote is the error of a tool that reads the catalog, for a note
// that exists but is not in it (too large, binary, unreadable: why).
func unindexedNote(path, why string) *Error {
	return newError(KindUnsupported, map[string]any{"argument": "path"},
		"%s is in the vault but not indexed (%s), so this tool knows nothing of it: read_note reads it.", path, why)
}
