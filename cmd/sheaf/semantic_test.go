package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sheaf-dev/sheaf/shared/core"
	"github.com/sheaf-dev/sheaf/shared/embed/embedtest"
	"github.com/sheaf-dev/sheaf/shared/tools"
	"github.com/sheaf-dev/sheaf/shared/tools/toolstest"
)

func TestSemanticConformanceStdio(t *testing.T) {
	vault := sampleVault(t)
	emb := embedtest.Start(t)
	toolstest.Run(t, func(t *testing.T) *mcp.ClientSession { return stdioSession(t, vault, emb.Flags()...) })
	if emb.Texts() == 0 {
		t.Error("the server never called the embeddings provider")
	}
}

func TestPaidToolsRateLimitedOverStdio(t *testing.T) {
	vault := sampleVault(t)
	emb := embedtest.Start(t)
	c := toolstest.NewClient(t, stdioSession(t, vault, emb.Flags()...))
	c.WaitIndexed()
	for i := range tools.PaidCallsPerMinute {
		if r := c.Call("reindex_embeddings", nil, nil); r.IsError {
			t.Fatalf("call %d: %s %s", i+1, r.Kind, r.Message)
		}
	}
	r := c.MustFail("rate-limited", "semantic_search", map[string]any{"query": "soil"})
	ms, _ := r.Fields["retry_after_ms"].(float64)
	if ms <= 0 || ms > 60_000 {
		t.Errorf("retry_after_ms = %v, want 1..60000", r.Fields["retry_after_ms"])
	}
	c.MustOK("search", map[string]any{"query": "soil"}, nil) // free tools are not limited
}

func TestEmbedAndRelatedCommands(t *testing.T) {
	vault := sampleVault(t)
	emb := embedtest.Start(t)
	run := func(args ...string) (string, error) {
		cmd := exec.CommandContext(context.Background(), bin, args...)
		cmd.Stderr = os.Stderr
		out, err := cmd.Output()
		return string(out), err
	}
	var counts core.ReindexOut
	out, err := run(append([]string{"embed", vault}, emb.Flags()...)...)
	if err != nil || json.Unmarshal([]byte(out), &counts) != nil {
		t.Fatalf("sheaf embed: %v\n%s", err, out)
	}
	if counts.Notes != 43 || counts.Passages != int(emb.Texts()) {
		t.Errorf("sheaf embed: %+v, want 43 notes and every passage sent (%d)", counts, emb.Texts())
	}
	if _, err := os.Stat(filepath.Join(stateOf(t, vault), "vectors.bin")); err != nil {
		t.Errorf("vectors not persisted: %v", err)
	}
	out, err = run(append([]string{"embed", "--vault", vault}, emb.Flags()...)...)
	if err != nil || json.Unmarshal([]byte(out), &counts) != nil || counts.Notes != 0 || counts.Passages != 0 {
		t.Errorf("a second sheaf embed should reuse the persisted vectors: %v %s", err, out)
	}

	// sheaf eval scores every configured lane, side by side.
	out, err = run(append([]string{"eval", vault, "--json"}, emb.Flags()...)...)
	var ev struct {
		Lanes []struct {
			Mode  string `json:"mode"`
			Count int    `json:"count"`
		} `json:"lanes"`
	}
	if err != nil || json.Unmarshal([]byte(out), &ev) != nil || len(ev.Lanes) != 3 {
		t.Fatalf("sheaf eval --json with embeddings: %v\n%s", err, out)
	}
	for i, want := range []string{"fulltext", "semantic", "hybrid"} {
		if ev.Lanes[i].Mode != want || ev.Lanes[i].Count < 40 {
			t.Errorf("sheaf eval lane %d: %+v, want %s over the sample questions", i, ev.Lanes[i], want)
		}
	}
	if out, err = run(append([]string{"eval", vault}, emb.Flags()...)...); err != nil || !strings.Contains(out, "hybrid") || !strings.Contains(out, "semantic") {
		t.Errorf("sheaf eval table with embeddings: %v\n%s", err, out)
	}

	const note = "Projects/Garden/Compost.md"
	out, err = run(append([]string{"related", vault, note, "--json", "--limit", "3"}, emb.Flags()...)...)
	var rel struct {
		Items []struct {
			Path string `json:"path"`
		} `json:"items"`
	}
	if err != nil || json.Unmarshal([]byte(out), &rel) != nil || len(rel.Items) == 0 || len(rel.Items) > 3 {
		t.Fatalf("sheaf related --json: %v\n%s", err, out)
	}
	for _, it := range rel.Items {
		if it.Path == note {
			t.Errorf("related lists the note itself: %s", out)
		}
	}
	out, err = run(append([]string{"related", "--vault", vault, note}, emb.Flags()...)...)
	if err != nil || !strings.Contains(out, "1. ") {
		t.Errorf("sheaf related: %v\n%s", err, out)
	}

	cmd := exec.Command(bin, "related", vault, note)
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "SHEAF_EMBED") })
	msg, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(msg), "not configured") {
		t.Errorf("related without a provider should fail clearly: %v\n%s", err, msg)
	}
	if err := exec.Command(bin, "embed", vault).Run(); err == nil {
		t.Error("embed without a provider should fail")
	}
}
