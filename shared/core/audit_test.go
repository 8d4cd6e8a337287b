package core

import (
	"context"
	"testing"
	"time"

	"github.com/sheaf-dev/sheaf/shared/audit"
	"github.com/sheaf-dev/sheaf/shared/auth"
	"github.com/sheaf-dev/sheaf/shared/store/fs"
)

// TestReadAudit: read_note, search, semantic-free search_and_read record
// what they return (caller, agent_id, tool, path) and answer each path's
// retrieval_count, this read included; without an audit they answer none.
func TestReadAudit(t *testing.T) {
	s, _ := indexedServer(t, provNotes, nil)
	v := s.vaults["t"]
	st, err := fs.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	log, err := audit.New(audit.Options{Store: st, FlushEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := auth.WithIdentity(context.Background(), auth.Identity{Subject: "key:alice", Granted: []auth.Scope{auth.ScopeRead}})

	// Off: no counts.
	rn, err := s.ReadNote(ctx, readNoteIn{Path: "Plain.md"})
	if err != nil || rn.RetrievalCount != nil {
		t.Fatalf("audit off: %v %v", err, rn.RetrievalCount)
	}

	v.Audit = log
	for want := int64(1); want <= 2; want++ {
		rn, err := s.ReadNote(ctx, readNoteIn{Path: "Plain.md", AgentArg: AgentArg{AgentID: "claude-code"}})
		if err != nil || rn.RetrievalCount == nil || *rn.RetrievalCount != want {
			t.Fatalf("read %d: %v %v", want, err, rn.RetrievalCount)
		}
	}
	res, err := s.Search(ctx, SearchArgs{Query: "apple", Limit: 10, Match: "any"})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range res.Items {
		want := int64(1)
		if h.Path == "Plain.md" {
			want = 3
		}
		if h.RetrievalCount == nil || *h.RetrievalCount != want {
			t.Errorf("search hit %s: retrieval_count %v, want %d", h.Path, h.RetrievalCount, want)
		}
	}
	sar, err := s.SearchAndRead(ctx, searchAndReadIn{Query: "apple trees", K: 5, Mode: "note"})
	if err != nil || len(sar.Notes) == 0 || sar.Notes[0].RetrievalCount == nil || *sar.Notes[0].RetrievalCount < 2 {
		t.Fatalf("search_and_read: %v %+v", err, sar)
	}
	concise, err := s.SearchAndRead(ctx, searchAndReadIn{Query: "apple trees", K: 5, Mode: "note", ResponseFormat: "concise"})
	if err != nil || concise.Notes[0].RetrievalCount != nil {
		t.Errorf("concise items carry no count: %v %+v", err, concise.Notes[0])
	}

	if err := log.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	var recs []audit.Record
	if err := log.Read(ctx, time.Now().UTC(), func(r audit.Record) error { recs = append(recs, r); return nil }); err != nil {
		t.Fatal(err)
	}
	byTool := map[string]int{}
	for _, r := range recs {
		byTool[r.Tool]++
		if r.Caller != "key:alice" {
			t.Errorf("record caller %q", r.Caller)
		}
		if r.Tool == "read_note" && r.AgentID != "claude-code" {
			t.Errorf("read_note record agent %q", r.AgentID)
		}
		if r.Tool == "search" && r.AgentID != audit.UnknownAgent {
			t.Errorf("search record agent %q", r.AgentID)
		}
	}
	if byTool["read_note"] != 2 || byTool["search"] != 3 || byTool["search_and_read"] < 4 {
		t.Errorf("records by tool: %v", byTool)
	}
}
