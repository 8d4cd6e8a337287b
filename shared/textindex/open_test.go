package textindex_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sheaf-dev/sheaf/shared/textindex"
	"github.com/sheaf-dev/sheaf/shared/textindex/embedded"
	"github.com/sheaf-dev/sheaf/shared/textindex/meili"
)

func TestOpen(t *testing.T) {
	ctx := context.Background()
	d := textindex.Defaults{Name: "sheaf-v", APIKey: "k"}
	for _, u := range []string{"embedded:", "embedded:" + filepath.Join(t.TempDir(), "index.db")} {
		ix, err := textindex.Open(ctx, u, d)
		if err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		if _, ok := ix.(*embedded.Index); !ok {
			t.Errorf("%s opened a %T", u, ix)
		}
		ix.Close()
	}
	for _, u := range []string{"http://127.0.0.1:7700", "https://meili.example?index=notes&api_key=x"} {
		ix, err := textindex.Open(ctx, u, d)
		if err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		if _, ok := ix.(*meili.Index); !ok {
			t.Errorf("%s opened a %T", u, ix)
		}
	}
	for u, want := range map[string]string{
		"embedded":                           "not a URL",
		"solr://host":                        "cannot open solr: text indexes (it can open: embedded, http, https)",
		"embedded:/x.db?mode=ro":             "without host or parameters",
		"http://h:7700?colour=blue":          `unknown URL parameter "colour"`,
		"http://h:7700?index=a&index=b":      "given 2 times",
		"http://h:7700/indexes":              "only host, port and parameters",
		"http://user:secret@h:7700":          "only host, port and parameters",
		"http://h:7700?index=bad%20uid":      "invalid index uid",
		"https://h?api_key=s3cret&colour=no": `unknown URL parameter "colour"`,
	} {
		_, err := textindex.Open(ctx, u, d)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error saying %q", u, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s: the error shows the key: %v", u, err)
		}
	}
}
