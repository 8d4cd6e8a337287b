package core

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/sheaf-dev/sheaf/shared/store"
)

// Kind is a stable, machine-dispatchable tool error class
// (spec/lettuce-errors-and-limits.txt). Clients branch on it; the message is
// for humans.
type Kind string

// The complete kind catalogue.
const (
	KindArgsInvalid          Kind = "args-invalid"
	KindPathInvalid          Kind = "path-invalid"
	KindNoteNotFound         Kind = "note-not-found"
	KindNoteExists           Kind = "note-exists"
	KindNotMarkdown          Kind = "not-markdown"
	KindConfirmationRequired Kind = "confirmation-required"
	KindTargetNotFound       Kind = "target-not-found"
	KindEditNotUnique        Kind = "edit-not-unique"
	KindTargetIsBeingEdited  Kind = "target-is-being-edited"
	KindImmutablePath        Kind = "immutable-path"
	KindForbidden            Kind = "forbidden"
	KindProposalStale        Kind = "proposal-stale"
	KindUnsupported          Kind = "unsupported"
	KindInternal             Kind = "internal"
	KindInsufficientScope    Kind = "insufficient-scope"
	KindFolderNotAllowed     Kind = "folder-not-allowed"
	KindRateLimited          Kind = "rate-limited"
)

// Error is a tool failure: it becomes a result with isError: true, a
// top-level kind, a human message and the extra fields the spec lists.
type Error struct {
	Kind    Kind
	Message string
	Fields  map[string]any // extra structured fields, e.g. retry_after_ms, candidates
}

func (e *Error) Error() string { return string(e.Kind) + ": " + e.Message }

// newError builds an Error; fields may be nil.
func newError(kind Kind, fields map[string]any, format string, args ...any) *Error {
	return &Error{Kind: kind, Message: fmt.Sprintf(format, args...), Fields: fields}
}

// toError maps any error to a tool Error, once, for every tool: the store's
// sentinels become their kinds, with a message written for a person (the
// Go error chain goes to the log, not to the caller); anything unknown is
// internal.
func toError(err error) *Error {
	var te *Error
	var pe *store.PathError
	var me *store.MissingError
	switch {
	case errors.As(err, &te):
		return te
	case errors.As(err, &pe):
		return pathError("path", pe)
	case errors.Is(err, store.ErrPathInvalid):
		return newError(KindPathInvalid, nil, "That path is not allowed: send a vault-relative path such as \"Projects/Plan.md\".")
	case errors.Is(err, store.ErrDenied):
		return newError(KindForbidden, nil, "The server may not do this in the vault's storage: %s", deniedReason(err))
	case errors.Is(err, store.ErrNotFound):
		return newError(KindNoteNotFound, nil, "The note or file is not there (any more): list_notes or search find what exists.")
	case errors.As(err, &me):
		return newError(KindInternal, map[string]any{"reason": "storage-missing"},
			"The vault's storage is not there: the %s %q does not exist. This is the server's configuration: tell its operator.", me.What, clipQuote(me.Name))
	case errors.Is(err, errChanged):
		return newError(KindInternal, nil, "The note kept changing while it was being read: try again.")
	case errors.Is(err, context.DeadlineExceeded):
		return newError(KindInternal, nil, "The call took too long and was stopped: try again, or ask for less.")
	case errors.Is(err, context.Canceled):
		return newError(KindInternal, nil, "The call was cancelled before it finished.")
	default:
		return internalError(err)
	}
}

// internalError is the caller's error for a failure it cannot act on:
// kind internal, a correlation id and nothing else (no provider URL, no
// path, no Go error chain). The detail goes to the log under that id.
func internalError(err error) *Error {
	ref := newRef()
	slog.Error("internal error", "correlation_id", ref, "err", err)
	return newError(KindInternal, map[string]any{"correlation_id": ref},
		"Sheaf hit an internal error (reference %s). Try once more; if it persists, report it with this reference.", ref)
}

// newRef is a fresh correlation id: 12 lowercase base32 characters.
func newRef() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:]))[:12]
}

// cleanArg checks the note or file path given as argument arg.
func cleanArg(arg, raw string) (string, error) {
	p, err := store.CleanPath(raw)
	if err != nil {
		return "", argPathError(arg, err)
	}
	return p, nil
}

// cleanDirArg checks the folder given as argument arg ("" is the root).
func cleanDirArg(arg, raw string) (string, error) {
	p, err := store.CleanDir(raw)
	if err != nil {
		return "", argPathError(arg, err)
	}
	return p, nil
}

func argPathError(arg string, err error) error {
	var pe *store.PathError
	if errors.As(err, &pe) {
		return pathError(arg, pe)
	}
	return err
}

// pathError is path-invalid for the path given as argument arg, saying
// what is wrong with it and what to send instead.
func pathError(arg string, pe *store.PathError) *Error {
	return newError(KindPathInvalid, map[string]any{"argument": arg, "reason": pe.Reason},
		"The %s %q is not allowed: it %s. Send a path relative to the vault root, with forward slashes and no \"..\", such as \"Projects/Plan.md\".",
		arg, clipQuote(pe.Path), humanReason(pe.Reason))
}

// humanReason turns CleanPath's reason into the end of a sentence that
// starts "it ...".
func humanReason(why string) string {
	switch {
	case why == "empty":
		return "is empty"
	case why == "absolute":
		return "is absolute (starts with /)"
	case why == "too long", strings.HasPrefix(why, "longer than"):
		return "is too long"
	case why == "not valid UTF-8":
		return "is not valid UTF-8 text"
	case strings.HasPrefix(why, "contains a \"..\""):
		return why + " (it would climb out of the vault)"
	case strings.HasPrefix(why, "contains a \".\""):
		return why + " (send the path without it: a/./b is a/b)"
	case strings.HasPrefix(why, "contains"), strings.HasPrefix(why, "starts"), strings.HasPrefix(why, "ends"),
		strings.HasPrefix(why, "has"), strings.HasPrefix(why, "leads"), strings.HasPrefix(why, "goes"):
		return why
	default:
		return "is malformed (" + why + ")"
	}
}

// clipQuote keeps a quoted argument short in a message.
func clipQuote(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

// notConfigured is the clear "not configured" error of tools and modes whose
// provider is absent. The spec's kind catalogue is closed, so it is
// "unsupported" with reason "not-configured".
func notConfigured(what, how string) *Error {
	return newError(KindUnsupported, map[string]any{"reason": "not-configured"},
		"%s is not configured on this server: %s", what, how)
}

// deniedReason is what an adapter said about a denied operation, without
// the Go error chain's prefixes.
func deniedReason(err error) string {
	msg := strings.TrimSuffix(err.Error(), ": "+store.ErrDenied.Error())
	if i := strings.Index(msg, "\": "); i >= 0 {
		msg = msg[i+3:]
	}
	return msg
}

// folderNotAllowed is the error for a path outside the caller's folders.
func folderNotAllowed(path string) *Error {
	return newError(KindFolderNotAllowed, map[string]any{"path": path},
		"%s is outside the folders your credential may use: work inside them (get_vault_info and list_folders show what you can reach).", clipQuote(path))
}

// The error helpers the doors use.
var (
	// NewError builds an Error; fields may be nil.
	NewError = newError
	// ToError maps any error to a tool Error (see toError).
	ToError = toError
	// InternalError logs err under a new correlation id and returns the
	// caller's error: kind internal and the id (see internalError).
	InternalError = internalError
	// CleanArg checks the note or file path given as argument arg.
	CleanArg = cleanArg
	// CleanDirArg checks the folder given as argument arg.
	CleanDirArg = cleanDirArg
	// ArgPathError is path-invalid for argument arg when err is a bad
	// path, else err.
	ArgPathError = argPathError
	// ClipQuote keeps a quoted argument short in a message.
	ClipQuote = clipQuote
	// FolderNotAllowed is the error for a path outside the caller's
	// folders.
	FolderNotAllowed = folderNotAllowed
	// HiddenPath is path-invalid for a path in a folder whose name starts
	// with a dot (Sheaf's and Obsidian's own files).
	HiddenPath = hiddenPath
)

func hiddenPath(arg, path string) *Error {
	return newError(KindPathInvalid, map[string]any{"argument": arg, "reason": "hidden"},
		"The %s %q is inside a folder whose name starts with a dot (Obsidian's and Sheaf's own files), which is not part of the vault: write notes elsewhere.", arg, clipQuote(path))
}

// errChanged is a file that changed while it was being read.
var errChanged = errors.New("the note changed while it was being read")
