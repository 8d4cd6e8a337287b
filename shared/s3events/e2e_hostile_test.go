package s3events

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
)

// rawPutKey writes an object under an exact key, bypassing the store.
func (e *e2e) rawPutKey(t *testing.T, key string, data []byte) bool {
	t.Helper()
	_, err := e.client.PutObject(context.Background(), &awss3.PutObjectInput{
		Bucket: aws.String(e2eBucket), Key: aws.String(key), Body: bytes.NewReader(data),
	})
	if err != nil {
		t.Logf("put %q refused by the server: %v", key, err)
	}
	return err == nil
}

// TestE2EHostileKeys writes odd and hostile keys straight to versitygw and
// lets its webhook events drive the indexer: every legitimate note ends up
// indexed under its NFC path, nothing outside the vault or hidden is, and
// poison objects are reported, not fatal.
func TestE2EHostileKeys(t *testing.T) {
	e := startE2E(t)
	long := strings.Repeat("d", 200) + "/" + strings.Repeat("e", 200) + "/" + strings.Repeat("f", 200) + "/" +
		strings.Repeat("g", 200) + "/" + strings.Repeat("h", 180) + ".md" // 987 bytes
	legit := map[string]string{ // key below the prefix -> NFC path
		"with space.md":                    "with space.md",
		"a+b.md":                           "a+b.md",
		"x%2By.md":                         "x%2By.md",
		"100%.md":                          "100%.md",
		"#hash.md":                         "#hash.md",
		"what?.md":                         "what?.md",
		"日本語/ノート.md":                       "日本語/ノート.md",
		"💡 idea.md":                        "💡 idea.md",
		"Cafe\u0301/Re\u0301sume\u0301.md": "Caf\u00e9/R\u00e9sum\u00e9.md",
		long:                               long,
	}
	outside := []string{
		".sheaf/x.md", "x/.obsidian/y.md", "../x.md",
	}
	// Keys that are no clean path: on AWS they are objects of their own
	// (not notes); a posix backend stores them as the clean path's file.
	aliases := map[string]string{"p/./b.md": "p/b.md", "q//b.md": "q/b.md", "./c.md": "c.md"}
	for k := range aliases {
		e.rawPutKey(t, e2ePrefix+"/"+k, []byte("alias"))
	}
	for k := range legit {
		if !e.rawPutKey(t, e2ePrefix+"/"+k, []byte("# note\nbody of "+k)) {
			t.Fatalf("versitygw refused %q", k)
		}
	}
	for _, k := range outside {
		e.rawPutKey(t, e2ePrefix+"/"+k, []byte("must not be indexed"))
	}
	e.rawPutKey(t, e2ePrefix+"-other/x.md", []byte("another vault"))
	e.rawPutKey(t, "x.md", []byte("outside the prefix"))
	// Poison objects.
	poison := map[string][]byte{
		"huge.md":    bytes.Repeat([]byte("a"), 20<<20),
		"binary.md":  {0x89, 'P', 'N', 'G', 0, 0, 1, 2},
		"invalid.md": []byte("caf\xe9 \xff\xfe"),
		"empty.md":   {},
	}
	for k, data := range poison {
		e.rawPutKey(t, e2ePrefix+"/"+k, data)
	}
	e.rawPutKey(t, e2ePrefix+"/dir.md/", nil) // a folder marker named like a note

	e.converge(t, "hostile keys", 20*time.Second)
	for k, p := range legit {
		if _, ok := e.ix.Catalog.Note(p); !ok {
			t.Errorf("key %q: note %q not indexed", k, p)
		}
	}
	var paths []string
	for _, n := range e.ix.Catalog.Notes() {
		paths = append(paths, n.Path)
	}
	for _, p := range paths {
		if strings.Contains(p, ".sheaf") || strings.Contains(p, ".obsidian") || p == "x.md" || strings.HasPrefix(p, "dir.md") {
			t.Errorf("indexed %q", p)
		}
	}
	probs := e.ix.Status().Problems
	for _, p := range []string{"huge.md", "binary.md"} {
		if probs[p] == "" {
			t.Errorf("%s: no problem reported (%v)", p, probs)
		}
	}
	if _, ok := e.ix.Catalog.Note("empty.md"); !ok {
		t.Errorf("empty.md not indexed: %v", slices.Sorted(slices.Values(paths)))
	}
}
