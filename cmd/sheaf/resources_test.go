package main

import (
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestResourcesPromptsCompletion: through the Go SDK client, on a folder
// and on S3, notes and attachments are resources (listed to the end, read
// as text or blob, a missing one an error), the template is listed, the
// prompts render with their arguments, and paths and tags complete.
func TestResourcesPromptsCompletion(t *testing.T) {
	onStores(t, resourcesSuite)
}

func resourcesSuite(t *testing.T, sv *storeVault) {
	s := sv.serve(t)
	ctx := t.Context()
	var uris []string
	var cursor string
	for pages := 0; ; pages++ {
		res, err := s.ListResources(ctx, &mcp.ListResourcesParams{Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res.Resources {
			uris = append(uris, r.URI)
		}
		if cursor = res.NextCursor; cursor == "" || pages > 20 {
			break
		}
	}
	if len(uris) == 0 {
		t.Fatal("resources/list: none")
	}
	vault, _, _ := strings.Cut(strings.TrimPrefix(uris[0], "sheaf://"), "/")
	var note, blob string
	for _, u := range uris {
		switch {
		case u == "sheaf://"+vault+"/Glossary.md":
			note = u
		case strings.HasSuffix(u, ".png") || strings.HasSuffix(u, ".pdf") || strings.HasSuffix(u, ".jpg"):
			blob = u
		}
	}
	if len(uris) < 40 || note == "" {
		t.Fatalf("resources/list: %d, %v", len(uris), uris)
	}
	rr, err := s.ReadResource(ctx, &mcp.ReadResourceParams{URI: note})
	if err != nil || len(rr.Contents) != 1 || rr.Contents[0].MIMEType != "text/markdown" || !strings.Contains(rr.Contents[0].Text, "Glossary") {
		t.Fatalf("read %s: %v %+v", note, err, rr)
	}
	if blob != "" {
		rr, err := s.ReadResource(ctx, &mcp.ReadResourceParams{URI: blob})
		if err != nil || len(rr.Contents) != 1 || len(rr.Contents[0].Blob) == 0 {
			t.Errorf("read %s: %v", blob, err)
		}
	}
	for _, u := range []string{"sheaf://" + vault + "/No%20such.md", "sheaf://" + vault + "/.sheaf/keys.json", "sheaf://other/Glossary.md"} {
		_, err := s.ReadResource(ctx, &mcp.ReadResourceParams{URI: u})
		var je *jsonrpc.Error
		if err == nil || strings.Contains(err.Error(), "/tmp/") {
			t.Errorf("read %s: %v, want a clean error", u, err)
		} else if !errors.As(err, &je) || (je.Code != -32002 && je.Code != -32602) {
			t.Errorf("read %s: %v, want resource not found (-32002, or -32602 from protocol 2026-07-28)", u, err)
		}
	}
	tl, err := s.ListResourceTemplates(ctx, nil)
	if err != nil || len(tl.ResourceTemplates) != 1 || tl.ResourceTemplates[0].URITemplate != "sheaf://{vault}/{+path}" {
		t.Errorf("templates: %v %+v", err, tl)
	}

	pl, err := s.ListPrompts(ctx, nil)
	if err != nil || len(pl.Prompts) != 4 {
		t.Fatalf("prompts: %v %+v", err, pl)
	}
	gp, err := s.GetPrompt(ctx, &mcp.GetPromptParams{Name: "find_and_read", Arguments: map[string]string{"question": "When do we prune?", "folder": "Projects"}})
	if err != nil || len(gp.Messages) != 1 {
		t.Fatalf("find_and_read: %v %+v", err, gp)
	}
	if tc, ok := gp.Messages[0].Content.(*mcp.TextContent); !ok || !strings.Contains(tc.Text, "When do we prune?") || !strings.Contains(tc.Text, `"Projects"`) {
		t.Errorf("find_and_read text: %+v", gp.Messages[0].Content)
	}
	if _, err := s.GetPrompt(ctx, &mcp.GetPromptParams{Name: "capture_source"}); err == nil {
		t.Error("capture_source without its url")
	}

	cr, err := s.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/resource", URI: "sheaf://{vault}/{+path}"}, Argument: mcp.CompleteParamsArgument{Name: "path", Value: "proj"}})
	if err != nil || len(cr.Completion.Values) == 0 {
		t.Fatalf("complete path: %v %+v", err, cr)
	}
	for _, v := range cr.Completion.Values {
		if !strings.HasPrefix(strings.ToLower(v), "proj") && !strings.Contains(strings.ToLower(v), "proj") {
			t.Errorf("completion %q for proj", v)
		}
	}
	cr, err = s.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "find_and_read"}, Argument: mcp.CompleteParamsArgument{Name: "folder", Value: "Pro"}})
	if err != nil || len(cr.Completion.Values) == 0 || !strings.HasPrefix(cr.Completion.Values[0], "Projects") {
		t.Errorf("complete folder: %v %+v", err, cr)
	}
}
