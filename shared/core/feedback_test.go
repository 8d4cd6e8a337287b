package core

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sheaf-dev/sheaf/shared/auth"
	"github.com/sheaf-dev/sheaf/shared/store"
)

func TestRecordRetrievalFeedback(t *testing.T) {
	s, _ := indexedServer(t, map[string]string{"a.md": "# A\n"}, nil)
	at := time.Date(2026, 5, 29, 17, 4, 5, 123456789, time.UTC)
	s.Now = func() time.Time { return at }
	ctx := auth.WithIdentity(context.Background(), auth.Identity{Subject: "alice", Granted: []auth.Scope{auth.ScopeAdmin}})
	in := feedbackIn{ChunkID: "a.md#p0", Useful: false, Query: "what is A?", Note: "too short"}
	for range 2 {
		out, err := s.RecordRetrievalFeedback(ctx, in)
		if err != nil || !out.Recorded || out.ChunkID != in.ChunkID {
			t.Fatalf("%+v, %v", out, err)
		}
	}
	v, _ := s.vault(context.Background(), VaultArg{})
	var objs []store.Object
	if err := v.Store.List(ctx, FeedbackPrefix, func(o store.Object) error { objs = append(objs, o); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(objs) != 2 || objs[0].Path == objs[1].Path {
		t.Fatalf("want two separate objects for two calls at the same instant, got %+v", objs)
	}
	for _, o := range objs {
		if !strings.HasPrefix(o.Path, FeedbackPrefix+"2026-05-29/170405.123456789Z-") || !strings.HasSuffix(o.Path, ".json") {
			t.Errorf("object path %q", o.Path)
		}
		data, _, err := v.Store.Get(ctx, o.Path, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(string(data), "}\n") || strings.Count(string(data), "\n") != 1 {
			t.Errorf("want one JSON line, got %q", data)
		}
		var rec FeedbackRecord
		if err := json.Unmarshal(data, &rec); err != nil {
			t.Fatal(err)
		}
		want := FeedbackRecord{Time: "2026-05-29T17:04:05.123456789Z", Vault: "t", Caller: "alice", ChunkID: "a.md#p0",
			Path: "a.md", Passage: 0, Useful: false, Query: "what is A?", Note: "too short"}
		if rec != want {
			t.Errorf("record %+v, want %+v", rec, want)
		}
	}

	for _, bad := range []string{"a.md", "a.md#p", "../x.md#p1", "a.png#p0"} {
		_, err := s.RecordRetrievalFeedback(ctx, feedbackIn{ChunkID: bad, Useful: true})
		var te *Error
		if !errors.As(err, &te) || te.Kind != KindArgsInvalid {
			t.Errorf("chunk_id %q: err = %v, want args-invalid", bad, err)
		}
	}
}

func TestRecordRetrievalFeedbackReadOnly(t *testing.T) {
	s, _ := indexedServer(t, map[string]string{"a.md": "# A\n"}, func(st store.Store) store.Store { return readOnlyStore{st} })
	if _, err := s.RecordRetrievalFeedback(context.Background(), feedbackIn{ChunkID: "a.md#p0", Useful: true}); err == nil {
		t.Error("a failed write must fail the call")
	}
}
