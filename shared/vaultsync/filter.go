package vaultsync

import (
	"fmt"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/sheaf-dev/sheaf/shared/vault"
)

// Filter decides which vault paths a sync carries: never an ignored one
// (vault.Ignored: hidden folders, .sheaf/ above all, and sync tools'
// working files), nor one an exclude pattern matches.
type Filter struct {
	patterns []string
}

// NewFilter checks the exclude patterns: doublestar globs over
// vault-relative paths ("Private/**", "**/*.pdf", "Drafts/*.md"); a
// pattern ending in "/" means that folder and everything in it.
func NewFilter(excludes []string) (*Filter, error) {
	f := &Filter{}
	for _, p := range excludes {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		p = strings.TrimPrefix(p, "/")
		if strings.HasSuffix(p, "/") {
			p += "**"
		}
		if !doublestar.ValidatePattern(p) {
			return nil, fmt.Errorf("--exclude %q: not a valid glob", p)
		}
		f.patterns = append(f.patterns, p)
	}
	return f, nil
}

// Skip reports whether p stays out of the sync.
func (f *Filter) Skip(p string) bool {
	if vault.Ignored(p) {
		return true
	}
	if f == nil {
		return false
	}
	for _, pat := range f.patterns {
		if ok, _ := doublestar.Match(pat, p); ok {
			return true
		}
	}
	return false
}
