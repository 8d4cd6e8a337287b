package config

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/sheaf-dev/sheaf/shared/vectors"
	vecembedded "github.com/sheaf-dev/sheaf/shared/vectors/embedded"
)

// TestLazyVectors: calls wait for the background open (or their context),
// then answer from the opened index; a failed open is every call's error;
// Flush reaches the embedded index's file.
func TestLazyVectors(t *testing.T) {
	path := filepath.Join(t.TempDir(), "vectors.bin")
	gate := make(chan struct{})
	l := openVectorsLazily(begun(), func() {}, func() (vectors.Index, error) {
		<-gate
		return vecembedded.Open(path)
	})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Millisecond)
	defer cancel()
	if _, err := l.Space(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Space before the open: %v, want to wait until the deadline", err)
	}
	close(gate)
	sp := vectors.Space{Model: "m", Dim: 2}
	if err := l.Reset(t.Context(), sp); err != nil {
		t.Fatal(err)
	}
	if err := l.Upsert(t.Context(), vectors.Point{Path: "a.md", Hash: "h", Vector: []float32{1, 0}}); err != nil {
		t.Fatal(err)
	}
	if hits, err := l.Search(t.Context(), []float32{1, 0}, 1, vectors.Filter{}); err != nil || len(hits) != 1 || hits[0].Path != "a.md" {
		t.Fatalf("search: %v, %v", hits, err)
	}
	if err := l.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := vecembedded.Open(path)
	if err != nil || again.Len() != 1 {
		t.Fatalf("reopened: %v, %v", again, err)
	}

	bad := openVectorsLazily(begun(), func() {}, func() (vectors.Index, error) { return nil, errors.New("disk on fire") })
	if _, err := bad.Notes(t.Context()); err == nil || err.Error() != "disk on fire" {
		t.Errorf("a failed open: %v", err)
	}
	if err := bad.Close(); err != nil {
		t.Errorf("closing a failed open: %v", err)
	}
}

// TestLazyVectorsOpenOnBegin: the open waits for the gate, and the first
// call begins it.
func TestLazyVectorsOpenOnBegin(t *testing.T) {
	gate := make(chan struct{})
	var once sync.Once
	opened := make(chan struct{})
	l := openVectorsLazily(gate, func() { once.Do(func() { close(gate) }) }, func() (vectors.Index, error) {
		close(opened)
		return vecembedded.Open(filepath.Join(t.TempDir(), "vectors.bin"))
	})
	select {
	case <-opened:
		t.Fatal("opened before the gate")
	case <-time.After(20 * time.Millisecond):
	}
	if _, err := l.Notes(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

// begun is a gate that is open.
func begun() <-chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}
