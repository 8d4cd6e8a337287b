package historytest

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// Latencies collects the durations of one operation for a benchmark's
// percentiles.
type Latencies []time.Duration

// Time runs fn and records how long it took.
func (l *Latencies) Time(fn func()) {
	start := time.Now()
	fn()
	*l = append(*l, time.Since(start))
}

// Report adds p50 and p99 (in microseconds) to b's results.
func (l Latencies) Report(b *testing.B, name string) {
	if len(l) == 0 {
		return
	}
	s := slices.Clone(l)
	slices.Sort(s)
	at := func(q float64) float64 { return float64(s[min(len(s)-1, int(q*float64(len(s))))].Microseconds()) }
	b.ReportMetric(at(0.50), name+"-p50-µs")
	b.ReportMetric(at(0.99), name+"-p99-µs")
}

// Note returns a note of about size bytes: headings and paragraphs of
// words drawn from a vocabulary, as compressible as prose.
func Note(rng *rand.Rand, size int) []byte {
	words := strings.Fields("the a of and to in is that for it as with was on be by this are or an from at which " +
		"note vault link tag heading section agent write history merge version restore undo project plan risk " +
		"budget meeting idea draft review summary question answer source reference quote example detail change")
	var sb strings.Builder
	for i := 0; sb.Len() < size; i++ {
		if i%40 == 0 {
			fmt.Fprintf(&sb, "\n## Section %d\n\n", i/40)
		}
		sb.WriteString(words[rng.IntN(len(words))])
		if i%12 == 11 {
			sb.WriteString(".\n")
		} else {
			sb.WriteByte(' ')
		}
	}
	return []byte(sb.String())
}

// Edit changes the start of one line of note, keeping its size, as a
// small edit does.
func Edit(rng *rand.Rand, note []byte, n int) []byte {
	out := append([]byte{}, note...)
	lines := strings.SplitAfter(string(note), "\n")
	i, off := rng.IntN(len(lines)), 0
	for _, l := range lines[:i] {
		off += len(l)
	}
	mark := fmt.Sprintf("[%d]", n)
	copy(out[off:min(len(out), off+max(0, len(lines[i])-1))], mark)
	return out
}
