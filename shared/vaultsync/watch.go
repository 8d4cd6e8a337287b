package vaultsync

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
	"golang.org/x/text/unicode/norm"
)

// settle is how long after an event a batch due by MaxWait waits for the
// event's twin (a rename's other half).
const settle = 20 * time.Millisecond

// WatchOptions pace Watch.
type WatchOptions struct {
	// Quiet is how long the folder must be still before changes are sent
	// (editors save in several steps); 0 is 1 s.
	Quiet time.Duration
	// MaxWait bounds how long a change waits while others keep coming, so
	// a constant trickle of saves still goes out; 0 is 10 s.
	MaxWait time.Duration
	// Sent hears each batch's report (or error).
	Sent func(*Report, error)
}

// Watch follows the local folder root (the folder Local is over) and
// pushes what changes in it until ctx ends. Changes gathered in one batch
// are synced together (RunPaths), so a rename, whose two events arrive in
// one batch, is carried as one move. When the watcher loses events (an
// overflow), the next batch syncs everything (Run).
func (s *Syncer) Watch(ctx context.Context, root string, o WatchOptions) error {
	if o.Quiet <= 0 {
		o.Quiet = time.Second
	}
	if o.MaxWait <= 0 {
		o.MaxWait = 10 * time.Second
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	defer w.Close()
	rel := func(p string) (string, bool) {
		r, err := filepath.Rel(root, p)
		if err != nil || r == "." || strings.HasPrefix(r, "..") {
			return "", false
		}
		r = norm.NFC.String(filepath.ToSlash(r))
		return r, !s.Filter.Skip(r)
	}
	pending := map[string]bool{}
	// addTree watches dir and the folders under it; with mark, the files
	// in them are changes too (a folder created or moved in).
	addTree := func(dir string, mark bool) {
		_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if p != root {
				if r, ok := rel(p); !ok {
					if d.IsDir() {
						return filepath.SkipDir
					}
					return nil
				} else if !d.IsDir() && mark {
					pending[r] = true
				}
			}
			if d.IsDir() {
				_ = w.Add(p)
			}
			return nil
		})
	}
	addTree(root, false)

	quiet := time.NewTimer(time.Hour)
	quiet.Stop()
	var deadline <-chan time.Time
	all := false
	extended := false // the deadline was put off once for a twin event
	flush := func() {
		deadline, extended = nil, false
		if !all && len(pending) == 0 {
			return
		}
		var rep *Report
		var err error
		if all {
			rep, err = s.Run(ctx)
		} else {
			paths := make([]string, 0, len(pending))
			for p := range pending {
				paths = append(paths, p)
			}
			rep, err = s.RunPaths(ctx, paths)
		}
		all = false
		clear(pending)
		if o.Sent != nil && ctx.Err() == nil {
			o.Sent(rep, err)
		}
	}
	var last time.Time // of the latest event
	touched := func() {
		last = time.Now()
		quiet.Reset(o.Quiet)
		if deadline == nil {
			deadline = time.After(o.MaxWait)
		}
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case err, ok := <-w.Errors:
			if !ok {
				return nil
			}
			_ = err // an overflow lost events: sync everything next
			all = true
			touched()
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			r, keep := rel(ev.Name)
			if !keep {
				continue
			}
			if ev.Has(fsnotify.Create) {
				if st, err := os.Stat(ev.Name); err == nil && st.IsDir() {
					addTree(ev.Name, true)
				}
			}
			pending[r] = true
			touched()
		case <-quiet.C:
			flush()
		case <-deadline:
			// A rename's two events come together: when the deadline falls
			// just after one of them, give the other a moment, once.
			if d := time.Since(last); d < settle && !extended {
				deadline, extended = time.After(settle-d), true
				continue
			}
			quiet.Stop()
			flush()
		}
	}
}
