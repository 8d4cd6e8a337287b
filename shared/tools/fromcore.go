package tools

import "github.com/sheaf-dev/sheaf/shared/core"

// The tools answer from the protocol-free core (shared/core): these are
// its names as the MCP surface uses them.
type (
	// Vault is one vault as the core serves it.
	Vault = core.Vault
	// VaultArg is the optional `vault` argument every tool takes.
	VaultArg = core.VaultArg
	// Catalogs gives the core the current Catalog.
	Catalogs = core.Catalogs
	// LiveCatalog is a Catalogs over an in-memory catalog.
	LiveCatalog = core.LiveCatalog
	// IndexStatus is the indexer's progress.
	IndexStatus = core.IndexStatus
	// Lag is one of this server's writes the shared index lacks.
	Lag = core.Lag
	// Error is a tool failure with its kind.
	Error = core.Error
	// Kind is a tool error's kind.
	Kind = core.Kind

	// Page is the paging part of a list tool's input.
	Page = core.Page
	// Coverage is embedded in every tool result.
	Coverage = core.Coverage
	// Clipped says which list the response budget cut.
	Clipped = core.Clipped
	// Paged is the shape of every paginated list.
	Paged[T any] = core.Paged[T]

	covered = core.Coverable
	call    = core.Call
)

// The error kinds the MCP mechanics report.
const (
	KindArgsInvalid       = core.KindArgsInvalid
	KindUnsupported       = core.KindUnsupported
	KindInternal          = core.KindInternal
	KindProposalStale     = core.KindProposalStale
	KindInsufficientScope = core.KindInsufficientScope
	KindRateLimited       = core.KindRateLimited
	KindNoteNotFound      = core.KindNoteNotFound
	KindForbidden         = core.KindForbidden
)

var (
	newError     = core.NewError
	toError      = core.ToError
	cleanArg     = core.CleanArg
	cleanDirArg  = core.CleanDirArg
	argPathError = core.ArgPathError
	clipQuote    = core.ClipQuote
	withCall     = core.WithCall
	callFrom     = core.CallFrom
	hashOf       = core.ContentHash
)

// AsError is the tool error err stands for, as a tool call would report
// it (for callers outside MCP, such as the CLI).
func AsError(err error) *Error { return core.ToError(err) }

// ContentHash is the content_hash of a note's bytes.
func ContentHash(b []byte) string { return core.ContentHash(b) }
