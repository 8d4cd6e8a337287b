package s3

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/sheaf-dev/sheaf/shared/history"
	"github.com/sheaf-dev/sheaf/shared/history/historytest"
	"github.com/sheaf-dev/sheaf/shared/store"
	s3store "github.com/sheaf-dev/sheaf/shared/store/s3"
	"github.com/sheaf-dev/sheaf/shared/store/s3/s3test"
)

var buckets atomic.Int64

func newVault(t testing.TB, srv *s3test.Server, versioning bool) *s3store.Store {
	t.Helper()
	b := fmt.Sprintf("history-%d", buckets.Add(1))
	srv.CreateBucket(t, b)
	if versioning {
		srv.EnableVersioning(t, b)
	}
	v := s3store.New(srv.Client(t), b, "vault")
	bucketOf.Store(v, b)
	return v
}

// bucketOf maps a vault to its bucket's name.
var bucketOf sync.Map

func vaultBucket(v *s3store.Store) string {
	b, _ := bucketOf.Load(v)
	return b.(string)
}

// TestConformance runs the suite against a real versitygw whose buckets
// keep versions.
func TestConformance(t *testing.T) {
	srv := s3test.Start(t, s3test.Options{Versioning: true})
	historytest.Run(t, func(t *testing.T) historytest.Harness {
		vault := newVault(t, srv, true)
		h, err := New(vault)
		if err != nil {
			t.Fatal(err)
		}
		if err := h.Check(t.Context()); err != nil {
			t.Fatal(err)
		}
		return historytest.Harness{Vault: vault, History: h,
			External: func(t *testing.T, path string, data []byte) {
				if _, err := vault.Put(t.Context(), path, data, store.PutOptions{}); err != nil {
					t.Fatal(err)
				}
			}}
	})
}

// TestVersioningOff: a bucket that keeps no versions is said to, never
// silently recorded as if it did.
func TestVersioningOff(t *testing.T) {
	srv := s3test.Start(t, s3test.Options{Versioning: true})
	vault := newVault(t, srv, false)
	h, err := New(vault)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Check(t.Context()); !errors.Is(err, history.ErrOff) {
		t.Errorf("Check: %v, want ErrOff", err)
	}
	w := &historytest.Writer{Vault: vault, History: h}
	if _, err := w.Put(t.Context(), "a.md", history.OpWrite, []byte("x"), history.Change{}); !errors.Is(err, history.ErrOff) {
		t.Errorf("Record without versioning: %v, want ErrOff", err)
	}
	if _, err := New(struct{ store.Store }{vault}); !errors.Is(err, history.ErrOff) {
		t.Errorf("New over a store without versions: %v", err)
	}
}
