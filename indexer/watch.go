package indexer

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
	"golang.org/x/text/unicode/norm"

	"github.com/sheaf-dev/sheaf/shared/vault"
)

// Watch follows a vault folder with fsnotify and feeds every change to the
// indexer as a hint: files are re-read after a short quiet period (editors
// save in several steps), folder creations, renames and removals trigger a
// reconcile pass. It saves the catalog snapshot after changes settle, and
// returns when ctx ends.
func (ix *Indexer) Watch(ctx context.Context, root string) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	defer w.Close()
	addTree := func(dir string) {
		_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return nil
			}
			if p != dir && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			_ = w.Add(p)
			return nil
		})
	}
	addTree(root)

	const quiet = 150 * time.Millisecond
	pending := map[string]bool{} // vault-relative paths
	resync := false
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	saveTimer := time.NewTimer(time.Hour)
	saveTimer.Stop()

	for {
		select {
		case <-ctx.Done():
			_ = ix.Save(context.WithoutCancel(ctx))
			return nil
		case err, ok := <-w.Errors:
			if !ok {
				return nil
			}
			ix.log().Warn("file watcher", "err", err)
			resync = true // an overflow loses events: reconcile
			timer.Reset(quiet)
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			rel, err := filepath.Rel(root, ev.Name)
			if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
				continue
			}
			rel = norm.NFC.String(filepath.ToSlash(rel))
			if vault.Ignored(rel) {
				continue
			}
			if ev.Has(fsnotify.Create) {
				if st, err := os.Stat(ev.Name); err == nil && st.IsDir() {
					addTree(ev.Name)
					resync = true
				}
			}
			if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
				// A folder may have gone with everything in it.
				if _, ok := ix.Catalog.Note(rel); !ok {
					if _, ok := ix.Catalog.Attachment(rel); !ok {
						resync = true
					}
				}
			}
			pending[rel] = true
			timer.Reset(quiet)
		case <-timer.C:
			if resync {
				resync = false
				clear(pending)
				if _, err := ix.Sync(ctx, nil); err != nil && ctx.Err() == nil {
					ix.log().Warn("reconcile after folder change", "err", err)
				}
			}
			for p := range pending {
				if err := ix.Apply(ctx, p); err != nil && ctx.Err() == nil {
					ix.log().Debug("indexing after change", "path", p, "err", err)
				}
			}
			clear(pending)
			saveTimer.Reset(2 * time.Second)
		case <-saveTimer.C:
			if err := ix.Save(ctx); err != nil {
				ix.log().Warn("saving the catalog snapshot", "err", err)
			}
		}
	}
}
