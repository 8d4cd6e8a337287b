package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sheaf-dev/sheaf/shared/tools/toolstest"
)

// TestReadAuditOverMCP: through the Go SDK client, on a folder and on S3,
// read_note and search answer retrieval_count (this read included), the
// records land under the state location's audit/ when the server stops,
// and --no-audit records and counts nothing.
func TestReadAuditOverMCP(t *testing.T) {
	onStores(t, auditSuite)
}

func auditSuite(t *testing.T, sv *storeVault) {
	s := sv.serve(t)
	c := toolstest.NewClient(t, s)
	c.WaitIndexed()
	var note struct {
		RetrievalCount *int64 `json:"retrieval_count"`
	}
	for want := int64(1); want <= 2; want++ {
		c.MustOK("read_note", map[string]any{"path": "Glossary.md", "agent_id": "conformance"}, &note)
		if note.RetrievalCount == nil || *note.RetrievalCount != want {
			t.Fatalf("read %d: retrieval_count %v", want, note.RetrievalCount)
		}
	}
	var hits struct {
		Items []struct {
			Path           string `json:"path"`
			RetrievalCount *int64 `json:"retrieval_count"`
		} `json:"items"`
	}
	c.MustOK("search", map[string]any{"query": "glossary", "agent_id": "conformance"}, &hits)
	for _, h := range hits.Items {
		if h.RetrievalCount == nil || (h.Path == "Glossary.md" && *h.RetrievalCount != 3) {
			t.Errorf("hit %s: retrieval_count %v", h.Path, h.RetrievalCount)
		}
	}
	c.MustFail("args-invalid", "read_note", map[string]any{"path": "Glossary.md", "agent_id": strings.Repeat("x", 129)})
	s.Close() // the server flushes the audit as it stops
	segments := sv.state(filepath.Join("audit", "log"))
	if len(segments) == 0 {
		t.Fatalf("no audit log under the state location: %v", sv.state(""))
	}
	data, _ := os.ReadFile(segments[0])
	if !strings.Contains(string(data), `"agent_id":"conformance","tool":"read_note","path":"Glossary.md"`) {
		t.Errorf("the audit log: %s", data)
	}

	// A second server of the vault counts the first one's reads.
	c = toolstest.NewClient(t, sv.serve(t))
	c.WaitIndexed()
	c.MustOK("read_note", map[string]any{"path": "Glossary.md"}, &note)
	if note.RetrievalCount == nil || *note.RetrievalCount != 4 {
		t.Errorf("the next server's count: %v, want 4", note.RetrievalCount)
	}

	off := toolstest.NewClient(t, sv.serve(t, "--no-audit"))
	note.RetrievalCount = nil
	off.MustOK("read_note", map[string]any{"path": "Glossary.md"}, &note)
	if note.RetrievalCount != nil {
		t.Errorf("--no-audit: retrieval_count %v", *note.RetrievalCount)
	}
}
