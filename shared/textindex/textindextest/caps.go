package textindextest

import (
	"testing"

	"github.com/sheaf-dev/sheaf/shared/textindex"
)

// Caps declares what an adapter cannot do, so the suite skips the checks
// that need it. The zero value claims everything (Run).
type Caps struct {
	// LongFieldsTruncated: only the first words of a very long field are
	// searchable (Meilisearch indexes 65,535 word positions per attribute),
	// so a word at the end of a 1 MB note is not found.
	LongFieldsTruncated bool
	// CJKByWord: Chinese and Japanese match by dictionary word, not by
	// character, so one character inside a word ("京" of "北京") is not a
	// match (Meilisearch segments with jieba/lindera).
	CJKByWord bool
}

// RunWith runs the conformance suite for an adapter with the limits caps
// declares. newIndex must return a new, empty index; RunWith closes it when
// the subtest ends.
func RunWith(t *testing.T, newIndex func(t *testing.T) textindex.Index, caps Caps) {
	run(t, newIndex, caps)
}
