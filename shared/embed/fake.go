package embed

import (
	"context"
	"hash/fnv"
	"math"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode"
)

// Fake is a deterministic embedder for tests: a bag of word hashes folded
// into Dimensions() buckets and L2-normalised. The same text always gives the
// same vector, texts sharing words have a higher cosine than texts that share
// none, and no text (not even "") gives a zero vector. Words are runs of
// letters and digits, lower-cased. It is safe for concurrent use.
type Fake struct {
	dim   int
	calls atomic.Int64
	texts atomic.Int64
}

var _ Embedder = (*Fake)(nil)

// NewFake returns a Fake of dim dimensions; dim < 1 means 64.
func NewFake(dim int) *Fake {
	if dim < 1 {
		dim = 64
	}
	return &Fake{dim: dim}
}

// Model is "fake-hash-<dim>".
func (f *Fake) Model() string { return "fake-hash-" + strconv.Itoa(f.dim) }

// Dimensions is the dim given to NewFake.
func (f *Fake) Dimensions() int { return f.dim }

// Calls is how many Embed calls have succeeded; Texts how many texts they held.
// Tests use them to check that unchanged passages are not re-embedded.
func (f *Fake) Calls() int { return int(f.calls.Load()) }

// Texts is the total number of texts embedded so far.
func (f *Fake) Texts() int { return int(f.texts.Load()) }

// Embed returns one vector per text; it fails only when ctx is done.
func (f *Fake) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(texts) == 0 {
		return nil, nil
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = f.vector(t)
	}
	f.calls.Add(1)
	f.texts.Add(int64(len(texts)))
	return out, nil
}

func (f *Fake) vector(text string) []float32 {
	v := make([]float64, f.dim)
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsNumber(r)
	})
	if len(words) == 0 {
		words = []string{text} // still distinct per text, and never zero
	}
	for _, w := range words {
		h := fnv.New64a()
		h.Write([]byte(w))
		sum := h.Sum64()
		sign := 1.0
		if sum>>63 == 1 {
			sign = -1
		}
		v[sum%uint64(f.dim)] += sign
	}
	var norm float64
	for _, x := range v {
		norm += x * x
	}
	out := make([]float32, f.dim)
	if norm == 0 {
		// Signed words cancelled out in every bucket: fall back to one axis.
		out[0] = 1
		return out
	}
	norm = math.Sqrt(norm)
	for i, x := range v {
		out[i] = float32(x / norm)
	}
	return out
}
