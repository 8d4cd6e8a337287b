package embed

import (
	"context"
	"errors"
	"math"
	"slices"
	"testing"
)

func cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return dot / math.Sqrt(na*nb)
}

func TestFake(t *testing.T) {
	ctx := context.Background()
	f := NewFake(64)
	in := []string{
		"Embeddings map text to vectors",
		"embeddings MAP text, to vectors!",
		"vectors of text embeddings for search",
		"the cat sat on the mat",
		"",
		"🙂",
	}
	got, err := f.Embed(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(in) {
		t.Fatalf("got %d vectors for %d texts", len(got), len(in))
	}
	for i, v := range got {
		if len(v) != 64 {
			t.Fatalf("vector %d has %d dimensions", i, len(v))
		}
		var n float64
		for _, x := range v {
			n += float64(x) * float64(x)
		}
		if math.Abs(n-1) > 1e-5 {
			t.Errorf("vector %d (%q) has squared norm %v, want 1", i, in[i], n)
		}
	}
	if !slices.Equal(got[0], got[1]) {
		t.Error("case and punctuation changed the vector")
	}
	again, _ := NewFake(64).Embed(ctx, in[:1])
	if !slices.Equal(again[0], got[0]) {
		t.Error("same text, different vector")
	}
	if related, unrelated := cosine(got[0], got[2]), cosine(got[0], got[3]); related <= unrelated {
		t.Errorf("cosine with shared words %v <= without %v", related, unrelated)
	}
	if slices.Equal(got[4], got[5]) {
		t.Error("two texts without words share a vector")
	}
	if f.Calls() != 1 || f.Texts() != len(in) || f.Dimensions() != 64 || f.Model() != "fake-hash-64" {
		t.Errorf("Calls %d Texts %d Dimensions %d Model %q", f.Calls(), f.Texts(), f.Dimensions(), f.Model())
	}
}

func TestFakeEdges(t *testing.T) {
	if d := NewFake(0).Dimensions(); d != 64 {
		t.Errorf("NewFake(0).Dimensions() = %d, want 64", d)
	}
	v, err := NewFake(1).Embed(context.Background(), []string{"a b c", "\xff\xfe"})
	if err != nil || len(v) != 2 || math.Abs(math.Abs(float64(v[0][0]))-1) > 1e-6 {
		t.Errorf("dim 1: %v, %v", v, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	f := NewFake(8)
	if _, err := f.Embed(ctx, []string{"a"}); !errors.Is(err, context.Canceled) || f.Calls() != 0 {
		t.Errorf("cancelled ctx: err %v, calls %d", err, f.Calls())
	}
}

func FuzzFake(f *testing.F) {
	f.Add("hello world", 16)
	f.Add("\xff", 1)
	f.Fuzz(func(t *testing.T, s string, dim int) {
		if dim > 4096 {
			return
		}
		v, err := NewFake(dim).Embed(context.Background(), []string{s})
		if err != nil || len(v) != 1 {
			t.Fatal(err)
		}
		var n float64
		for _, x := range v[0] {
			n += float64(x) * float64(x)
		}
		if math.Abs(n-1) > 1e-4 {
			t.Fatalf("squared norm %v for %q", n, s)
		}
	})
}
