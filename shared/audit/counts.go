package audit

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"sort"
	"strings"
	"time"

	"github.com/sheaf-dev/sheaf/shared/store"
)

// The counts' objects, under the prefix. Each Flush writes one immutable
// delta (the paths it recorded and how often). Compact folds deltas into
// the base, which is split by a hash of the path into baseShards objects,
// each written with its own compare-and-swap, and deletes a delta once
// every shard it touches holds it. A reader sums, for each path, its
// shard and the deltas that shard has not merged: every instance's reads
// count, whichever instance asks, no object is ever written by two
// instances at once, and a read of a few paths reads a few shards.
const (
	baseDir    = "counts/base/"
	deltaDir   = "counts/delta/"
	baseShards = 64
	mergedKeep = time.Hour // how long a merged delta's name is kept after it is gone
)

// shardDoc is one shard of the base.
type shardDoc struct {
	Version int              `json:"version"`
	Counts  map[string]int64 `json:"counts"`
	// Merged names the deltas already in Counts. A name stays while its
	// delta exists and for mergedKeep after (a reader that listed the
	// delta before it was deleted must still skip it).
	Merged []string `json:"merged"`
}

func shardOf(path string) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(path))
	return int(h.Sum32() % baseShards)
}

func shardName(i int) string { return fmt.Sprintf("%s%02x.json.gz", baseDir, i) }

// deltaName is a delta's name: the time of its batch's first record, the
// instance, the flush's sequence number.
func deltaName(t time.Time, instance string, seq int) string {
	return fmt.Sprintf("%s-%s-%06d.json", t.UTC().Format("20060102T150405Z"), instance, seq)
}

func deltaTime(name string) (time.Time, bool) {
	stamp, _, ok := strings.Cut(name, "-")
	if !ok {
		return time.Time{}, false
	}
	t, err := time.Parse("20060102T150405Z", stamp)
	return t, err == nil
}

func (l *Log) putDelta(ctx context.Context, name string, counts map[string]int64) error {
	b, err := json.Marshal(counts)
	if err != nil {
		return err
	}
	_, err = l.o.Store.Put(ctx, l.o.Prefix+deltaDir+name, b, store.PutOptions{IfNoneMatch: true})
	if errors.Is(err, store.ErrConflict) {
		return nil // written by an earlier try of this flush
	}
	if err != nil {
		return fmt.Errorf("audit: writing count delta: %w", err)
	}
	return nil
}

// view is what a Log knows of the counts: the deltas as last listed (and
// their contents: deltas never change) and the shards read since.
type view struct {
	at     time.Time // of the listing
	names  []string
	deltas map[string]map[string]int64
	shards map[int]*shard
}

type shard struct {
	at     time.Time // read or revalidated; a shard older than the listing is revalidated
	etag   string
	doc    shardDoc
	merged map[string]bool
}

// addOwn adds the delta this Log just wrote: exact, since no shard has
// merged it yet.
func (v *view) addOwn(name string, counts map[string]int64) {
	if _, ok := v.deltas[name]; ok {
		return
	}
	v.names = append(v.names, name)
	v.deltas[name] = counts
}

// Count is path's retrieval count: every instance's flushed records (as
// of at most CountsTTL ago) and this instance's own, flushed or not. ok is
// false when the audit is off.
func (l *Log) Count(ctx context.Context, path string) (n int64, ok bool, err error) {
	m, err := l.Counts(ctx, []string{path})
	if l == nil || err != nil {
		return 0, l != nil, err
	}
	return m[path], true, nil
}

// Counts is Count for several paths at once; it reads only their shards.
func (l *Log) Counts(ctx context.Context, paths []string) (map[string]int64, error) {
	if l == nil {
		return nil, nil
	}
	out := make(map[string]int64, len(paths))
	l.viewMu.Lock()
	err := l.refresh(ctx, paths)
	if err == nil || l.view != nil {
		if err != nil {
			slog.Warn("audit: counts not refreshed; the last reading is used", "err", err)
			err = nil
		}
		v := l.view
		for _, p := range paths {
			sh := v.shards[shardOf(p)]
			if sh == nil {
				continue
			}
			n := sh.doc.Counts[p]
			for _, d := range v.names {
				if !sh.merged[d] {
					n += v.deltas[d][p]
				}
			}
			out[p] = n
		}
	}
	l.viewMu.Unlock()
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	if len(l.pending) > 0 {
		for _, r := range l.pending {
			if _, ok := out[r.Path]; ok {
				out[r.Path]++
			}
		}
	}
	l.mu.Unlock()
	return out, nil
}

// refresh lists the deltas again when the listing is older than CountsTTL
// (fetching the new ones), then reads or revalidates the shards of paths
// that are older than the listing: a delta deleted by a compaction between
// the listing and the shard's read is then in the shard, and skipped as
// merged. Called with viewMu held.
func (l *Log) refresh(ctx context.Context, paths []string) error {
	now := l.o.Now()
	v := l.view
	if v == nil || now.Sub(v.at) >= l.o.CountsTTL {
		names, err := l.listDeltas(ctx)
		if err != nil {
			return err
		}
		nv := &view{at: now, deltas: map[string]map[string]int64{}, shards: map[int]*shard{}}
		if v != nil {
			nv.shards = v.shards
		}
		for _, name := range names {
			d, ok := map[string]int64(nil), false
			if v != nil {
				d, ok = v.deltas[name]
			}
			if !ok {
				d, err = l.getDelta(ctx, name)
				if errors.Is(err, store.ErrNotFound) {
					continue // compacted since it was listed: the shards have it
				}
				if err != nil {
					return err
				}
			}
			nv.names = append(nv.names, name)
			nv.deltas[name] = d
		}
		l.view, v = nv, nv
	}
	for _, p := range paths {
		i := shardOf(p)
		sh := v.shards[i]
		if sh != nil && !sh.at.Before(v.at) {
			continue
		}
		obj, err := l.o.Store.Stat(ctx, l.o.Prefix+shardName(i))
		switch {
		case errors.Is(err, store.ErrNotFound):
			sh = &shard{doc: shardDoc{Counts: map[string]int64{}}}
		case err != nil:
			return fmt.Errorf("audit: reading the counts: %w", err)
		case sh != nil && sh.etag == obj.ETag:
		default:
			doc, etag, err := l.getShard(ctx, i)
			if err != nil {
				return err
			}
			sh = &shard{etag: etag, doc: doc, merged: make(map[string]bool, len(doc.Merged))}
			for _, m := range doc.Merged {
				sh.merged[m] = true
			}
		}
		sh.at = l.o.Now()
		v.shards[i] = sh
	}
	return nil
}

// unmerged is how many listed deltas the view holds; Flush compacts when
// it reaches CompactAt.
func (v *view) unmerged() int { return len(v.names) }

func (l *Log) listDeltas(ctx context.Context) ([]string, error) {
	var names []string
	dir := l.o.Prefix + deltaDir
	err := l.o.Store.List(ctx, dir, func(o store.Object) error {
		if name, ok := strings.CutPrefix(o.Path, dir); ok && strings.HasSuffix(name, ".json") && !strings.Contains(name, "/") {
			names = append(names, name)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("audit: listing count deltas: %w", err)
	}
	sort.Strings(names)
	return names, nil
}

func (l *Log) getDelta(ctx context.Context, name string) (map[string]int64, error) {
	b, _, err := l.o.Store.Get(ctx, l.o.Prefix+deltaDir+name, 64<<20)
	if err != nil {
		return nil, err
	}
	d := map[string]int64{}
	if err := json.Unmarshal(b, &d); err != nil {
		slog.Warn("audit: a count delta is unreadable; skipped", "name", name, "err", err)
		return map[string]int64{}, nil
	}
	return d, nil
}

func (l *Log) getShard(ctx context.Context, i int) (shardDoc, string, error) {
	b, obj, err := l.o.Store.Get(ctx, l.o.Prefix+shardName(i), 1<<30)
	if errors.Is(err, store.ErrNotFound) {
		return shardDoc{Counts: map[string]int64{}}, "", nil
	}
	if err != nil {
		return shardDoc{}, "", fmt.Errorf("audit: reading the counts: %w", err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return shardDoc{}, "", fmt.Errorf("audit: the counts are unreadable: %w", err)
	}
	var doc shardDoc
	if err := json.NewDecoder(io.LimitReader(zr, 4<<30)).Decode(&doc); err != nil {
		return shardDoc{}, "", fmt.Errorf("audit: the counts are unreadable: %w", err)
	}
	if doc.Counts == nil {
		doc.Counts = map[string]int64{}
	}
	return doc, obj.ETag, nil
}

// Compact folds the listed deltas into the shards they touch, each shard
// with its own conditional write, and deletes a delta once every shard it
// touches holds it. A shard another instance wrote first is left for the
// next compaction (store.ErrConflict is returned; nothing is lost). Any
// instance may compact at any time.
func (l *Log) Compact(ctx context.Context) error {
	if l == nil {
		return nil
	}
	names, err := l.listDeltas(ctx)
	if err != nil {
		return err
	}
	deltas := map[string]map[string]int64{}
	touched := map[int][]string{} // shard -> deltas with paths in it
	for _, name := range names {
		d, err := l.getDelta(ctx, name)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		deltas[name] = d
		seen := map[int]bool{}
		for p := range d {
			if i := shardOf(p); !seen[i] {
				seen[i] = true
				touched[i] = append(touched[i], name)
			}
		}
		if len(d) == 0 {
			touched[-1] = append(touched[-1], name)
		}
	}
	if len(deltas) == 0 {
		return nil
	}
	// Read the touched shards, then list again: a merged name absent from
	// this later listing is gone for good (see shardDoc.Merged).
	type job struct {
		doc  shardDoc
		etag string
	}
	jobs := map[int]*job{}
	for i := range touched {
		if i < 0 {
			continue
		}
		doc, etag, err := l.getShard(ctx, i)
		if err != nil {
			return err
		}
		jobs[i] = &job{doc, etag}
	}
	after, err := l.listDeltas(ctx)
	if err != nil {
		return err
	}
	listed := make(map[string]bool, len(after))
	for _, n := range after {
		listed[n] = true
	}
	now := l.o.Now()
	holds := map[string]int{} // delta -> shards that hold it now
	var conflict error
	for i, j := range jobs {
		merged := make(map[string]bool, len(j.doc.Merged))
		var keep []string
		for _, m := range j.doc.Merged {
			merged[m] = true
			t, ok := deltaTime(m)
			if listed[m] || ok && now.Sub(t) < mergedKeep {
				keep = append(keep, m)
			}
		}
		var folded []string
		for _, name := range touched[i] {
			if merged[name] {
				holds[name]++
				continue
			}
			for p, n := range deltas[name] {
				if shardOf(p) == i {
					j.doc.Counts[p] += n
				}
			}
			folded = append(folded, name)
		}
		if len(folded) == 0 && len(keep) == len(j.doc.Merged) {
			continue
		}
		j.doc.Version = 1
		j.doc.Merged = append(keep, folded...)
		sort.Strings(j.doc.Merged)
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		if err := json.NewEncoder(zw).Encode(&j.doc); err != nil {
			return err
		}
		if err := zw.Close(); err != nil {
			return err
		}
		opts := store.PutOptions{IfMatch: j.etag}
		if j.etag == "" {
			opts = store.PutOptions{IfNoneMatch: true}
		}
		if _, err := l.o.Store.Put(ctx, l.o.Prefix+shardName(i), buf.Bytes(), opts); err != nil {
			if errors.Is(err, store.ErrConflict) {
				conflict = err
				continue
			}
			return fmt.Errorf("audit: writing the counts: %w", err)
		}
		for _, name := range folded {
			holds[name]++
		}
	}
	for name, d := range deltas {
		need := 0
		seen := map[int]bool{}
		for p := range d {
			if i := shardOf(p); !seen[i] {
				seen[i] = true
				need++
			}
		}
		if holds[name] < need {
			continue
		}
		if err := l.o.Store.Delete(ctx, l.o.Prefix+deltaDir+name, ""); err != nil {
			slog.Warn("audit: a merged count delta was not deleted; the next compaction retries", "name", name, "err", err)
		}
	}
	l.viewMu.Lock()
	l.view = nil
	l.viewMu.Unlock()
	return conflict
}

// Read calls fn for every record logged on day (UTC), segment by segment
// in name order; records within a segment are in the order recorded.
func (l *Log) Read(ctx context.Context, day time.Time, fn func(Record) error) error {
	if l == nil {
		return nil
	}
	dir := l.o.Prefix + "log/" + day.UTC().Format("2006/01/02") + "/"
	var names []string
	if err := l.o.Store.List(ctx, dir, func(o store.Object) error {
		names = append(names, o.Path)
		return nil
	}); err != nil {
		return err
	}
	sort.Strings(names)
	for _, n := range names {
		b, _, err := l.o.Store.Get(ctx, n, 0)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for sc.Scan() {
			var r Record
			if json.Unmarshal(sc.Bytes(), &r) != nil {
				continue
			}
			if err := fn(r); err != nil {
				return err
			}
		}
	}
	return nil
}

// Prune deletes the log segments of days before before (UTC); counts are
// kept. It is the retention policy: nothing calls it by itself.
func (l *Log) Prune(ctx context.Context, before time.Time) (int, error) {
	if l == nil {
		return 0, nil
	}
	dir := l.o.Prefix + "log/"
	cut := before.UTC().Format("2006/01/02")
	var old []string
	if err := l.o.Store.List(ctx, dir, func(o store.Object) error {
		rest := strings.TrimPrefix(o.Path, dir)
		if len(rest) > 10 && rest[:10] < cut {
			old = append(old, o.Path)
		}
		return nil
	}); err != nil {
		return 0, err
	}
	for i, p := range old {
		if err := l.o.Store.Delete(ctx, p, ""); err != nil {
			return i, err
		}
	}
	return len(old), nil
}

// Close stops the background flush and writes what is buffered.
func (l *Log) Close(ctx context.Context) error {
	if l == nil {
		return nil
	}
	select {
	case <-l.stopc:
	default:
		close(l.stopc)
	}
	<-l.done
	return l.Flush(ctx)
}
