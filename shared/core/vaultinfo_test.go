package core

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/sheaf-dev/sheaf/shared/store/fs"
	"github.com/sheaf-dev/sheaf/shared/vault"
)

// infoServer serves a vault over cat with the given Status (nil: none, as
// the stateless cloud handlers have).
func infoServer(t *testing.T, cat *vault.Catalog, status func() IndexStatus) *Core {
	t.Helper()
	st, err := fs.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(&Vault{ID: "test", Store: st, Catalogs: LiveCatalog{C: cat}, Status: status})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Without a live indexer, the problems come from the catalog (its snapshot).
func TestVaultInfoProblemsFromCatalog(t *testing.T) {
	cat := vault.NewCatalog()
	cat.Upsert(vault.Note{Path: "bad-utf8.md"})
	cat.SetProblem("bad-utf8.md", "invalid UTF-8: indexed with replacement characters")
	cat.SetProblem("binary.md", "binary content in a .md file, not indexed")
	info, err := infoServer(t, cat, nil).VaultInfo(context.Background(), vaultInfoIn{})
	if err != nil {
		t.Fatal(err)
	}
	want := []Problem{
		{Path: "bad-utf8.md", Reason: "invalid UTF-8: indexed with replacement characters"},
		{Path: "binary.md", Reason: "binary content in a .md file, not indexed"},
	}
	if !reflect.DeepEqual(info.Problems, want) {
		t.Errorf("problems = %+v, want %+v", info.Problems, want)
	}
	if info.Liveness.Indexing != "ready" || info.NoteCount != 1 {
		t.Errorf("liveness %+v, notes %d", info.Liveness, info.NoteCount)
	}
	// The wire shape: a list of {path, reason}, sorted by path.
	raw, _ := json.Marshal(info)
	if !strings.Contains(string(raw), `"problems":[{"path":"bad-utf8.md","reason":"invalid UTF-8: indexed with replacement characters"},{"path":"binary.md",`) {
		t.Errorf("JSON = %s", raw)
	}

	// None: the field is left out.
	cat.SetProblem("bad-utf8.md", "")
	cat.SetProblem("binary.md", "")
	info, _ = infoServer(t, cat, nil).VaultInfo(context.Background(), vaultInfoIn{})
	if raw, _ := json.Marshal(info); strings.Contains(string(raw), "problems") {
		t.Errorf("no problems, yet JSON = %s", raw)
	}
}

// A live indexer's report is merged over the catalog's, path by path.
func TestVaultInfoProblemsWithStatus(t *testing.T) {
	cat := vault.NewCatalog()
	cat.SetProblem("a.md", "from the catalog")
	cat.SetProblem("b.md", "stale reason")
	status := func() IndexStatus {
		return IndexStatus{State: "indexing", Done: 1, Total: 3, Problems: map[string]string{"b.md": "live reason", "c.md": "too large"}}
	}
	info, err := infoServer(t, cat, status).VaultInfo(context.Background(), vaultInfoIn{})
	if err != nil {
		t.Fatal(err)
	}
	want := []Problem{{"a.md", "from the catalog"}, {"b.md", "live reason"}, {"c.md", "too large"}}
	if !reflect.DeepEqual(info.Problems, want) {
		t.Errorf("problems = %+v, want %+v", info.Problems, want)
	}
	if info.Liveness.Indexing != "indexing" || info.Liveness.IndexedNotes != 1 || info.Liveness.NotesToIndex != 3 {
		t.Errorf("liveness = %+v", info.Liveness)
	}
	if len(cat.Problems()) != 2 {
		t.Errorf("reporting changed the catalog: %v", cat.Problems())
	}
}

func TestVaultInfoProblemsCapped(t *testing.T) {
	cat := vault.NewCatalog()
	for i := range 120 {
		cat.SetProblem(fmt.Sprintf("n%03d.md", i), "binary")
	}
	info, err := infoServer(t, cat, nil).VaultInfo(context.Background(), vaultInfoIn{})
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Problems) != 50 || info.Problems[0].Path != "n000.md" || info.Problems[49].Path != "n049.md" {
		t.Errorf("%d problems, first %+v", len(info.Problems), info.Problems[:1])
	}
}

// brokenEmbeddings is an Embeddings whose vector index cannot be read.
type brokenEmbeddings struct{}

func (brokenEmbeddings) Refresh(context.Context, *vault.Catalog) (int, int, error) {
	return 0, 0, fmt.Errorf("qdrant: connection refused")
}

func (brokenEmbeddings) Stale(context.Context, *vault.Catalog) (int, error) {
	return 0, fmt.Errorf("qdrant: connection refused")
}

// An unreachable vector index degrades vault info to "stale", not an error.
func TestVaultInfoSurvivesBrokenVectorIndex(t *testing.T) {
	f := newSemFixture(t, orchard)
	f.v.Embeddings = brokenEmbeddings{}
	out, err := f.s.VaultInfo(context.Background(), vaultInfoIn{})
	if err != nil {
		t.Fatalf("vault info failed with the vector index down: %v", err)
	}
	if !out.Capabilities.Embeddings || !out.Liveness.EmbeddingIndexStale || out.NoteCount != 4 {
		t.Errorf("capabilities %+v liveness %+v", out.Capabilities, out.Liveness)
	}
}

// summaryOnly is the Catalogs of a cold stateless handler: it gives the
// catalog's Summary, and counts the loads of the catalog itself.
type summaryOnly struct {
	cat        *vault.Catalog
	loads      *int
	prefetches *int
}

func (s summaryOnly) Prefetch(context.Context) {
	if s.prefetches != nil {
		*s.prefetches++
	}
}

func (s summaryOnly) Catalog(context.Context) (*vault.Catalog, error) {
	*s.loads++
	return s.cat, nil
}

func (s summaryOnly) Summary(context.Context) (vault.Summary, bool, error) {
	return s.cat.Summary(), true, nil
}

// A cold handler answers get_vault_info from the catalog's summary, without
// loading the catalog, and exactly as it would from the catalog: on the
// sample vault, and on a catalog with more problems than are shown.
func TestVaultInfoFromTheSummary(t *testing.T) {
	ctx := context.Background()
	_, sample := sampleServer(t)
	sampleCat, _ := sample.Catalogs.Catalog(ctx)
	many := vault.NewCatalog()
	for i := range 70 {
		many.SetProblem(fmt.Sprintf("bad/%02d.md", 69-i), fmt.Sprintf("problem %d", i))
	}
	many.Upsert(vault.Note{Path: "Index.md", Directives: []vault.Directive{{Title: "a"}, {Title: "b", Done: true}, {Title: "c"}}})
	for name, cat := range map[string]*vault.Catalog{"sample vault": sampleCat, "70 problems": many} {
		warm, err := New(&Vault{ID: "v", Root: "r", Store: sample.Store, Catalogs: LiveCatalog{C: cat}})
		if err != nil {
			t.Fatal(err)
		}
		loads := 0
		cold, err := New(&Vault{ID: "v", Root: "r", Store: sample.Store, Catalogs: summaryOnly{cat: cat, loads: &loads}})
		if err != nil {
			t.Fatal(err)
		}
		want, err := warm.VaultInfo(ctx, vaultInfoIn{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := cold.VaultInfo(ctx, vaultInfoIn{})
		if err != nil {
			t.Fatal(err)
		}
		if loads != 0 {
			t.Errorf("%s: the catalog was loaded %d times", name, loads)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: from the summary\n%+v\nfrom the catalog\n%+v", name, got, want)
		}
		if name == "70 problems" && (len(got.Problems) != 50 || got.Problems[0].Path != "bad/00.md" ||
			!got.Capabilities.HasIndexCatalog || got.Liveness.PendingDirectives != 2) {
			t.Errorf("%s: %d problems from %s, index %v, %d pending", name, len(got.Problems), got.Problems[0].Path,
				got.Capabilities.HasIndexCatalog, got.Liveness.PendingDirectives)
		}
	}
}

// A tool that reads the catalog says a note is there but not indexed,
// rather than that it does not exist.
func TestCatalogToolsOnUnindexedNote(t *testing.T) {
	cat := vault.NewCatalog()
	cat.Upsert(vault.Note{Path: "a.md"})
	cat.SetProblem("huge.md", "larger than 16777216 bytes, not indexed")
	s := infoServer(t, cat, nil)
	for _, p := range []string{"huge.md", "huge"} {
		wantKind(t, "outgoing links of "+p, errOf(s.ListOutgoingLinks(context.Background(), notePathIn{Path: p, Page: Page{Limit: 5}})), KindUnsupported)
	}
	wantKind(t, "a note that is not there", errOf(s.ListOutgoingLinks(context.Background(), notePathIn{Path: "gone.md", Page: Page{Limit: 5}})), KindNoteNotFound)
}
