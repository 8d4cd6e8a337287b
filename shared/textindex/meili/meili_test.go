package meili

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/sheaf-dev/sheaf/shared/textindex"
	"github.com/sheaf-dev/sheaf/shared/textindex/meili/meilifake"
	"github.com/sheaf-dev/sheaf/shared/textindex/textindextest"
)

// caps are the limits of Meilisearch the suite must allow for.
var caps = textindextest.Caps{LongFieldsTruncated: true}

// openFake returns an adapter on a fresh index of fake.
func openFake(t testing.TB, fake *meilifake.Server, key string) *Index {
	t.Helper()
	ix, err := Open(context.Background(), Config{URL: fake.URL, APIKey: key, Index: "sheaf-" + randomHex(t)})
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

func randomHex(t testing.TB) string {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

func TestConformanceFake(t *testing.T) {
	fake := meilifake.New(t, meilifake.WithAPIKey("secret key"))
	textindextest.RunWith(t, func(t *testing.T) textindex.Index { return openFake(t, fake, "secret key") }, caps)
}

// TestConformanceReal runs the suite against a real Meilisearch when
// SHEAF_TEST_MEILI_URL is set (SHEAF_TEST_MEILI_KEY: its key). Each subtest
// uses a new index, deleted afterwards.
// realCaps adds what a real server does differently from the fake: it
// segments Chinese and Japanese into words.
var realCaps = textindextest.Caps{LongFieldsTruncated: true, CJKByWord: true}

func TestConformanceReal(t *testing.T) {
	url := os.Getenv("SHEAF_TEST_MEILI_URL")
	if url == "" {
		t.Skip("SHEAF_TEST_MEILI_URL not set: no real Meilisearch to test against")
	}
	key := os.Getenv("SHEAF_TEST_MEILI_KEY")
	textindextest.RunWith(t, func(t *testing.T) textindex.Index {
		ix, err := Open(context.Background(), Config{URL: url, APIKey: key, Index: "sheaf-test-" + randomHex(t)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			info, err := ix.client.DeleteIndex(ctx, ix.cfg.Index)
			if err == nil {
				err = ix.wait(ctx, info.TaskUID)
			}
			if err != nil {
				t.Errorf("delete test index %s: %v", ix.cfg.Index, err)
			}
		})
		return ix
	}, realCaps)
}

func TestOpenDoesNoIO(t *testing.T) {
	fake := meilifake.New(t)
	if _, err := Open(context.Background(), Config{URL: fake.URL, Index: "sheaf-x"}); err != nil {
		t.Fatal(err)
	}
	if calls := fake.Calls(); len(calls) != 0 {
		t.Errorf("Open made %d calls: %+v", len(calls), calls)
	}
	for _, c := range []Config{
		{URL: "", Index: "a"}, {URL: "ftp://x", Index: "a"}, {URL: "http://", Index: "a"},
		{URL: "http://x", Index: ""}, {URL: "http://x", Index: "bad uid"}, {URL: "http://x", Index: "a/b"},
	} {
		if _, err := Open(context.Background(), c); err == nil {
			t.Errorf("Open(%+v): want an error", c)
		}
	}
}

func TestWrongKeyIsAnError(t *testing.T) {
	fake := meilifake.New(t, meilifake.WithAPIKey("right"))
	ix := openFake(t, fake, "wrong")
	_, err := ix.Search(context.Background(), textindex.ParseQuery("x"), textindex.Options{})
	if err == nil {
		t.Fatal("search with a wrong key: want an error")
	}
	if calls := fake.Calls(); len(calls) == 0 || calls[0].Status != http.StatusForbidden {
		t.Errorf("calls: %+v", calls)
	}
}
