package folder

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// PruneStats counts what Prune removed.
type PruneStats struct {
	Versions int   // version records dropped from the log
	Blobs    int   // content files deleted
	Bytes    int64 // bytes freed in blobs
}

// Prune drops the versions the policy no longer keeps (see Policy), then
// deletes the content no remaining version names. It rewrites the log
// (a new file renamed over the old one) only when a version goes.
func (s *Store) Prune(ctx context.Context) (PruneStats, error) {
	var st PruneStats
	err := s.locked(func() error {
		if err := s.refresh(true); err != nil {
			return err
		}
		s.lastPrune = s.now()
		kept, dropped := s.plan(s.now())
		if dropped > 0 {
			if err := s.rewrite(kept); err != nil {
				return err
			}
			st.Versions = dropped
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		return s.collect(&st)
	})
	return st, err
}

// maybePrune prunes when the last prune is older than Options.PruneEvery.
// A failed prune is retried at the next interval; it never fails a write.
func (s *Store) maybePrune(ctx context.Context) {
	every := s.opts.PruneEvery
	if every < 0 {
		return
	}
	if every == 0 {
		every = DefaultPruneEvery
	}
	s.mu.Lock()
	due := s.now().Sub(s.lastPrune) >= every
	if due {
		s.lastPrune = s.now()
	}
	s.mu.Unlock()
	if due {
		_, _ = s.Prune(ctx)
	}
}

// plan returns the records to keep, in log order, and how many versions go.
func (s *Store) plan(now time.Time) (kept []*record, dropped int) {
	ix, pol := s.idx, s.opts.Policy
	// The versions open transactions need: their own and those they replaced.
	need := map[string]bool{}
	for tx, recs := range ix.byTx {
		open := ix.holds[tx].After(now)
		for _, r := range recs {
			open = open || now.Sub(r.V.Time) < pol.openFor()
		}
		if !open {
			continue
		}
		for _, r := range recs {
			need[r.V.ID] = true
			need[r.V.Parent] = true
		}
	}
	keep := map[uint64]bool{}
	for _, recs := range ix.byPath {
		var live []*record
		for _, r := range recs {
			if !ix.replaced[r.V.ID] {
				live = append(live, r)
			}
		}
		for i, r := range live {
			rank := len(live) - 2 - i // 0: the newest noncurrent; -1: current
			if rank < 0 || rank < pol.keep() || need[r.V.ID] || now.Sub(live[i+1].V.Time) < pol.days() {
				keep[r.Seq] = true
			}
		}
	}
	all := make([]*record, 0, len(ix.ids)+len(ix.holds))
	for _, r := range ix.ids {
		all = append(all, r)
		if !keep[r.Seq] {
			dropped++
		}
	}
	slices.SortFunc(all, func(a, b *record) int { return compareSeq(a.Seq, b.Seq) })
	for _, r := range all {
		if keep[r.Seq] {
			kept = append(kept, r)
		}
	}
	for tx, until := range ix.holds {
		if until.After(now) {
			kept = append(kept, &record{Seq: ix.seq, Hold: tx, Until: until})
		}
	}
	return kept, dropped
}

func compareSeq(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// rewrite replaces the log with recs and reloads the index.
func (s *Store) rewrite(recs []*record) error {
	tmp, err := os.CreateTemp(s.dir, ".log-*")
	if err != nil {
		return fmt.Errorf("history: %w", err)
	}
	defer os.Remove(tmp.Name())
	for _, r := range recs {
		b, err := encodeRecord(r)
		if err == nil {
			_, err = tmp.Write(b)
		}
		if err != nil {
			tmp.Close()
			return fmt.Errorf("history: rewrite log: %w", err)
		}
	}
	if !s.opts.NoSync {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), s.logPath())
	}
	if err != nil {
		return fmt.Errorf("history: rewrite log: %w", err)
	}
	if !s.opts.NoSync {
		syncDir(s.dir)
	}
	s.idx, s.logInfo, s.logSize = nil, nil, 0
	return s.refresh(true)
}

// collect deletes the blobs no version names, and temporary files left by
// a crash (older than an hour).
func (s *Store) collect(st *PruneStats) error {
	used := map[string]bool{}
	for _, r := range s.idx.ids {
		if r.V.Hash != "" {
			used[r.V.Hash] = true
		}
	}
	root := filepath.Join(s.dir, "blobs")
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		name := d.Name()
		stale := false
		switch {
		case strings.HasPrefix(name, ".tmp-"):
			if info, err := d.Info(); err == nil && time.Since(info.ModTime()) > time.Hour {
				stale = true
			}
		case strings.HasSuffix(name, ".zst") && !used[strings.TrimSuffix(name, ".zst")]:
			stale = true
		}
		if !stale {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		if err := os.Remove(p); err == nil {
			st.Blobs++
			st.Bytes += info.Size()
		}
		return nil
	})
}
