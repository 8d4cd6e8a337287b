// Package audit is the read audit: an append-only log of every document a
// read tool returned (who asked, as which agent, through which tool, which
// path, when) and each path's retrieval_count.
//
// It writes through the store port, so one design serves a local vault (an
// fs store over the state folder) and the cloud (S3 objects under the
// vault's .sheaf/audit/ prefix), and stays correct with any number of
// processes or Lambda instances writing at once: every object is written
// once by the one instance that names it, and counts are per-instance
// deltas summed on read (see Counts). docs/audit.md describes the layout.
//
// A nil *Log is the audit switched off: every method is a no-op and Count
// answers false.
package audit

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/sheaf-dev/sheaf/shared/store"
)

// DefaultPrefix is where the audit lives in a vault's store.
const DefaultPrefix = ".sheaf/audit/"

// UnknownAgent is recorded when a caller names no agent_id.
const UnknownAgent = "unknown"

// Record is one returned document.
type Record struct {
	Time    time.Time `json:"time"`
	Caller  string    `json:"caller"`   // the authenticated identity (key name, OAuth subject, "local")
	AgentID string    `json:"agent_id"` // as the caller names itself; UnknownAgent when it does not
	Tool    string    `json:"tool"`
	Path    string    `json:"path"`
}

// Options configure a Log; zero fields take the defaults.
type Options struct {
	Store  store.Store
	Prefix string // default DefaultPrefix; must end in '/'
	// Instance names this process's objects; default a random id. Two
	// live processes must never share one.
	Instance string
	// FlushEvery is how often buffered records are written in the
	// background; default 5 s; negative: never in the background (a
	// Lambda handler calls Flush before it returns, since a frozen
	// instance runs no timers).
	FlushEvery time.Duration
	// MaxSegmentBytes bounds one log object; a flush with more writes
	// several. Default 1 MiB.
	MaxSegmentBytes int
	// MaxPending bounds the records held in memory while the store cannot
	// be written; beyond it the oldest are dropped (and counted in
	// Stats). Default 100,000.
	MaxPending int
	// CountsTTL is how long a summed view of the counts is used before it
	// is read again; default 30 s.
	CountsTTL time.Duration
	// CompactAt is how many unmerged count deltas make a Flush fold them
	// into the base; default 64.
	CompactAt int
	Now       func() time.Time // default time.Now
}

// Log is the read audit of one vault.
type Log struct {
	o     Options
	stopc chan struct{}
	done  chan struct{}

	mu      sync.Mutex
	pending []Record
	seq     int
	dropped int64
	failed  error // the last flush's error, for Stats

	flushMu sync.Mutex // one flush at a time

	viewMu sync.Mutex
	view   *view
}

// New opens the audit log of o.Store. It reads nothing until asked.
func New(o Options) (*Log, error) {
	if o.Store == nil {
		return nil, errors.New("audit: no store")
	}
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	if o.Prefix[len(o.Prefix)-1] != '/' {
		o.Prefix += "/"
	}
	if _, err := store.CleanDir(o.Prefix); err != nil {
		return nil, fmt.Errorf("audit: prefix %q: %w", o.Prefix, err)
	}
	if o.Instance == "" {
		var b [6]byte
		_, _ = rand.Read(b[:])
		o.Instance = hex.EncodeToString(b[:])
	}
	if o.FlushEvery == 0 {
		o.FlushEvery = 5 * time.Second
	}
	if o.MaxSegmentBytes <= 0 {
		o.MaxSegmentBytes = 1 << 20
	}
	if o.MaxPending <= 0 {
		o.MaxPending = 100_000
	}
	if o.CountsTTL <= 0 {
		o.CountsTTL = 30 * time.Second
	}
	if o.CompactAt <= 0 {
		o.CompactAt = 64
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	l := &Log{o: o, stopc: make(chan struct{}), done: make(chan struct{})}
	if o.FlushEvery > 0 {
		go l.loop()
	} else {
		close(l.done)
	}
	return l, nil
}

func (l *Log) loop() {
	defer close(l.done)
	t := time.NewTicker(l.o.FlushEvery)
	defer t.Stop()
	for {
		select {
		case <-l.stopc:
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			if err := l.Flush(ctx); err != nil {
				slog.Warn("audit: flush failed; the records are kept for the next try", "err", err)
			}
			cancel()
		}
	}
}

// Enabled says whether the audit is on.
func (l *Log) Enabled() bool { return l != nil }

// Record buffers records; it never waits on the store. A record without a
// Time gets now; without an AgentID, UnknownAgent.
func (l *Log) Record(recs ...Record) {
	if l == nil || len(recs) == 0 {
		return
	}
	now := l.o.Now().UTC()
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range recs {
		if r.Time.IsZero() {
			r.Time = now
		}
		r.Time = r.Time.UTC()
		if r.AgentID == "" {
			r.AgentID = UnknownAgent
		}
		l.pending = append(l.pending, r)
	}
	if over := len(l.pending) - l.o.MaxPending; over > 0 {
		l.dropped += int64(over)
		l.pending = append(l.pending[:0:0], l.pending[over:]...)
		slog.Error("audit: the store cannot be written; oldest records dropped", "dropped", over)
	}
}

// Stats is the audit's health.
type Stats struct {
	Pending int   // records not yet written
	Dropped int64 // records dropped because the store could not be written
	LastErr error // the last failed flush's error, nil after a good one
}

// Stats reports the audit's health.
func (l *Log) Stats() Stats {
	if l == nil {
		return Stats{}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return Stats{Pending: len(l.pending), Dropped: l.dropped, LastErr: l.failed}
}

// Flush writes the buffered records: log segments of at most
// MaxSegmentBytes under log/YYYY/MM/DD/ (the day of their first record)
// and one count delta; then, when the last summed view saw CompactAt or
// more deltas, compacts. On error the records stay buffered for the next
// try.
func (l *Log) Flush(ctx context.Context) error {
	if l == nil {
		return nil
	}
	l.flushMu.Lock()
	defer l.flushMu.Unlock()
	l.mu.Lock()
	batch := l.pending
	l.pending = nil
	l.seq++
	seq := l.seq
	l.mu.Unlock()
	if len(batch) == 0 {
		return nil
	}
	err := l.write(ctx, batch, seq)
	l.mu.Lock()
	l.failed = err
	if err != nil {
		l.pending = append(batch, l.pending...)
		l.seq-- // the retry writes the same names again
		if over := len(l.pending) - l.o.MaxPending; over > 0 {
			l.dropped += int64(over)
			l.pending = l.pending[over:]
		}
	}
	l.mu.Unlock()
	if err != nil {
		return err
	}
	l.viewMu.Lock()
	if l.view != nil {
		l.view.addOwn(deltaName(batch[0].Time, l.o.Instance, seq), countsOf(batch))
	}
	compact := l.view != nil && l.view.unmerged() >= l.o.CompactAt
	l.viewMu.Unlock()
	if compact {
		if err := l.Compact(ctx); err != nil && !errors.Is(err, store.ErrConflict) {
			slog.Warn("audit: compacting the counts failed", "err", err)
		}
	}
	return nil
}

// write puts a batch's segments (split by day and by MaxSegmentBytes) and
// its count delta. Object names depend only on the instance, seq and the
// batch, so a retry rewrites the same objects.
func (l *Log) write(ctx context.Context, batch []Record, seq int) error {
	part := 0
	var buf bytes.Buffer
	var dir, stamp string
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	put := func() error {
		if buf.Len() == 0 {
			return nil
		}
		name := fmt.Sprintf("%s%s-%s-%06d-%03d.jsonl", dir, stamp, l.o.Instance, seq, part)
		if _, err := l.o.Store.Put(ctx, name, buf.Bytes(), store.PutOptions{}); err != nil {
			return fmt.Errorf("audit: writing %s: %w", name, err)
		}
		part++
		buf.Reset()
		return nil
	}
	for _, r := range batch {
		if d := l.o.Prefix + "log/" + r.Time.Format("2006/01/02") + "/"; d != dir {
			if err := put(); err != nil {
				return err
			}
			dir, stamp = d, r.Time.Format("150405")
		}
		mark := buf.Len()
		if err := enc.Encode(&r); err != nil {
			return err
		}
		if buf.Len() > l.o.MaxSegmentBytes && mark > 0 {
			rest := append([]byte(nil), buf.Bytes()[mark:]...)
			buf.Truncate(mark)
			if err := put(); err != nil {
				return err
			}
			buf.Write(rest)
		}
	}
	if err := put(); err != nil {
		return err
	}
	return l.putDelta(ctx, deltaName(batch[0].Time, l.o.Instance, seq), countsOf(batch))
}

func countsOf(batch []Record) map[string]int64 {
	counts := map[string]int64{}
	for _, r := range batch {
		counts[r.Path]++
	}
	return counts
}
