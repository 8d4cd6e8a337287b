package config

import (
	"context"

	"github.com/sheaf-dev/sheaf/shared/vectors"
)

var _ vectors.Index = lazyVectors{}

// lazyVectors is a vector index opened in the background: the embedded
// one reads its whole file (tens of MB for a big vault), which a server
// does not wait for before answering initialize. Every method waits for
// the open (or for its context) and then answers as the index does, or
// with the error that kept it from opening.
type lazyVectors struct{ *opening[vectors.Index] }

// openVectorsLazily opens the index with open in a goroutine, once gate is
// closed; begin closes it, and every method calls it before waiting.
func openVectorsLazily(gate <-chan struct{}, begin func(), open func() (vectors.Index, error)) lazyVectors {
	return lazyVectors{openInBackground(gate, begin, open)}
}

// Space implements vectors.Reader.
func (l lazyVectors) Space(ctx context.Context) (vectors.Space, error) {
	ix, err := l.index(ctx)
	if err != nil {
		return vectors.Space{}, err
	}
	return ix.Space(ctx)
}

// Hashes implements vectors.Reader.
func (l lazyVectors) Hashes(ctx context.Context, path string) (map[string][]float32, error) {
	ix, err := l.index(ctx)
	if err != nil {
		return nil, err
	}
	return ix.Hashes(ctx, path)
}

// Search implements vectors.Reader.
func (l lazyVectors) Search(ctx context.Context, query []float32, k int, f vectors.Filter) ([]vectors.Hit, error) {
	ix, err := l.index(ctx)
	if err != nil {
		return nil, err
	}
	return ix.Search(ctx, query, k, f)
}

// SearchNotes implements vectors.Reader.
func (l lazyVectors) SearchNotes(ctx context.Context, query []float32, k int, f vectors.Filter) ([]vectors.Hit, error) {
	ix, err := l.index(ctx)
	if err != nil {
		return nil, err
	}
	return ix.SearchNotes(ctx, query, k, f)
}

// Notes implements vectors.Reader.
func (l lazyVectors) Notes(ctx context.Context) (map[string]string, error) {
	ix, err := l.index(ctx)
	if err != nil {
		return nil, err
	}
	return ix.Notes(ctx)
}

// Reset implements vectors.Index.
func (l lazyVectors) Reset(ctx context.Context, sp vectors.Space) error {
	ix, err := l.index(ctx)
	if err != nil {
		return err
	}
	return ix.Reset(ctx, sp)
}

// Upsert implements vectors.Index.
func (l lazyVectors) Upsert(ctx context.Context, points ...vectors.Point) error {
	ix, err := l.index(ctx)
	if err != nil {
		return err
	}
	return ix.Upsert(ctx, points...)
}

// Delete implements vectors.Index.
func (l lazyVectors) Delete(ctx context.Context, paths ...string) error {
	ix, err := l.index(ctx)
	if err != nil {
		return err
	}
	return ix.Delete(ctx, paths...)
}

// Flush writes the index to its file when it buffers writes (the embedded
// one does).
func (l lazyVectors) Flush(ctx context.Context) error {
	ix, err := l.index(ctx)
	if err != nil {
		return err
	}
	if f, ok := ix.(interface{ Flush(context.Context) error }); ok {
		return f.Flush(ctx)
	}
	return nil
}
