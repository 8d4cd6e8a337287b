package vaultsync

import (
	"context"
	"errors"
	"time"

	"github.com/sheaf-dev/sheaf/shared/vault"
)

// Expect is what the remote index's catalog shows once the indexer has
// caught up with one write of a sync.
type Expect struct {
	Path    string `json:"path"`
	Hash    string `json:"hash,omitempty"` // a note: the content hash it is indexed with
	Size    int64  `json:"size"`           // an attachment: its size
	Deleted bool   `json:"deleted,omitempty"`
}

// Catalogs reads the remote index's catalog as the indexer last saved it
// (catalogstore.Catalogs over the remote vault: the manifest under
// .sheaf/catalog/ and the segments it lists, revalidated by ETag).
type Catalogs interface {
	Catalog(ctx context.Context) (*vault.Catalog, error)
}

// Met reports whether cat shows x. A note the indexer could not index
// (binary, too large) counts as caught up: it is in the catalog's
// problems, and problem says why.
func Met(cat *vault.Catalog, x Expect) (ok bool, problem string) {
	n, isNote := cat.Note(x.Path)
	isNote = isNote && n.Path == x.Path // Note falls back to other spellings
	a, isAtt := cat.Attachment(x.Path)
	switch {
	case x.Deleted:
		return !isNote && !isAtt, ""
	case IsNote(x.Path):
		if isNote && n.Hash == x.Hash {
			return true, ""
		}
		if why, bad := cat.Problems()[x.Path]; bad {
			return true, why
		}
		return false, ""
	default:
		return isAtt && a.Size == x.Size, ""
	}
}

// WaitResult is how far the index got.
type WaitResult struct {
	Pending  []Expect          // not shown by the catalog yet
	Problems map[string]string // notes the indexer refused, and why
	Took     time.Duration
}

// ErrPending is returned by Wait when ctx ended with writes still not
// indexed.
var ErrPending = errors.New("the remote index has not caught up")

// Wait polls the catalog every interval (0: a second) until it shows every
// expectation, or ctx ends (then ErrPending, with what is still pending).
// progress, when set, hears how many are pending after each poll.
func Wait(ctx context.Context, cats Catalogs, want []Expect, interval time.Duration, progress func(pending int)) (WaitResult, error) {
	if interval <= 0 {
		interval = time.Second
	}
	start := time.Now()
	res := WaitResult{Pending: want, Problems: map[string]string{}}
	for {
		cat, err := cats.Catalog(ctx)
		if err == nil {
			var still []Expect
			for _, x := range res.Pending {
				ok, why := Met(cat, x)
				if !ok {
					still = append(still, x)
				} else if why != "" {
					res.Problems[x.Path] = why
				}
			}
			res.Pending = still
			if progress != nil {
				progress(len(still))
			}
		}
		res.Took = time.Since(start)
		if len(res.Pending) == 0 {
			return res, nil
		}
		select {
		case <-ctx.Done():
			if err != nil {
				return res, errors.Join(ErrPending, err)
			}
			return res, ErrPending
		case <-time.After(interval):
		}
	}
}
