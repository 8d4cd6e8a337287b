// Package vectors is the vector port: one embedding per passage, and one
// of each note's name (NameOrdinal), searched by cosine similarity. Adapters live in sub-packages (embedded = exact search in
// memory, qdrant); every adapter passes vectorstest.Run.
//
// Vectors are keyed by the passage's content hash, so an edit re-embeds only
// the passages that changed (see Index.Hashes). An index holds vectors of one
// embedding model and dimension (its Space); a model change is a Reset and a
// clean re-embed, never a mix.
package vectors

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/sheaf-dev/sheaf/shared/vault"
)

// Sentinel errors; adapters wrap them so callers test with errors.Is.
var (
	// ErrDimension: a vector's length is not the index's dimension.
	ErrDimension = errors.New("vectors: wrong vector dimension")
	// ErrNoSpace: the index has no model and dimension yet (Reset first).
	ErrNoSpace = errors.New("vectors: no embedding space (reset first)")
	// ErrVector: a vector holds NaN or an infinity.
	ErrVector = errors.New("vectors: vector is not finite")
)

// Space is the embedding model and dimension an index holds. The zero Space
// means "none yet".
type Space struct {
	Model string
	Dim   int
}

// NameOrdinal is the Ordinal of a note's name point: the vector of its
// title and aliases rather than of a passage. Every embedded note has one
// (a note without passages has only it), so a question put in other words
// than the note's finds it by what the note is called.
const NameOrdinal = -1

// NameHash is the Hash of a note's name point whose text is name: a
// content hash, marked so that a reader of Hashes tells it from a
// passage's (IsNameHash).
func NameHash(name string) string {
	sum := sha256.Sum256([]byte(name))
	return namePrefix + hex.EncodeToString(sum[:])
}

// IsNameHash reports whether h is a name point's Hash.
func IsNameHash(h string) bool { return strings.HasPrefix(h, namePrefix) }

const namePrefix = "name-"

// Point is one passage's vector, or a note's name (Ordinal NameOrdinal).
type Point struct {
	Path    string // the note's vault-relative path
	Ordinal int    // the passage's position in the note (vault.Passage.Ordinal), or NameOrdinal
	Hash    string // the passage's content hash (vault.Passage.Hash), or NameHash of the name
	// NoteHash identifies the note version the points came from (the
	// indexer stores vault.Note.Hash with a mark of the points' layout,
	// indexer.EmbeddedAs); every point of a note carries the same one.
	// Notes reports it, so a caller can tell which notes are stale.
	NoteHash string
	Heading  string   // the passage's innermost heading, for hits
	Tags     []string // the note's tags as written; filters match nested descendants
	Vector   []float32
}

// Filter narrows a search before scoring. Empty fields do not filter; all
// set fields must match.
type Filter struct {
	PathPrefix string   // plain string prefix of the path
	Tags       []string // every tag must match; "a" matches "a" and "a/b"
	Folder     string   // vault-relative folder: notes inside it at any depth
	Paths      []string // only these paths (nil: no restriction; empty: nothing)
}

// Hit is one ranked passage (or, from SearchNotes, a note's best passage).
type Hit struct {
	Path    string
	Ordinal int // the passage's, or NameOrdinal when the note's name matched best
	Heading string
	Score   float32 // cosine similarity: higher is better
}

// Reader is the read side of a vector index: all the tools use, so that
// the tools never write an index (the embeddings refresher holds the
// Index).
type Reader interface {
	// Space returns the recorded model and dimension; the zero Space if the
	// index was never Reset.
	Space(ctx context.Context) (Space, error)
	// Hashes returns a note's stored vectors by passage hash (possibly
	// normalised, so equal in direction, not length, to what was upserted).
	// A missing note gives an empty map and no error.
	Hashes(ctx context.Context, path string) (map[string][]float32, error)
	// Search returns the k passages most similar to query among those f
	// admits, best first. k <= 0 or an empty index gives no hits; a query of
	// the wrong length fails with ErrDimension (unless the index has no
	// space, when there is nothing to find).
	Search(ctx context.Context, query []float32, k int, f Filter) ([]Hit, error)
	// SearchNotes is Search grouped by note: each note's best passage,
	// for the k best notes.
	SearchNotes(ctx context.Context, query []float32, k int, f Filter) ([]Hit, error)
	// Notes returns every note with at least one point, mapped to the
	// NoteHash it was upserted with.
	Notes(ctx context.Context) (map[string]string, error)
}

// Index holds passage vectors of one Space.
type Index interface {
	Reader
	// Reset drops every point and records sp as the index's space.
	// sp.Dim must be positive.
	Reset(ctx context.Context, sp Space) error
	// Upsert replaces, for each Path among points, all of that note's points
	// with the given ones: a note's passage set is written as a whole. A note
	// that has no passages left is removed with Delete. Fails with ErrNoSpace
	// before Reset, ErrDimension or ErrVector on a bad vector, and then
	// changes nothing. Points need not be normalised.
	Upsert(ctx context.Context, points ...Point) error
	// Delete removes every point of the given notes; missing paths are not
	// an error.
	Delete(ctx context.Context, paths ...string) error
	Close() error
}

// MatchPath reports whether path passes f's path conditions (PathPrefix,
// Folder, Paths); tags are checked separately.
func (f Filter) MatchPath(path string) bool {
	if !strings.HasPrefix(path, f.PathPrefix) {
		return false
	}
	if dir := strings.Trim(f.Folder, "/"); dir != "" && !strings.HasPrefix(path, dir+"/") {
		return false
	}
	return f.Paths == nil || slices.Contains(f.Paths, path)
}

// MatchTags reports whether every filter tag is among keys (a point's
// vault.ExpandTags).
func (f Filter) MatchTags(keys []string) bool {
	for _, t := range f.Tags {
		if k := vault.NormalizeTag(t); k != "" && !slices.Contains(keys, k) {
			return false
		}
	}
	return true
}

// CheckVector fails with ErrDimension when v does not have dim components
// and with ErrVector when one is NaN or an infinity.
func CheckVector(v []float32, dim int) error {
	if len(v) != dim {
		return fmt.Errorf("%w: got %d, want %d", ErrDimension, len(v), dim)
	}
	for _, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return ErrVector
		}
	}
	return nil
}

// GroupPoints validates the points of an Upsert into an index of dimension
// dim (a path, CheckVector) and groups them by path in first-seen order; a
// later point with a note's ordinal replaces the earlier one.
func GroupPoints(points []Point, dim int) ([][]Point, error) {
	at := map[string]int{}
	var notes [][]Point
	for _, p := range points {
		if p.Path == "" {
			return nil, errors.New("upsert: empty path")
		}
		if err := CheckVector(p.Vector, dim); err != nil {
			return nil, fmt.Errorf("upsert %q #%d: %w", p.Path, p.Ordinal, err)
		}
		i, ok := at[p.Path]
		if !ok {
			i = len(notes)
			at[p.Path] = i
			notes = append(notes, nil)
		}
		if j := slices.IndexFunc(notes[i], func(q Point) bool { return q.Ordinal == p.Ordinal }); j >= 0 {
			notes[i][j] = p
		} else {
			notes[i] = append(notes[i], p)
		}
	}
	return notes, nil
}

// Normalize scales v to unit length in place, computing in float64 so huge
// and tiny vectors keep their direction (squares of float32 values cannot
// overflow a float64 sum); a zero vector stays zero.
func Normalize(v []float32) {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	if s == 0 {
		return
	}
	inv := 1 / math.Sqrt(s)
	for i := range v {
		v[i] = float32(float64(v[i]) * inv)
	}
}
