package auth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/sheaf-dev/sheaf/shared/store"
)

// KeySource is where a keys file lives: a store object (a local file, the
// bucket's .sheaf/keys.json) or a parameter of a secrets service.
type KeySource interface {
	// Load returns the keys file; found is false when there is none.
	Load(ctx context.Context) (data []byte, found bool, err error)
	// String names the source in messages.
	String() string
}

// KeyWriter is a KeySource that can be changed (sheaf keys add/revoke).
type KeyWriter interface {
	KeySource
	// Update applies fn to the current keys file (an empty one when there is
	// none) and stores the result, failing rather than overwriting a
	// concurrent change.
	Update(ctx context.Context, fn func(*KeyFile) error) error
}

// StoreKeys is a keys file kept as an object of a store: KeysPath in the
// vault's own store, or any file through a store over its folder.
type StoreKeys struct {
	Store store.Store
	Path  string // "" means KeysPath
	Name  string // how String names it; "" means Path
}

var _ KeyWriter = StoreKeys{}

func (s StoreKeys) path() string {
	if s.Path == "" {
		return KeysPath
	}
	return s.Path
}

// String implements KeySource.
func (s StoreKeys) String() string {
	if s.Name != "" {
		return s.Name
	}
	return s.path()
}

// Load implements KeySource.
func (s StoreKeys) Load(ctx context.Context) ([]byte, bool, error) {
	data, _, err := s.Store.Get(ctx, s.path(), MaxKeysFile)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, false, nil
	case err != nil:
		return nil, false, fmt.Errorf("reading %s: %w", s, err)
	}
	return data, true, nil
}

// Update implements KeyWriter with a conditional write on the object's ETag.
func (s StoreKeys) Update(ctx context.Context, fn func(*KeyFile) error) error {
	data, obj, err := s.Store.Get(ctx, s.path(), MaxKeysFile)
	opts := store.PutOptions{IfMatch: obj.ETag}
	switch {
	case errors.Is(err, store.ErrNotFound):
		data, opts = nil, store.PutOptions{IfNoneMatch: true}
	case err != nil:
		return fmt.Errorf("reading %s: %w", s, err)
	}
	kf, err := ParseKeyFile(data)
	if err != nil {
		return fmt.Errorf("%s: %w", s, err)
	}
	if err := fn(kf); err != nil {
		return err
	}
	if _, err := s.Store.Put(ctx, s.path(), kf.Marshal(), opts); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return fmt.Errorf("%s changed while it was being updated; try again", s)
		}
		return fmt.Errorf("writing %s: %w", s, err)
	}
	return nil
}

// Keyring is the current keys of a KeySource, re-read at most every Every
// so that added and revoked keys take effect without a restart. A failed
// re-read keeps the last good keys (and logs); only a keyring that never
// loaded fails. Safe for concurrent use; one caller re-reads while the
// others go on with the keys they have.
type Keyring struct {
	src   KeySource
	every time.Duration
	now   func() time.Time

	mu         sync.Mutex
	set        *KeySet // nil until loaded
	found      bool    // the source has a keys file
	at         time.Time
	refreshing chan struct{} // closed when the running re-read ends
}

// NewKeyring reads src at most once per every.
func NewKeyring(src KeySource, every time.Duration) *Keyring {
	return &Keyring{src: src, every: every, now: time.Now}
}

// Source is the keyring's source.
func (k *Keyring) Source() KeySource { return k.src }

// Keys returns the current keys and whether the source has a keys file.
func (k *Keyring) Keys(ctx context.Context) (*KeySet, bool, error) {
	for {
		k.mu.Lock()
		fresh := k.set != nil && k.now().Sub(k.at) < k.every
		if fresh || (k.set != nil && k.refreshing != nil) {
			set, found := k.set, k.found
			k.mu.Unlock()
			return set, found, nil // current, or someone is re-reading it
		}
		if wait := k.refreshing; wait != nil {
			k.mu.Unlock()
			select { // the first load: wait for it
			case <-wait:
				continue
			case <-ctx.Done():
				return nil, false, ctx.Err()
			}
		}
		done := make(chan struct{})
		k.refreshing = done
		k.mu.Unlock()

		set, found, err := k.load(ctx)
		k.mu.Lock()
		k.refreshing = nil
		close(done)
		switch {
		case err == nil:
			k.set, k.found, k.at = set, found, k.now()
		case k.set != nil:
			slog.Error("keys: cannot re-read; keeping the keys loaded before", "source", k.src.String(), "err", err)
			k.at = k.now() // try again after another interval
		default:
			k.mu.Unlock()
			return nil, false, err
		}
		set, found = k.set, k.found
		k.mu.Unlock()
		return set, found, nil
	}
}

func (k *Keyring) load(ctx context.Context) (*KeySet, bool, error) {
	data, found, err := k.src.Load(ctx)
	if err != nil {
		return nil, false, err
	}
	kf, err := ParseKeyFile(data)
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", k.src, err)
	}
	set, err := NewKeySet(kf)
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", k.src, err)
	}
	return set, found, nil
}
