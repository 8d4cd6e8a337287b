package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sheaf-dev/sheaf/shared/vault/vaultgen"
)

// plantedWord is in exactly plantedNotes notes of coldVault's vault.
const (
	plantedWord  = "quokkaplanted"
	plantedNotes = 37
)

// coldVault generates a vault of n notes plus plantedNotes notes carrying
// plantedWord, with no .sheaf/ state, and returns it with its note count.
func coldVault(t testing.TB, n int) (string, int) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "vault")
	st, err := vaultgen.Generate(dir, vaultgen.Options{Notes: n, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	for i := range plantedNotes {
		body := fmt.Sprintf("# Planted %d\n\nA %s lives here, among [[links]] and #tags.\n", i, plantedWord)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("planted-%02d.md", i)), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, st.Notes + plantedNotes
}

// coverage is the part of every result that says it is partial.
type coverage struct {
	Partial  bool `json:"partial"`
	Indexing *struct {
		State   string `json:"state"`
		Indexed int    `json:"indexed"`
		Total   int    `json:"total"`
		Notes   int    `json:"notes"`
	} `json:"indexing"`
}

func callJSON(t testing.TB, s *mcp.ClientSession, name string, args map[string]any, out any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if res.IsError {
		t.Fatalf("%s: tool error: %+v", name, res.Content)
	}
	raw, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(raw, out); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

type coldAnswers struct {
	info struct {
		coverage
		NoteCount int `json:"noteCount"`
		Liveness  struct {
			Indexing string `json:"indexing"`
		} `json:"liveness"`
	}
	list struct {
		coverage
		Total int `json:"total"`
	}
	search struct {
		coverage
		Total int `json:"total"`
	}
}

// askCold asks what an agent asks first on a new vault.
func askCold(t testing.TB, s *mcp.ClientSession) *coldAnswers {
	var a coldAnswers
	callJSON(t, s, "get_vault_info", nil, &a.info)
	callJSON(t, s, "list_notes", map[string]any{"limit": 1}, &a.list)
	callJSON(t, s, "search", map[string]any{"query": plantedWord, "limit": 100}, &a.search)
	return &a
}

// checkTrueOrPartial fails unless every answer is true, or says it is
// partial with the index's progress.
func checkTrueOrPartial(t testing.TB, a *coldAnswers, notes int) (complete bool) {
	t.Helper()
	complete = true
	for name, c := range map[string]coverage{"get_vault_info": a.info.coverage, "list_notes": a.list.coverage, "search": a.search.coverage} {
		if c.Partial != (c.Indexing != nil) {
			t.Errorf("%s: partial %v but indexing %+v", name, c.Partial, c.Indexing)
		}
		if c.Partial {
			complete = false
		}
	}
	if a.info.Partial && a.info.Indexing.Notes > 0 && a.info.NoteCount != notes {
		t.Errorf("get_vault_info during indexing: noteCount %d once listed, want %d (the listing is true from the start)", a.info.NoteCount, notes)
	}
	if !a.info.Partial && (a.info.NoteCount != notes || a.info.Liveness.Indexing != "ready") {
		t.Errorf("get_vault_info not partial: noteCount %d (%s), want %d (ready)", a.info.NoteCount, a.info.Liveness.Indexing, notes)
	}
	if !a.list.Partial && a.list.Total != notes {
		t.Errorf("list_notes not partial: total %d, want %d", a.list.Total, notes)
	}
	if !a.search.Partial && a.search.Total != plantedNotes {
		t.Errorf("search not partial: total %d, want %d", a.search.Total, plantedNotes)
	}
	if a.list.Partial && a.list.Total > notes || a.search.Partial && a.search.Total > plantedNotes {
		t.Errorf("partial answers count more than there is: list %d, search %d", a.list.Total, a.search.Total)
	}
	return complete
}

// TestColdStartAnswersAreTrue spawns `sheaf serve` on a vault with no
// state and asks at once what an agent asks first: each answer is true or
// says that it is partial.
func TestColdStartAnswersAreTrue(t *testing.T) {
	n := 3000
	if testing.Short() {
		n = 800
	}
	t.Run("Wait", func(t *testing.T) {
		// The default: the first calls wait (up to 5 s) for the first pass.
		dir, notes := coldVault(t, n)
		start := time.Now()
		a := askCold(t, stdioSession(t, dir))
		done := checkTrueOrPartial(t, a, notes)
		t.Logf("%d notes: first answers after %v, complete=%v", notes, time.Since(start).Round(time.Millisecond), done)
	})
	t.Run("NoWait", func(t *testing.T) {
		// --index-wait 0: answers at once, from whatever is indexed.
		dir, notes := coldVault(t, n)
		s := stdioSession(t, dir, "--index-wait", "0")
		first := askCold(t, s)
		if checkTrueOrPartial(t, first, notes) {
			t.Logf("the first answers were already complete (a fast machine)")
		}
		deadline := time.Now().Add(2 * time.Minute)
		for !checkTrueOrPartial(t, askCold(t, s), notes) {
			if time.Now().After(deadline) || t.Failed() {
				t.Fatal("the index never completed")
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
}

// TestShortSessionsConverge runs short client sessions in a row on a vault
// with no state, each closed by the client in the middle of the server's
// first pass: together they leave a complete index, as `sheaf index` then
// finds nothing to do. Each session lives at least 200 ms and until its
// pass has written some notes (on a loaded machine start-up alone may take
// longer than 200 ms); what it wrote must be kept: the next session's pass
// has that much less to do. How many sessions that takes depends on the
// machine (ten on an idle one), so the test is bounded by the work, not by
// a count of sessions.
func TestShortSessionsConverge(t *testing.T) {
	dir, notes := coldVault(t, 1500)
	type liveness struct {
		Liveness struct {
			Indexing     string `json:"indexing"`
			IndexedNotes int    `json:"indexedNotes"`
			NotesToIndex int    `json:"notesToIndex"`
		} `json:"liveness"`
	}
	left := notes + 1 // notes the last session left to index, at most
	for i := 0; ; i++ {
		start := time.Now()
		s := stdioSession(t, dir, "--index-wait", "0", "--no-watch")
		var info liveness
		total := 0
		for deadline := start.Add(2 * time.Minute); ; {
			callJSON(t, s, "get_vault_info", nil, &info)
			l := info.Liveness
			if l.Indexing == "ready" {
				break
			}
			if l.Indexing == "failed" {
				t.Fatalf("session %d: the index pass failed", i)
			}
			total = max(total, l.NotesToIndex)
			if l.IndexedNotes > 0 && time.Since(start) >= 200*time.Millisecond {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("session %d: its pass wrote no note in 2 minutes (%d to index)", i, total)
			}
			time.Sleep(20 * time.Millisecond)
		}
		if err := s.Close(); err != nil {
			t.Logf("session %d: close: %v", i, err)
		}
		t.Logf("session %d: %s, %d of %d notes of its pass, closed after %v", i, info.Liveness.Indexing,
			info.Liveness.IndexedNotes, total, time.Since(start).Round(time.Millisecond))
		if info.Liveness.Indexing == "ready" {
			break
		}
		if total > left {
			t.Fatalf("session %d: %d notes to index, but the sessions before left %d: a session's progress was lost", i, total, left)
		}
		left = total - info.Liveness.IndexedNotes
	}
	out, err := exec.Command(bin, "index", "--vault", dir, "--quiet").CombinedOutput()
	if err != nil {
		t.Fatalf("sheaf index: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`(\d+) notes \((\d+) indexed, (\d+) unchanged`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("sheaf index printed %q", out)
	}
	total, _ := strconv.Atoi(string(m[1]))
	indexed, _ := strconv.Atoi(string(m[2]))
	if total != notes || indexed != 0 {
		t.Errorf("after the short sessions, sheaf index found %d notes and indexed %d of them; want %d notes, all already indexed", total, indexed, notes)
	}
}
