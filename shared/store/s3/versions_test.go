package s3

import (
	"errors"
	"fmt"
	"testing"

	"github.com/sheaf-dev/sheaf/shared/store"
	"github.com/sheaf-dev/sheaf/shared/store/s3/s3test"
	"github.com/sheaf-dev/sheaf/shared/store/storetest"
)

// versionedGaps are the conformance tests versitygw 1.8 fails on a bucket
// with versioning on.
func versionedGaps() []storetest.Option {
	return []storetest.Option{storetest.Skip("DeleteFolder",
		"versitygw 1.8 with versioning answers 500 to a DELETE of a key that is a folder "+
			"(it tries to keep a version of the directory); S3 answers 204")}
}

// TestConformanceVersioned: the store on a bucket that keeps versions.
func TestConformanceVersioned(t *testing.T) {
	srv := s3test.Start(t, s3test.Options{Versioning: true})
	storetest.Run(t, func(t *testing.T) store.Store {
		b := newBucket(t, srv)
		srv.EnableVersioning(t, b)
		return New(srv.Client(t), b, "vault")
	}, versionedGaps()...)
}

func TestVersions(t *testing.T) {
	srv := s3test.Start(t, s3test.Options{Versioning: true})
	ctx := t.Context()
	plain := New(srv.Client(t), newBucket(t, srv), "")
	if on, err := plain.Versioning(ctx); on || err != nil {
		t.Errorf("Versioning of a new bucket = %v, %v", on, err)
	}
	b := newBucket(t, srv)
	srv.EnableVersioning(t, b)
	s := New(srv.Client(t), b, "v")
	if on, err := s.Versioning(ctx); !on || err != nil {
		t.Fatalf("Versioning = %v, %v", on, err)
	}
	var puts []store.Object
	cur := store.Object{}
	for i := range 3 {
		opts := store.PutOptions{IfMatch: cur.ETag, IfNoneMatch: i == 0,
			Meta: map[string]string{"sheaf-op": fmt.Sprint("op", i), "sheaf-author": "key%3Aa"}}
		obj, err := s.Put(ctx, "n.md", []byte(fmt.Sprint("version ", i)), opts)
		if err != nil {
			t.Fatal(err)
		}
		if obj.Version == "" {
			t.Fatalf("put %d: no version id", i)
		}
		puts, cur = append(puts, obj), obj
	}
	// A neighbour whose key starts with ours is not ours.
	if _, err := s.Put(ctx, "n.md.bak", []byte("other"), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "n.md", cur.ETag); err != nil {
		t.Fatal(err)
	}
	again, err := s.Put(ctx, "n.md", []byte("back"), store.PutOptions{IfNoneMatch: true})
	if err != nil {
		t.Fatalf("create after delete: %v", err)
	}
	var got []store.ObjectVersion
	if err := s.Versions(ctx, "n.md", func(v store.ObjectVersion) error { got = append(got, v); return nil }); err != nil {
		t.Fatal(err)
	}
	var desc []string
	for _, v := range got {
		desc = append(desc, fmt.Sprintf("%v/%v/%s", v.Deleted, v.Latest, v.Version))
	}
	want := []string{
		fmt.Sprintf("false/true/%s", again.Version),
		fmt.Sprintf("true/false/%s", got[min(1, len(got)-1)].Version),
		fmt.Sprintf("false/false/%s", puts[2].Version),
		fmt.Sprintf("false/false/%s", puts[1].Version),
		fmt.Sprintf("false/false/%s", puts[0].Version),
	}
	if fmt.Sprint(desc) != fmt.Sprint(want) {
		t.Fatalf("Versions:\n%q\nwant\n%q", desc, want)
	}
	for i, p := range puts {
		data, obj, err := s.GetVersion(ctx, "n.md", p.Version, 0)
		if err != nil || string(data) != fmt.Sprint("version ", i) || obj.Meta["sheaf-op"] != fmt.Sprint("op", i) {
			t.Errorf("GetVersion %d: %q %+v %v", i, data, obj.Meta, err)
		}
		st, err := s.StatVersion(ctx, "n.md", p.Version)
		if err != nil || st.ETag != p.ETag || st.Meta["sheaf-author"] != "key%3Aa" {
			t.Errorf("StatVersion %d: %+v %v", i, st, err)
		}
	}
	if _, err := s.StatVersion(ctx, "n.md", got[1].Version); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("StatVersion(delete marker) err = %v, want ErrNotFound", err)
	}
	if _, _, err := s.GetVersion(ctx, "n.md", "01ZZZZZZZZZZZZZZZZZZZZZZZZ", 0); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetVersion(unknown) err = %v, want ErrNotFound", err)
	}
	if _, _, err := s.GetVersion(ctx, "n.md", puts[0].Version, 3); !errors.Is(err, store.ErrTooLarge) {
		t.Errorf("GetVersion over max err = %v, want ErrTooLarge", err)
	}
	if err := s.Versions(ctx, "never.md", func(store.ObjectVersion) error { return errors.New("called") }); err != nil {
		t.Errorf("Versions(never.md): %v", err)
	}
}
