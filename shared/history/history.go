// Package history is the version-store port: every note's past versions,
// who wrote each and why, kept so that nothing a writer replaces is lost.
// Adapters live in sub-packages (folder: blobs and a log in the local state
// folder; s3: the bucket's object versions); every adapter passes
// historytest.Run.
//
// The write path calls Record after each successful store write (the
// conditional Put or Delete), with the bytes it replaced as read; the read
// side lists (List), reads (Read), finds the version a caller's
// expected_hash names (Find) and gathers a transaction (Transaction).
// Content hashes are the notes' content_hash: hex SHA-256 of the bytes.
package history

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"time"

	"github.com/sheaf-dev/sheaf/shared/store"
)

// Sentinel errors; adapters wrap them so callers test with errors.Is.
var (
	// ErrNotFound: no such version (never kept, or pruned).
	ErrNotFound = errors.New("history: version not found")
	// ErrOff: this vault keeps no history (an S3 bucket without
	// versioning). The message says how to turn it on.
	ErrOff = errors.New("history: not kept on this vault")
)

// Op is what made a version.
type Op string

// The operations. A move makes two versions: OpMove at the new path (From
// names the old one) and OpMoveAway at the old path (To names the new one).
// OpDelete and OpMoveAway versions are tombstones: Deleted, no content.
const (
	OpWrite     Op = "write"     // a note created
	OpOverwrite Op = "overwrite" // replaced whole
	OpAppend    Op = "append"    // text added at the end
	OpEdit      Op = "edit"      // apply_edits, patch_section, a link rewrite
	OpMove      Op = "move"      // arrived here from From
	OpMoveAway  Op = "move-away" // left for To
	OpDelete    Op = "delete"    // deleted (the trash keeps a copy too)
	OpRestore   Op = "restore"   // a past version made current again
	OpExternal  Op = "external"  // changed outside Sheaf (an editor, a sync client)
)

// Deletes reports whether op leaves the path without content.
func (op Op) Deletes() bool { return op == OpDelete || op == OpMoveAway }

// Author is who made a version: the caller's auth identity.
type Author struct {
	// Subject is stable: "key:<id>", "oauth:<sub>", "local", or External.
	Subject string `json:"subject"`
	// Name is for people: a key's name, a token's client, the local user.
	Name string `json:"name,omitempty"`
}

// External is the Author.Subject of changes made outside Sheaf.
const External = "external"

// ExternalAuthor is the author of every OpExternal version.
var ExternalAuthor = Author{Subject: External, Name: "outside Sheaf"}

// Version is one state of one path.
type Version struct {
	ID          string    `json:"id"`   // opaque; unique within the vault's history of the path
	Path        string    `json:"path"` // the path this version had (a moved note's older versions have the old path)
	Hash        string    `json:"hash,omitempty"`
	Size        int64     `json:"size"`
	Time        time.Time `json:"time"`
	Author      Author    `json:"author"`
	Tool        string    `json:"tool,omitempty"` // the tool or command that wrote it ("write_note", "indexer", "sheaf restore")
	Transaction string    `json:"transaction_id,omitempty"`
	Op          Op        `json:"op"`
	From        string    `json:"from,omitempty"`   // OpMove: the path it came from
	To          string    `json:"to,omitempty"`     // OpMoveAway: the path it went to
	Parent      string    `json:"parent,omitempty"` // the version it replaced; "" for the first
	// Merged is the other parent of a three-way merge: the version the
	// caller's change was based on.
	Merged string `json:"merged,omitempty"`
	// Restored is the version an OpRestore brought back.
	Restored string `json:"restored,omitempty"`
}

// Deleted reports whether the version is a tombstone (no content).
func (v Version) Deleted() bool { return v.Op.Deletes() }

// Change is one successful write, as the write path reports it to Record.
type Change struct {
	Path string
	Op   Op
	// Data is the content written; nil for tombstones.
	Data []byte
	// Prev is the content the write replaced, as read for the
	// compare-and-swap (nil when the path did not exist). When the
	// history's newest version of Path is not Prev (a change Sheaf did not
	// see), Prev is recorded first as an OpExternal version, so that what
	// the write replaced is kept.
	Prev []byte
	// PrevObject is the object Prev was read as (Get's Object): on S3 its
	// Version is the new version's Parent.
	PrevObject  store.Object
	Author      Author
	Tool        string
	Transaction string
	From, To    string // OpMove, OpMoveAway
	Merged      string // the other parent of a merge (a version id)
	Restored    string // OpRestore: the version brought back
	// Object is the store's answer to the write (Put's Object; for a
	// delete, the Object deleted). On S3 its Version is the object
	// version the write made.
	Object store.Object
	// Time is when the write happened; zero: now.
	Time time.Time
}

// ListOptions page a listing.
type ListOptions struct {
	// After is the ID of the last version of the previous page ("": from
	// the newest).
	After string
	// Limit is the page size; <= 0: DefaultLimit.
	Limit int
}

// DefaultLimit is the page size of List when ListOptions.Limit is 0.
const DefaultLimit = 50

// Page is one page of a listing, newest first.
type Page struct {
	Versions []Version
	More     bool // older versions follow: pass the last ID as After
}

// Store keeps past versions. Paths are clean vault paths (store.CleanPath).
type Store interface {
	// Record adds the versions that successful writes made, in order, and
	// returns them (with their IDs). A Change whose content is already the
	// newest version of its path (an external change seen twice) returns
	// that version and adds nothing.
	Record(ctx context.Context, changes ...Change) ([]Version, error)
	// List returns the versions of path, newest first, following moves:
	// after the version that brought the note to path (OpMove) come the
	// versions it had at its old path. A path without history has an
	// empty page, not an error; an unknown After is ErrNotFound.
	List(ctx context.Context, path string, opts ListOptions) (Page, error)
	// Read returns the content and description of version id of the note
	// at path (its path now, or any path List shows for it); ErrNotFound
	// when there is no such version, or it is a tombstone.
	Read(ctx context.Context, path, id string) ([]byte, Version, error)
	// Find returns the newest version of path (following moves) whose
	// content hash is hash; ErrNotFound when history holds none.
	Find(ctx context.Context, path, hash string) (Version, error)
	// Transaction returns every version recorded with transaction id,
	// oldest first; empty when there are none.
	Transaction(ctx context.Context, id string) ([]Version, error)
}

// Observer is what the indexer tells history about changes it sees in the
// vault, so that changes made outside Sheaf become OpExternal versions.
// It is called with the note's bytes as read (Seen) or when the note is
// gone (Gone). It records a version only when the content differs from the
// newest version history holds for the path and the path has history
// already (a note Sheaf never wrote is recorded when a write first
// replaces it: Change.Prev).
type Observer interface {
	Seen(ctx context.Context, path string, data []byte, obj store.Object) error
	Gone(ctx context.Context, path string) error
}

// Hash is the content hash of data: hex SHA-256, the notes' content_hash.
func Hash(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
