package core

// One URL, one note, across processes. Two ingest_url calls of the same
// canonical URL may run at once: on two Lambda instances, or in two
// servers of one folder vault, whose catalogs have not heard of each
// other's note yet. So before fetching, an ingest claims the URL: a claim
// object, .sheaf/ingest/urls/<sha256 of the canonical URL>.json, created
// with a conditional write (If-None-Match). The winner fetches, writes the
// note and records its path in the claim (If-Match); the others wait for
// that path and answer the note with duplicate: true. A claim whose holder
// died lapses after ingestClaimTTL and is taken over (If-Match); a claim
// whose note was deleted since is taken over too. A failed fetch deletes
// its claim, so the next call tries again.

import (
	"context"
	crand "crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/sheaf-dev/sheaf/shared/store"
)

const (
	// ingestClaimDir holds one claim object per canonical URL ingested.
	ingestClaimDir = ".sheaf/ingest/urls/"
	// ingestClaimTTL is how long a claim being fetched lives: longer than
	// a fetch (30 s), a PDF's child process (30 s) and the write.
	ingestClaimTTL = 2 * time.Minute
)

// urlClaim is a claim object's content: Holder and Expires while the URL
// is being fetched, the note's path and answer fields once it is written.
type urlClaim struct {
	URL         string    `json:"url"`
	Holder      string    `json:"holder,omitempty"`
	Expires     time.Time `json:"expires,omitzero"`
	Path        string    `json:"path,omitempty"`
	Title       string    `json:"title,omitempty"`
	SourceHash  string    `json:"source_hash,omitempty"`
	ContentType string    `json:"content_type,omitempty"`
}

// heldClaim is a claim this call holds: its object's ETag.
type heldClaim struct {
	st   store.Store
	path string
	etag string
	url  string
}

func ingestClaimPath(canonical string) string {
	sum := sha256.Sum256([]byte(canonical))
	return ingestClaimDir + hex.EncodeToString(sum[:]) + ".json"
}

// claimURL claims canonical URL u for this call. It returns the held
// claim, or the note another call filed for u (duplicate: true), waiting
// while another call fetches it, at most ingestClaimTTL (or v.MaxWait),
// then answering target-is-being-edited.
func (s *Core) claimURL(ctx context.Context, v *Vault, u string) (*heldClaim, *ingestOut, error) {
	path := ingestClaimPath(u)
	var id [12]byte
	_, _ = crand.Read(id[:])
	holder := hex.EncodeToString(id[:])
	wait := ingestClaimTTL
	if v.MaxWait > 0 {
		wait = min(wait, v.MaxWait)
	}
	deadline := time.Now().Add(wait)
	for attempt := 0; ; attempt++ {
		data, obj, err := v.Store.Get(ctx, path, 64<<10)
		var c urlClaim
		switch {
		case errors.Is(err, store.ErrNotFound):
			obj.ETag = ""
		case err != nil:
			return nil, nil, err
		default:
			if json.Unmarshal(data, &c) != nil {
				c = urlClaim{} // damaged: take it over
			}
		}
		now := time.Now()
		if c.Path != "" {
			dup, err := s.claimedNote(ctx, v, c)
			if err != nil || dup != nil {
				return nil, dup, err
			}
			// The note was deleted since: the vault no longer holds u.
		} else if c.Holder != "" && now.Before(c.Expires) {
			if now.After(deadline) {
				return nil, nil, newError(KindTargetIsBeingEdited, map[string]any{"retry_after_ms": max(time.Until(c.Expires).Milliseconds(), 100)},
					"Another call is ingesting this URL right now: nothing was fetched. Try again in a moment; it will answer that note.")
			}
			pause := time.Duration(20+rand.IntN(30)) * time.Millisecond << min(attempt, 5)
			select {
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			case <-time.After(pause):
			}
			continue
		}
		mine := urlClaim{URL: u, Holder: holder, Expires: now.Add(ingestClaimTTL)}
		etag, err := putClaim(ctx, v.Store, path, obj.ETag, mine)
		if errors.Is(err, store.ErrConflict) {
			continue // another call claimed it first: look again
		}
		if err != nil {
			return nil, nil, err
		}
		return &heldClaim{st: v.Store, path: path, etag: etag, url: u}, nil, nil
	}
}

// claimedNote is the answer for the note claim c records, or nil when that
// note no longer exists.
func (s *Core) claimedNote(ctx context.Context, v *Vault, c urlClaim) (*ingestOut, error) {
	data, _, err := v.Store.Get(ctx, c.Path, v.maxNote())
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	idx := WriteIndex{State: "current"}
	if cat, err := v.Catalogs.Catalog(ctx); err != nil {
		return nil, err
	} else if _, ok := cat.Note(c.Path); !ok {
		idx = WriteIndex{State: "pending", Note: "another server of this vault filed this note; this server's search and lists show it once its index has caught up (usually seconds)"}
	}
	return &ingestOut{
		noteResult: noteResult{Path: c.Path, ContentHash: hashOf(data), Size: int64(len(data)), Index: idx},
		Title:      c.Title, SourceURL: c.URL, SourceHash: c.SourceHash, ContentType: c.ContentType, Duplicate: true,
	}, nil
}

// done records the note filed for the claim's URL; the claim no longer
// lapses.
// A claim lost meanwhile (it lapsed and another call took it) is only
// logged: the note is written either way.
func (h *heldClaim) done(ctx context.Context, out *ingestOut) {
	c := urlClaim{URL: h.url, Path: out.Path, Title: out.Title, SourceHash: out.SourceHash, ContentType: out.ContentType}
	if _, err := putClaim(context.WithoutCancel(ctx), h.st, h.path, h.etag, c); err != nil {
		slog.Warn("ingest: the note was filed but its URL claim was not recorded", "path", out.Path, "err", err)
	}
}

// release gives the claim up (the ingest failed): the next call fetches.
func (h *heldClaim) release(ctx context.Context) {
	_ = h.st.Delete(context.WithoutCancel(ctx), h.path, h.etag)
}

// putClaim writes c conditionally on etag ("": the object must not exist).
func putClaim(ctx context.Context, st store.Store, path, etag string, c urlClaim) (string, error) {
	data, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	obj, err := st.Put(ctx, path, data, store.PutOptions{IfMatch: etag, IfNoneMatch: etag == ""})
	return obj.ETag, err
}
