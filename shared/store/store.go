// Package store is the object-store port: the vault's files and Sheaf's own
// objects under ".sheaf/". Adapters live in sub-packages (fs, s3); every
// adapter passes storetest.Run.
//
// Paths are always vault-relative, NFC, with forward slashes; CleanPath is
// the one gate every path from outside passes through.
package store

import (
	"context"
	"errors"
	"time"
)

// Sentinel errors; adapters wrap them so callers test with errors.Is.
var (
	ErrNotFound    = errors.New("store: not found")
	ErrConflict    = errors.New("store: precondition failed")
	ErrPathInvalid = errors.New("store: path invalid")
	ErrTooLarge    = errors.New("store: object too large")
	// ErrDenied: the backend will not let this process do it (a read-only
	// folder, no credentials, access denied); the wrapped message says
	// what to change.
	ErrDenied = errors.New("store: access denied")
)

// MissingError is a vault whose storage itself is not there (an S3
// bucket that does not exist): the deployment's configuration, which the
// caller may be told about, as opposed to an internal failure.
type MissingError struct {
	What string // e.g. "bucket"
	Name string
}

func (e *MissingError) Error() string {
	return "store: " + e.What + " \"" + e.Name + "\" does not exist"
}

// Object describes one stored file.
type Object struct {
	Path     string    // vault-relative, NFC
	Size     int64     //
	Modified time.Time //
	ETag     string    // opaque; changes whenever the content changes
	Version  string    // version id where the backend has one, else ""
	// Meta is the user metadata the object was written with (PutOptions.Meta),
	// where the backend keeps it (S3: Stat and Get fill it); else nil.
	Meta map[string]string
}

// PutOptions make a write conditional.
type PutOptions struct {
	IfMatch     string // write only if the current ETag equals this
	IfNoneMatch bool   // write only if the object does not exist
	// Meta is user metadata kept with the object where the backend can
	// (S3: x-amz-meta-*; keys lower case, values ASCII, 2 KB in all);
	// backends that cannot ignore it. History puts a write's attribution
	// here (history.Metadata).
	Meta map[string]string
}

// Store is a flat namespace of objects addressed by vault-relative paths.
type Store interface {
	// List calls fn for every object under prefix ("" for all), in no
	// particular order. Objects inside hidden folders (a path segment starting
	// with '.') are skipped unless prefix itself names a hidden folder.
	// Returning an error from fn stops the walk and returns that error.
	List(ctx context.Context, prefix string, fn func(Object) error) error
	// Stat returns the object's metadata, or ErrNotFound.
	Stat(ctx context.Context, path string) (Object, error)
	// Get returns at most max bytes of the object (max <= 0: no limit) and its
	// metadata; ErrNotFound if missing, ErrTooLarge if bigger than max.
	Get(ctx context.Context, path string, max int64) ([]byte, Object, error)
	// Put writes the object, creating parent folders; ErrConflict when a
	// condition in opts fails.
	Put(ctx context.Context, path string, data []byte, opts PutOptions) (Object, error)
	// Delete removes the object; deleting a missing object is not an error.
	// With ifMatch != "" it fails with ErrConflict unless the ETag matches.
	Delete(ctx context.Context, path string, ifMatch string) error
	// Folders lists every folder under prefix, empty ones too, excluding
	// hidden folders (see List).
	Folders(ctx context.Context, prefix string) ([]string, error)
}

// Passer is an optional ability of a Store: naming the files its last List
// of the whole vault passed over because no vault path can name them (a
// name with a control character or a backslash) or because another file
// holds the same path spelled in another Unicode normalisation (NFC and
// NFD twins). Keys are the files' paths as best spelled (invalid UTF-8
// replaced), values why.
type Passer interface {
	PassedOver() map[string]string
}

// RangeReader is an optional ability of a Store: reading part of an object
// without reading all of it.
type RangeReader interface {
	// GetRange returns at most n bytes of the object at path starting at
	// byte off (fewer at its end, none from its end on) and the object's
	// metadata, Size being the whole object's; ErrNotFound if missing.
	GetRange(ctx context.Context, path string, off, n int64) ([]byte, Object, error)
}

// GetRange reads n bytes of path from off with s's RangeReader, or, for a
// store without one, by reading the whole object.
func GetRange(ctx context.Context, s Store, path string, off, n int64) ([]byte, Object, error) {
	if off < 0 || n < 0 {
		return nil, Object{}, errors.New("store: negative range")
	}
	if rr, ok := s.(RangeReader); ok {
		return rr.GetRange(ctx, path, off, n)
	}
	data, obj, err := s.Get(ctx, path, 0)
	if err != nil {
		return nil, obj, err
	}
	if off >= int64(len(data)) {
		return []byte{}, obj, nil
	}
	return data[off:min(int64(len(data)), off+n)], obj, nil
}

// Versioned is an optional ability of a Store: it keeps every version of
// an object (an S3 bucket with versioning on). Version ids are the
// backend's.
type Versioned interface {
	// Versioning reports whether versions are being kept now (false, nil:
	// the backend could, but it is off).
	Versioning(ctx context.Context) (bool, error)
	// Versions calls fn for every version of the object at path (exactly
	// that path), newest first, delete markers included (Deleted true;
	// no Size or ETag). A path never written has none: no error.
	// Objects carry no Meta (listings have none): StatVersion has it.
	// Returning an error from fn stops the walk and returns that error.
	Versions(ctx context.Context, path string, fn func(ObjectVersion) error) error
	// StatVersion returns the metadata of one version, Meta included;
	// ErrNotFound when there is no such version or it is a delete marker.
	StatVersion(ctx context.Context, path, id string) (Object, error)
	// GetVersion is Get of one version; ErrNotFound as StatVersion.
	GetVersion(ctx context.Context, path, id string, max int64) ([]byte, Object, error)
}

// ObjectVersion is one entry of Versioned.Versions.
type ObjectVersion struct {
	Object
	Deleted bool // a delete marker: the object was deleted at Modified
	Latest  bool // the current version (or marker) of the key
}
