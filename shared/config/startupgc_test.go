package config

import (
	"log/slog"
	"runtime/debug"
	"testing"

	"github.com/sheaf-dev/sheaf/shared/vault"
)

// TestStartupGCIsRestored: a lazily opened vault raises the GC target
// until Begin, which restores what it found, once, before any load can
// start; a GOGC the user set is left alone, and an eager open changes
// nothing.
func TestStartupGCIsRestored(t *testing.T) {
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)
	gcNow := func() int { p := debug.SetGCPercent(-1); debug.SetGCPercent(p); return p }

	t.Setenv("GOGC", "")
	c := &Config{NoAudit: true, History: "off"}
	released := make(chan struct{})
	close(released)
	open := func(lazy bool) *Opened {
		t.Helper()
		site := &Site{Root: "r", ID: "v", Disk: t.TempDir(), Live: live, Snapshots: &heldSnapshots{release: released, cat: vault.NewCatalog()}}
		o, err := build(t.Context(), c, site, slog.New(slog.DiscardHandler), lazy)
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	o := open(true)
	if got := gcNow(); got != 400 {
		t.Errorf("while the server starts, the GC target is %d, want 400", got)
	}
	o.Begin()
	if got := gcNow(); got != 100 {
		t.Errorf("after Begin, the GC target is %d, want the 100 it found", got)
	}
	debug.SetGCPercent(70)
	o.Begin() // once: a later change stands
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	if got := gcNow(); got != 70 {
		t.Errorf("a second Begin or Close set the GC target to %d", got)
	}
	debug.SetGCPercent(100)

	eager := open(false)
	if got := gcNow(); got != 100 {
		t.Errorf("an eager open set the GC target to %d", got)
	}
	eager.Close()

	t.Setenv("GOGC", "50")
	user := open(true)
	if got := gcNow(); got != 100 {
		t.Errorf("with GOGC set, start-up changed the GC target to %d", got)
	}
	user.Close()
}
