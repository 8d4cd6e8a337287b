package store_test

import (
	"context"
	"strings"
	"testing"

	"github.com/sheaf-dev/sheaf/shared/store"
	"github.com/sheaf-dev/sheaf/shared/store/fs"
	_ "github.com/sheaf-dev/sheaf/shared/store/s3"
)

func TestOpen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for _, loc := range []string{dir, "file://" + dir} {
		st, err := store.Open(ctx, loc)
		if err != nil {
			t.Fatalf("%s: %v", loc, err)
		}
		if _, ok := st.(*fs.Store); !ok {
			t.Errorf("%s opened a %T", loc, st)
		}
		st.(*fs.Store).Close()
	}
	st, err := store.Open(ctx, "s3://bucket/notes?region=us-east-1&endpoint=http://127.0.0.1:9&path_style=true")
	if err != nil || st == nil {
		t.Fatalf("s3: %v", err)
	}
	for loc, want := range map[string]string{
		"gs://bucket/notes":                   "cannot open gs: vaults (it can open: file, s3)",
		"s3://bucket/notes?colour=blue":       "colour",
		"file://" + dir + "?watch=false":      "takes no host, user, parameters",
		"file://otherhost" + dir:              "takes no host",
		"s3://bucket/notes?region=a&region=b": "region",
	} {
		if _, err := store.Open(ctx, loc); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error saying %q", loc, err, want)
		}
	}
	if got := store.SchemeOf("notes/vault"); got != "file" {
		t.Errorf("SchemeOf a folder: %q", got)
	}
}
