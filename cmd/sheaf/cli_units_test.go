package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/sheaf-dev/sheaf/shared/config"
	"github.com/sheaf-dev/sheaf/shared/vaultsync"
)

// syncBuffer is a bytes.Buffer safe for a writer and a reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestEveryFlagHasAGroup: a setting added to config.Config.Flags must be
// sorted into a group, so that the commands that need it take it.
func TestEveryFlagHasAGroup(t *testing.T) {
	fs := pflag.NewFlagSet("all", pflag.ContinueOnError)
	config.Flags(&config.Config{}, fs)
	grouped := map[string]bool{}
	for _, names := range flagGroups {
		for _, n := range names {
			grouped[n] = true
		}
	}
	fs.VisitAll(func(f *pflag.Flag) {
		if !grouped[f.Name] {
			t.Errorf("--%s is in no group of cmd/sheaf/flags.go", f.Name)
		}
		delete(grouped, f.Name)
	})
	for n := range grouped {
		t.Errorf("flags.go groups --%s, which config.Flags does not define", n)
	}
	for c, groups := range commandGroups {
		for _, g := range groups {
			if _, ok := flagGroups[g]; !ok {
				t.Errorf("command %s takes the unknown group %q", c, g)
			}
		}
	}
}

// TestProgressPlainLines: off a terminal, progress is plain lines, the
// rate counted from the start of the pass and shown after a second.
func TestProgressPlainLines(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf)
	if p.bar != nil {
		t.Fatal("a bar drawn into a buffer")
	}
	p.every = 0
	p.update(500, 1000) // the first reading, a moment after the start
	p.start = time.Now().Add(-2 * time.Second)
	p.update(800, 1000)
	p.update(1000, 1000)
	p.finish()
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 || lines[0] != "indexing: 500/1000 notes" {
		t.Fatalf("lines %q", lines)
	}
	if !strings.HasPrefix(lines[1], "indexing: 800/1000 notes, 4") || !strings.HasSuffix(lines[1], " notes/s") {
		t.Errorf("second line %q, want about 400 notes/s", lines[1])
	}
	if strings.ContainsAny(buf.String(), "\r\x1b") {
		t.Errorf("terminal control characters in %q", buf.String())
	}
}

// TestLoggerLevels: one logger for everything, at its level.
func TestLoggerLevels(t *testing.T) {
	defer slog.SetDefault(slog.Default())
	for _, bad := range [][2]string{{"verbose", "text"}, {"", "text"}, {"info", "xml"}} {
		if _, err := newLogger(bad[0], bad[1], &bytes.Buffer{}); err == nil {
			t.Errorf("newLogger(%q, %q) accepted", bad[0], bad[1])
		}
	}
	var buf bytes.Buffer
	if _, err := newLogger("warn", "json", &buf); err != nil {
		t.Fatal(err)
	}
	slog.Info("hidden")                                    // below the level
	slog.ErrorContext(context.Background(), "tool failed") // what the tools log
	if out := buf.String(); strings.Contains(out, "hidden") || !strings.Contains(out, `"msg":"tool failed"`) {
		t.Errorf("log %q", out)
	}
}

// TestQuietCommandsExist: every quiet command has its flag groups.
func TestQuietCommandsExist(t *testing.T) {
	for _, q := range quietCommands {
		if _, ok := commandGroups[q]; !ok {
			t.Errorf("quiet command %s has no flag groups", q)
		}
	}
}

// TestSyncReportCountsKept: files kept back for one reason are named up
// to keptShown, then counted; failures are always named.
func TestSyncReportCountsKept(t *testing.T) {
	rep := &vaultsync.Report{Counts: map[vaultsync.Kind]int{}}
	for i := range 10 {
		rep.Actions = append(rep.Actions, vaultsync.Action{Kind: vaultsync.KindKept, Path: fmt.Sprintf("n%d.md", i), Reason: "only in the remote vault"})
	}
	rep.Actions = append(rep.Actions,
		vaultsync.Action{Kind: vaultsync.KindKept, Path: "big.md", Reason: "larger than 5 bytes"},
		vaultsync.Action{Kind: vaultsync.KindKept, Path: "bad.md", Err: errors.New("unreadable")})
	var b strings.Builder
	printSyncReport(&b, rep, vaultsync.Options{}, time.Second)
	out := b.String()
	for _, want := range []string{"kept n0.md: only", "kept n2.md: only", "kept 7 more: only in the remote vault", "kept big.md", "failed kept bad.md: unreadable"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
	if strings.Contains(out, "n3.md") || strings.Contains(out, "more: larger") {
		t.Errorf("more than %d named, or a count of none:\n%s", keptShown, out)
	}
}
