// Package vaultgen writes deterministic synthetic Obsidian-style vaults for
// benchmarks and load tests: the same Options always produce byte-identical
// files (and modification times).
//
// The shape imitates real vaults: about 5 KB per note on average with a long
// tail (a few notes of 50-100 KB), folders nested up to three levels, YAML
// frontmatter on about 70% of notes, a Zipf-distributed vocabulary with some
// non-English words, CJK sentences and emoji, 3-15 links per note aimed
// Zipf-wise at a few hubs (about 5% unresolved), nested tags, headings about
// every 600 bytes, code blocks holding fake links and tags, [!ai] callouts,
// @mentions and duplicate basenames across folders (about 1%).
package vaultgen

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Options say what to generate.
type Options struct {
	Notes int   // number of notes; must be positive
	Seed  int64 // the same seed gives the same vault
	// Folders is the number of folders below the root; 0 means Notes/100+1.
	Folders int
	// AttachmentsEvery makes every Nth note embed a generated attachment
	// (PNG, JPEG or PDF, in the "attachments" folder); 0 means none.
	AttachmentsEvery int
}

// Stats describe what Generate wrote.
type Stats struct {
	Notes int // Markdown files
	Bytes int // bytes of Markdown (attachments excluded)
	// Links counts the links written outside code: wikilinks, embeds
	// (attachments included) and Markdown links, each once.
	Links int
	// Tags counts tag assignments: each note's distinct tags (frontmatter and
	// inline #tags outside code), summed over notes.
	Tags int
}

// AttachmentDir is the folder that holds generated attachments.
const AttachmentDir = "attachments"

// Generate writes a synthetic vault into dir, which must be empty or absent.
func Generate(dir string, opt Options) (Stats, error) {
	if opt.Notes <= 0 {
		return Stats{}, errors.New("vaultgen: Notes must be positive")
	}
	if opt.Folders < 0 || opt.AttachmentsEvery < 0 {
		return Stats{}, errors.New("vaultgen: Folders and AttachmentsEvery must not be negative")
	}
	entries, err := os.ReadDir(dir)
	switch {
	case err == nil && len(entries) > 0:
		return Stats{}, fmt.Errorf("vaultgen: %s is not empty", dir)
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return Stats{}, fmt.Errorf("vaultgen: %w", err)
	}
	p := newPlan(opt)
	dirs := append([]string{""}, p.folders...)
	if opt.AttachmentsEvery > 0 {
		dirs = append(dirs, AttachmentDir)
	}
	for _, d := range dirs {
		if err := os.MkdirAll(filepath.Join(dir, filepath.FromSlash(d)), 0o755); err != nil {
			return Stats{}, fmt.Errorf("vaultgen: %w", err)
		}
	}

	// Each note has its own random stream, so workers may write in any order.
	workers := min(runtime.GOMAXPROCS(0), opt.Notes)
	next := make(chan int)
	results := make([]Stats, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g := &noteGen{p: p}
			for i := range next {
				if errs[w] != nil {
					continue // drain
				}
				errs[w] = g.write(dir, i, &results[w])
			}
		}()
	}
	for i := range opt.Notes {
		next <- i
	}
	close(next)
	wg.Wait()

	var st Stats
	for w := range workers {
		if errs[w] != nil {
			return Stats{}, errs[w]
		}
		st.Notes += results[w].Notes
		st.Bytes += results[w].Bytes
		st.Links += results[w].Links
		st.Tags += results[w].Tags
	}
	return st, nil
}

// notePlan is what other notes need to know about a note before it is
// written: where it is, how to link to it, and which headings it will have.
type notePlan struct {
	dir      string // "" for the root
	name     string // file name without ".md"
	aliases  []string
	size     int    // target body size in bytes
	headings int    // number of headings the body will have
	block    string // block id the body will carry, or ""
	fm       bool   // has frontmatter
	dup      bool   // basename shared with another note: link by path
}

func (n *notePlan) path() string {
	if n.dir == "" {
		return n.name + ".md"
	}
	return n.dir + "/" + n.name + ".md"
}

// plan is the vault-wide layout decided before any note is written.
type plan struct {
	opt     Options
	vocab   []string
	english int // vocab[:english] are English words
	tags    []string
	folders []string
	notes   []notePlan
	hubs    []int // Zipf rank -> note index, so hubs are scattered
}

func newPlan(opt Options) *plan {
	r := rand.New(rand.NewPCG(uint64(opt.Seed), 0x9e3779b97f4a7c15))
	p := &plan{opt: opt}
	p.vocab, p.english = buildVocab()
	p.tags = p.makeTags(r)
	p.folders = p.makeFolders(r)
	p.makeNotes(r)
	p.hubs = r.Perm(opt.Notes)
	return p
}

// word draws a distinctive (not very common) word, for names and tags: half
// the time an English one.
func (p *plan) word(r *rand.Rand) string {
	const skip = 150 // the most common words
	if r.IntN(2) == 0 {
		return p.vocab[skip+r.IntN(p.english-skip)]
	}
	return p.vocab[skip+r.IntN(len(p.vocab)-skip)]
}

func (p *plan) makeTags(r *rand.Rand) []string {
	tops := []string{"project", "area", "status", "topic", "type", "person", "place", "meeting", "garden", "dev"}
	seen := make(map[string]bool)
	var tags []string
	add := func(t string) {
		if !seen[t] {
			seen[t] = true
			tags = append(tags, t)
		}
	}
	for _, t := range tops {
		add(t)
	}
	for len(tags) < 160 {
		top := tops[r.IntN(len(tops))]
		child := top + "/" + strings.ToLower(p.word(r))
		add(child)
		if r.IntN(5) == 0 {
			add(child + "/" + strings.ToLower(p.word(r)))
		}
	}
	// Shuffle so that the Zipf head mixes top-level and nested tags.
	r.Shuffle(len(tags), func(i, j int) { tags[i], tags[j] = tags[j], tags[i] })
	return tags
}

func (p *plan) makeFolders(r *rand.Rand) []string {
	n := p.opt.Folders
	if n == 0 {
		n = p.opt.Notes/100 + 1
	}
	seen := make(map[string]bool)
	var folders []string
	for len(folders) < n {
		parent := ""
		if len(folders) > 0 && r.IntN(10) < 7 {
			parent = folders[r.IntN(len(folders))]
			if strings.Count(parent, "/") >= 2 { // already three levels deep
				parent = path.Dir(parent)
			}
		}
		var name string
		switch r.IntN(8) {
		case 0:
			name = strconv.Itoa(2020 + r.IntN(7))
		case 1:
			name = titleCase(p.word(r)) + " " + titleCase(p.word(r))
		default:
			name = titleCase(p.word(r))
		}
		full := path.Join(parent, name)
		if key := strings.ToLower(full); !seen[key] {
			seen[key] = true
			folders = append(folders, full)
		}
	}
	return folders
}

func (p *plan) makeNotes(r *rand.Rand) {
	n := p.opt.Notes
	p.notes = make([]notePlan, n)
	names := make(map[string]bool) // lower-cased names and aliases
	paths := make(map[string]bool) // lower-cased paths
	// Log-normal sizes: median ~3.3 KB, mean ~5 KB, about 1 in 800 over 50 KB.
	const mu, sigma = 8.11, 0.9
	for i := range p.notes {
		np := &p.notes[i]
		if len(p.folders) > 0 && r.IntN(10) != 0 {
			np.dir = p.folders[r.IntN(len(p.folders))]
		}
		np.size = int(math.Exp(mu + sigma*r.NormFloat64()))
		np.size = max(200, min(np.size, 100_000))
		np.headings = np.size / 600
		np.fm = r.IntN(10) < 7
		if r.IntN(10) == 0 {
			np.block = fmt.Sprintf("b%05x", r.IntN(1<<20))
		}

		// About 1% reuse an earlier note's name in another (non-root) folder.
		if i > 0 && r.IntN(100) == 0 && len(p.folders) > 1 {
			j := r.IntN(i)
			other := &p.notes[j]
			dir := p.folders[r.IntN(len(p.folders))]
			key := strings.ToLower(dir + "/" + other.name + ".md")
			if other.dir != "" && dir != other.dir && !paths[key] {
				np.dir, np.name = dir, other.name
				np.dup, other.dup = true, true
				paths[key] = true
				continue
			}
		}
		for attempt := 0; ; attempt++ {
			words := 1 + r.IntN(4)
			parts := make([]string, words)
			for k := range parts {
				parts[k] = p.word(r)
			}
			parts[0] = titleCase(parts[0])
			name := strings.Join(parts, " ")
			if attempt > 5 {
				name += " " + titleCase(p.word(r))
			}
			if !names[strings.ToLower(name)] {
				np.name = name
				break
			}
		}
		names[strings.ToLower(np.name)] = true
		paths[strings.ToLower(np.path())] = true
		// Aliases on ~10% of notes, only where there is frontmatter to hold them.
		if np.fm && r.IntN(7) == 0 {
			for k := 1 + r.IntN(2); k > 0; k-- {
				alias := titleCase(p.word(r)) + " " + p.word(r)
				if !names[strings.ToLower(alias)] {
					names[strings.ToLower(alias)] = true
					np.aliases = append(np.aliases, alias)
				}
			}
		}
	}
}

// headingTitle is heading k of note i. Linking notes call it too, so it
// has its own random stream.
func (p *plan) headingTitle(i, k int) string {
	r := rand.New(rand.NewPCG(uint64(p.opt.Seed)^0x7f4a7c159e3779b9, uint64(i)<<24|uint64(k)))
	switch r.IntN(12) {
	case 0:
		return []string{"Summary", "Next steps", "Notes", "Open questions", "Log"}[r.IntN(5)]
	case 1:
		return emoji[r.IntN(len(emoji))] + " " + titleCase(p.word(r))
	}
	parts := make([]string, 1+r.IntN(4))
	for k := range parts {
		parts[k] = p.word(r)
	}
	parts[0] = titleCase(parts[0])
	return strings.Join(parts, " ")
}

// titleCase upper-cases the first letter of s.
func titleCase(s string) string {
	c, n := utf8.DecodeRuneInString(s)
	if c == utf8.RuneError {
		return s
	}
	return string(unicode.ToUpper(c)) + s[n:]
}

// FirstNote is the vault-relative path of the first note of the vault at
// dir in file-walk order ("" when there is none): a note benchmarks can
// name without listing the vault.
func FirstNote(dir string) string {
	var first string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && p != dir && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			first, _ = filepath.Rel(dir, p)
			return filepath.SkipAll
		}
		return nil
	})
	return filepath.ToSlash(first)
}
