package qdrantfake

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"testing"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

var ctx = context.Background()

// client starts a server with collection "c" (dim 2) and returns a client.
func client(t *testing.T) (*Server, *qdrant.Client) {
	t.Helper()
	srv := New()
	host, port, _ := net.SplitHostPort(srv.Start(t))
	p, _ := strconv.Atoi(port)
	c, err := qdrant.NewClient(&qdrant.Config{Host: host, Port: p, SkipCompatibilityCheck: true, PoolSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	err = c.CreateCollection(ctx, &qdrant.CreateCollection{
		CollectionName: "c",
		VectorsConfig:  qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: 2, Distance: qdrant.Distance_Cosine}),
	})
	if err != nil {
		t.Fatal(err)
	}
	return srv, c
}

func upsert(t *testing.T, c *qdrant.Client, n int) {
	t.Helper()
	var pts []*qdrant.PointStruct
	for i := range n {
		pts = append(pts, &qdrant.PointStruct{
			Id:      qdrant.NewIDUUID(fmt.Sprintf("00000000-0000-0000-0000-%012d", i)),
			Vectors: qdrant.NewVectorsDense([]float32{1, float32(i)}),
			Payload: qdrant.NewValueMap(map[string]any{"g": fmt.Sprint(i % 3), "i": i, "b": i%2 == 0, "l": []any{"x", fmt.Sprint(i)}}),
		})
	}
	if _, err := c.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: "c", Points: pts, Wait: qdrant.PtrOf(true)}); err != nil {
		t.Fatal(err)
	}
}

func code(err error) codes.Code { return status.Code(err) }

func TestUnfakedIsRefused(t *testing.T) {
	_, c := client(t)
	upsert(t, c, 3)
	q := qdrant.NewQueryDense([]float32{1, 0})
	cases := map[string]error{}
	_, cases["should"] = c.Query(ctx, &qdrant.QueryPoints{CollectionName: "c", Query: q,
		Filter: &qdrant.Filter{Should: []*qdrant.Condition{qdrant.NewMatch("g", "1")}}})
	_, cases["must_not"] = c.Query(ctx, &qdrant.QueryPoints{CollectionName: "c", Query: q,
		Filter: &qdrant.Filter{MustNot: []*qdrant.Condition{qdrant.NewMatch("g", "1")}}})
	_, cases["text match"] = c.Query(ctx, &qdrant.QueryPoints{CollectionName: "c", Query: q,
		Filter: &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchText("g", "1")}}})
	_, cases["range"] = c.Query(ctx, &qdrant.QueryPoints{CollectionName: "c", Query: q,
		Filter: &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewRange("i", &qdrant.Range{Gt: qdrant.PtrOf(1.0)})}}})
	_, cases["has id"] = c.Query(ctx, &qdrant.QueryPoints{CollectionName: "c", Query: q,
		Filter: &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewHasID(qdrant.NewIDNum(1))}}})
	_, cases["nested key"] = c.Query(ctx, &qdrant.QueryPoints{CollectionName: "c", Query: q,
		Filter: &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatch("a.b", "1")}}})
	_, cases["score threshold"] = c.Query(ctx, &qdrant.QueryPoints{CollectionName: "c", Query: q, ScoreThreshold: qdrant.PtrOf(float32(0.5))})
	_, cases["query by id"] = c.Query(ctx, &qdrant.QueryPoints{CollectionName: "c", Query: qdrant.NewQueryID(qdrant.NewIDNum(1))})
	_, cases["payload exclude"] = c.Query(ctx, &qdrant.QueryPoints{CollectionName: "c", Query: q, WithPayload: qdrant.NewWithPayloadExclude("g")})
	_, cases["scroll order"] = c.Scroll(ctx, &qdrant.ScrollPoints{CollectionName: "c", OrderBy: &qdrant.OrderBy{Key: "i"}})
	_, cases["numeric id"] = c.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: "c", Points: []*qdrant.PointStruct{
		{Id: qdrant.NewIDNum(1), Vectors: qdrant.NewVectorsDense([]float32{1, 0})}}})
	_, cases["struct payload"] = c.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: "c", Points: []*qdrant.PointStruct{
		{Id: qdrant.NewIDUUID("00000000-0000-0000-0000-000000000009"), Vectors: qdrant.NewVectorsDense([]float32{1, 0}),
			Payload: qdrant.NewValueMap(map[string]any{"s": map[string]any{"a": 1}})}}})
	_, cases["delete by id"] = c.Delete(ctx, &qdrant.DeletePoints{CollectionName: "c", Points: qdrant.NewPointsSelector(qdrant.NewIDNum(1))})
	cases["dot distance"] = c.CreateCollection(ctx, &qdrant.CreateCollection{CollectionName: "d",
		VectorsConfig: qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: 2, Distance: qdrant.Distance_Dot})})
	cases["hnsw config"] = c.CreateCollection(ctx, &qdrant.CreateCollection{CollectionName: "d",
		VectorsConfig: qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: 2, Distance: qdrant.Distance_Cosine}),
		HnswConfig:    &qdrant.HnswConfigDiff{M: qdrant.PtrOf(uint64(4))}})
	_, cases["text index"] = c.CreateFieldIndex(ctx, &qdrant.CreateFieldIndexCollection{CollectionName: "c", FieldName: "g",
		FieldType: qdrant.FieldType_FieldTypeText.Enum()})
	_, cases["count rpc"] = c.Count(ctx, &qdrant.CountPoints{CollectionName: "c"})
	for name, err := range cases {
		if code(err) != codes.Unimplemented {
			t.Errorf("%s: %v, want Unimplemented", name, err)
		}
	}
}

func TestErrors(t *testing.T) {
	_, c := client(t)
	q := qdrant.NewQueryDense([]float32{1, 0})
	if _, err := c.Query(ctx, &qdrant.QueryPoints{CollectionName: "missing", Query: q}); code(err) != codes.NotFound {
		t.Errorf("Query of a missing collection: %v", err)
	}
	if _, err := c.Query(ctx, &qdrant.QueryPoints{CollectionName: "c", Query: qdrant.NewQueryDense([]float32{1})}); code(err) != codes.InvalidArgument {
		t.Errorf("Query of the wrong dimension: %v", err)
	}
	_, err := c.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: "c", Points: []*qdrant.PointStruct{
		{Id: qdrant.NewIDUUID("not-a-uuid"), Vectors: qdrant.NewVectorsDense([]float32{1, 0})}}})
	if code(err) != codes.InvalidArgument {
		t.Errorf("Upsert of a bad UUID: %v", err)
	}
	res, err := c.GetCollectionsClient().Delete(ctx, &qdrant.DeleteCollection{CollectionName: "missing"})
	if err != nil || res.Result {
		t.Errorf("Delete of a missing collection = %v, %v; want false", res, err)
	}
	if err := c.CreateCollection(ctx, &qdrant.CreateCollection{CollectionName: "c",
		VectorsConfig: qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: 2, Distance: qdrant.Distance_Cosine})}); code(err) != codes.InvalidArgument {
		t.Errorf("Create of an existing collection: %v", err)
	}
}

func TestScrollPages(t *testing.T) {
	_, c := client(t)
	upsert(t, c, 25)
	var got []string
	req := &qdrant.ScrollPoints{CollectionName: "c", Limit: qdrant.PtrOf(uint32(10)),
		Filter: &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchBool("b", true)}}}
	pages := 0
	for {
		pts, next, err := c.ScrollAndOffset(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, p := range pts {
			got = append(got, p.Id.GetUuid())
			if p.Payload != nil || p.Vectors != nil {
				t.Errorf("unrequested payload or vectors: %v", p)
			}
		}
		if next == nil {
			break
		}
		req.Offset = next
	}
	if len(got) != 13 || pages != 2 || !slices.IsSorted(got) {
		t.Errorf("scrolled %d points in %d pages (sorted %v), want 13 in 2", len(got), pages, slices.IsSorted(got))
	}
}

func TestQueryAndGroups(t *testing.T) {
	_, c := client(t)
	upsert(t, c, 10) // point i is (1, i): the smaller i, the closer to (1, 0)
	q := qdrant.NewQueryDense([]float32{2, 0})
	pts, err := c.Query(ctx, &qdrant.QueryPoints{CollectionName: "c", Query: q, Limit: qdrant.PtrOf(uint64(3)), Offset: qdrant.PtrOf(uint64(1)),
		Filter:      &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchKeywords("g", "0", "1"), qdrant.NewMatch("l", "x")}},
		WithPayload: qdrant.NewWithPayloadInclude("i"), WithVectors: qdrant.NewWithVectors(true)})
	if err != nil {
		t.Fatal(err)
	}
	var is []int64
	for _, p := range pts {
		is = append(is, p.Payload["i"].GetIntegerValue())
		if len(p.Payload) != 1 || len(p.Vectors.GetVector().GetDense().GetData()) != 2 {
			t.Errorf("point %v: want only payload i and the vector", p)
		}
	}
	// g in {0,1}: i = 0,1,3,4,6,7,9; offset 1, limit 3.
	if !slices.Equal(is, []int64{1, 3, 4}) {
		t.Errorf("Query gave i = %v, want [1 3 4]", is)
	}
	if pts[0].Score <= pts[1].Score {
		t.Errorf("scores out of order: %v", pts)
	}
	groups, err := c.QueryGroups(ctx, &qdrant.QueryPointGroups{CollectionName: "c", Query: q, GroupBy: "g",
		Limit: qdrant.PtrOf(uint64(2)), GroupSize: qdrant.PtrOf(uint64(2)), WithPayload: qdrant.NewWithPayload(true)})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, g := range groups {
		for _, h := range g.Hits {
			got = append(got, fmt.Sprintf("%s:%d", g.Id.GetStringValue(), h.Payload["i"].GetIntegerValue()))
		}
	}
	if want := []string{"0:0", "0:3", "1:1", "1:4"}; !slices.Equal(got, want) {
		t.Errorf("groups = %q, want %q", got, want)
	}
}

func TestCallLogAndFailures(t *testing.T) {
	srv, c := client(t)
	srv.ResetCalls()
	upsert(t, c, 4)
	srv.FailAfter("Points/Scroll", 1, codes.Unavailable)
	if _, err := c.Scroll(ctx, &qdrant.ScrollPoints{CollectionName: "c"}); err != nil {
		t.Errorf("first Scroll: %v", err)
	}
	if _, err := c.Scroll(ctx, &qdrant.ScrollPoints{CollectionName: "c"}); code(err) != codes.Unavailable {
		t.Errorf("second Scroll: %v, want Unavailable", err)
	}
	srv.FailAfter("Points/Scroll", -1, 0)
	if _, err := c.Scroll(ctx, &qdrant.ScrollPoints{CollectionName: "c"}); err != nil {
		t.Errorf("Scroll after clearing the failure: %v", err)
	}
	calls := srv.Calls()
	if len(calls) != 4 || calls[0] != (Call{Method: "Points/Upsert", Collection: "c", N: 4}) || srv.Count("Points/Scroll") != 3 {
		t.Errorf("calls = %+v", calls)
	}
	if got := srv.Collections(); !slices.Equal(got, []string{"c"}) {
		t.Errorf("Collections = %q", got)
	}
}

func TestCosinePreprocess(t *testing.T) {
	for _, c := range []struct{ in, want []float32 }{
		{[]float32{3, 4}, []float32{0.6, 0.8}},
		{[]float32{0, 0}, []float32{0, 0}},
		{[]float32{1e-30, 0}, []float32{1e-30, 0}}, // below epsilon: unchanged, as in Qdrant
		{[]float32{3e38, 3e38}, []float32{0, 0}},   // float32 overflow, as in Qdrant
	} {
		if got := cosinePreprocess(c.in); !slices.Equal(got, c.want) {
			t.Errorf("cosinePreprocess(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}
