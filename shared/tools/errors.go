package tools

import (
	"context"
	"errors"
	"fmt"

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
// sentinels become their kinds, anything unknown is internal.
func toError(err error) *Error {
	var te *Error
	switch {
	case errors.As(err, &te):
		return te
	case errors.Is(err, store.ErrPathInvalid):
		return &Error{Kind: KindPathInvalid, Message: err.Error()}
	case errors.Is(err, store.ErrNotFound):
		return &Error{Kind: KindNoteNotFound, Message: err.Error()}
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return &Error{Kind: KindInternal, Message: "the call was cancelled or timed out: " + err.Error()}
	default:
		return &Error{Kind: KindInternal, Message: err.Error()}
	}
}

// notConfigured is the clear "not configured" error of tools and modes whose
// provider is absent. The spec's kind catalogue is closed, so it is
// "unsupported" with reason "not-configured".
func notConfigured(what, how string) *Error {
	return newError(KindUnsupported, map[string]any{"reason": "not-configured"},
		"%s is not configured on this server: %s", what, how)
}
