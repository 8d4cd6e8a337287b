// Package qdrantfake is an in-memory Qdrant gRPC server for tests: exactly
// the calls and filter kinds the qdrant adapter sends, computed exactly, and
// nothing else.
//
// Faked RPCs: Collections Get, Create, Delete; Points CreateFieldIndex,
// Upsert, Delete (by filter), Scroll, Query and QueryGroups. Every other RPC
// answers codes.Unimplemented (from the generated Unimplemented servers), and
// so does any request field, filter condition, match kind, vector kind or
// payload value kind outside the list below, so the adapter cannot come to
// rely on something the fake only pretends to do.
//
// What is modelled, and how:
//   - Collections: one unnamed dense vector per point with Cosine distance;
//     metadata (Qdrant >= 1.16) is kept and returned by Get. A missing
//     collection is codes.NotFound; Delete of a missing one returns false.
//   - Vectors are preprocessed like Qdrant's Cosine: scaled by the float32
//     norm unless the squared norm is below float32 epsilon. Scores are
//     float32 dot products; ties rank by point id.
//   - Point ids are UUIDs only. Payload values are strings, integers, bools
//     and lists of strings.
//   - Filters: must conditions only, each a field match: keyword, keywords
//     (any of) or boolean, against a value or any element of a list.
//   - Query: nearest dense vector, filter, limit (default 10), offset,
//     with_payload. QueryGroups: the same with group_by a string field and
//     group_size; groups rank by their best hit; exact (Qdrant's own group
//     search gives up after a few rounds, the fake never does).
//   - Scroll: by ascending id (UUIDs compare as 128-bit numbers), offset is
//     an id, limit defaults to 10, next_page_offset is the next id.
//   - with_payload: enable or include; with_vectors: enable (dense output).
//   - Payload indexes are recorded (Get reports them) but not required.
//   - An API key, when set with RequireAPIKey, is checked on every call.
//
// Not modelled: consistency, sharding, named or sparse vectors, HNSW
// approximation, score thresholds, payload selectors beyond include, write
// ordering, timeouts, strict mode.
package qdrantfake

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// maxMsg is Qdrant's default gRPC request size limit (32 MB).
const maxMsg = 32 << 20

// Call is one RPC the server received.
type Call struct {
	Method     string // e.g. "Points/Upsert"
	Collection string
	N          int // points in an Upsert, paths in a filter's keywords match, else 0
}

// Server is the fake. Create it with New, configure it, then Start it.
type Server struct {
	apiKey string

	mu    sync.Mutex
	cols  map[string]*collection
	calls []Call
	fails map[string]failure // by method
}

type failure struct {
	after int // calls still to let through
	code  codes.Code
}

type collection struct {
	dim     int
	meta    map[string]*qdrant.Value
	indexes map[string]qdrant.FieldType
	points  map[uuid.UUID]*point
}

type point struct {
	id      uuid.UUID
	vec     []float32 // preprocessed for Cosine
	payload map[string]*qdrant.Value
}

// New returns a server with no collections.
func New() *Server { return &Server{cols: map[string]*collection{}, fails: map[string]failure{}} }

// FailAfter lets the next n calls of method (e.g. "Points/Upsert") through
// and fails every later one with code, until FailAfter is called again
// (n < 0 never fails).
func (s *Server) FailAfter(method string, n int, code codes.Code) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n < 0 {
		delete(s.fails, method)
		return
	}
	s.fails[method] = failure{after: n, code: code}
}

// RequireAPIKey makes every call need the "api-key" metadata key. Call it
// before Start.
func (s *Server) RequireAPIKey(key string) *Server {
	s.apiKey = key
	return s
}

// Start serves on a free port of 127.0.0.1 until the test ends and returns
// the address (host:port).
func (s *Server) Start(t testing.TB) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("qdrantfake: listen: %v", err)
	}
	g := grpc.NewServer(grpc.MaxRecvMsgSize(maxMsg), grpc.UnaryInterceptor(s.intercept))
	qdrant.RegisterCollectionsServer(g, collections{s: s})
	qdrant.RegisterPointsServer(g, points{s: s})
	qdrant.RegisterQdrantServer(g, service{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = g.Serve(lis)
	}()
	t.Cleanup(func() {
		g.Stop()
		<-done
	})
	return lis.Addr().String()
}

// Start starts a new server (see Server.Start).
func Start(t testing.TB) string { return New().Start(t) }

// Calls returns the calls received so far, oldest first.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

// Count returns how many calls of method (e.g. "Points/Query") arrived.
func (s *Server) Count(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, c := range s.calls {
		if c.Method == method {
			n++
		}
	}
	return n
}

// ResetCalls forgets the calls received so far.
func (s *Server) ResetCalls() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = nil
}

// Collections returns the names of the existing collections, sorted.
func (s *Server) Collections() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for name := range s.cols {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

func (s *Server) intercept(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	if s.apiKey != "" {
		md, _ := metadata.FromIncomingContext(ctx)
		if k := md.Get("api-key"); len(k) != 1 || k[0] != s.apiKey {
			return nil, status.Error(codes.PermissionDenied, "Invalid api-key")
		}
	}
	method := info.FullMethod[strings.LastIndexByte(info.FullMethod[:strings.LastIndexByte(info.FullMethod, '/')], '.')+1:]
	c := Call{Method: method}
	if m, ok := req.(interface{ GetCollectionName() string }); ok {
		c.Collection = m.GetCollectionName()
	}
	if m, ok := req.(*qdrant.UpsertPoints); ok {
		c.N = len(m.GetPoints())
	}
	if m, ok := req.(*qdrant.DeletePoints); ok {
		for _, cond := range m.GetPoints().GetFilter().GetMust() {
			c.N += len(cond.GetField().GetMatch().GetKeywords().GetStrings())
		}
	}
	s.mu.Lock()
	s.calls = append(s.calls, c)
	f, failing := s.fails[method]
	if failing && f.after > 0 {
		f.after--
		s.fails[method] = f
		failing = false
	}
	s.mu.Unlock()
	if failing {
		return nil, status.Errorf(f.code, "qdrantfake: %s made to fail", method)
	}
	return h(ctx, req)
}

// collections, points and service are the three gRPC services (Collections
// and Points both have Get and Delete, so they cannot share one type).
type collections struct {
	qdrant.UnimplementedCollectionsServer
	s *Server
}

type points struct {
	qdrant.UnimplementedPointsServer
	s *Server
}

type service struct {
	qdrant.UnimplementedQdrantServer
}

// only fails with Unimplemented when m has a populated field outside allowed.
func only(m proto.Message, allowed ...string) error {
	var bad protoreflect.Name
	m.ProtoReflect().Range(func(fd protoreflect.FieldDescriptor, _ protoreflect.Value) bool {
		if !slices.Contains(allowed, string(fd.Name())) {
			bad = fd.Name()
			return false
		}
		return true
	})
	if bad != "" {
		return status.Errorf(codes.Unimplemented, "qdrantfake: %s.%s is not faked", m.ProtoReflect().Descriptor().Name(), bad)
	}
	return nil
}

func notFound(name string) error {
	return status.Errorf(codes.NotFound, "Not found: Collection `%s` doesn't exist!", name)
}

// col returns the named collection; s.mu must be held.
func (s *Server) col(name string) (*collection, error) {
	c, ok := s.cols[name]
	if !ok {
		return nil, notFound(name)
	}
	return c, nil
}

// Get implements qdrant.CollectionsServer.
func (cs collections) Get(ctx context.Context, r *qdrant.GetCollectionInfoRequest) (*qdrant.GetCollectionInfoResponse, error) {
	if err := only(r, "collection_name"); err != nil {
		return nil, err
	}
	cs.s.mu.Lock()
	defer cs.s.mu.Unlock()
	c, err := cs.s.col(r.CollectionName)
	if err != nil {
		return nil, err
	}
	schema := map[string]*qdrant.PayloadSchemaInfo{}
	for f, t := range c.indexes {
		st := qdrant.PayloadSchemaType_Keyword
		if t == qdrant.FieldType_FieldTypeBool {
			st = qdrant.PayloadSchemaType_Bool
		}
		schema[f] = &qdrant.PayloadSchemaInfo{DataType: st}
	}
	n := uint64(len(c.points))
	return &qdrant.GetCollectionInfoResponse{Result: &qdrant.CollectionInfo{
		Status: qdrant.CollectionStatus_Green,
		Config: &qdrant.CollectionConfig{
			Params: &qdrant.CollectionParams{
				ShardNumber: 1,
				VectorsConfig: qdrant.NewVectorsConfig(&qdrant.VectorParams{
					Size: uint64(c.dim), Distance: qdrant.Distance_Cosine,
				}),
			},
			Metadata: cloneMap(c.meta),
		},
		PayloadSchema: schema,
		PointsCount:   &n,
	}}, nil
}

// Create implements qdrant.CollectionsServer.
func (cs collections) Create(ctx context.Context, r *qdrant.CreateCollection) (*qdrant.CollectionOperationResponse, error) {
	if err := only(r, "collection_name", "vectors_config", "metadata"); err != nil {
		return nil, err
	}
	p := r.GetVectorsConfig().GetParams()
	if p == nil {
		return nil, status.Error(codes.Unimplemented, "qdrantfake: only one unnamed vector per point is faked")
	}
	if err := only(p, "size", "distance"); err != nil {
		return nil, err
	}
	if p.Distance != qdrant.Distance_Cosine {
		return nil, status.Errorf(codes.Unimplemented, "qdrantfake: distance %v is not faked", p.Distance)
	}
	if p.Size < 1 || p.Size > 65536 {
		return nil, status.Errorf(codes.InvalidArgument, "Validation error in body: [vectors_config.size: value %d invalid, must be from 1 to 65536]", p.Size)
	}
	if r.CollectionName == "" {
		return nil, status.Error(codes.InvalidArgument, "Validation error: collection_name must not be empty")
	}
	cs.s.mu.Lock()
	defer cs.s.mu.Unlock()
	if _, ok := cs.s.cols[r.CollectionName]; ok {
		return nil, status.Errorf(codes.InvalidArgument, "Wrong input: Collection `%s` already exists!", r.CollectionName)
	}
	cs.s.cols[r.CollectionName] = &collection{
		dim: int(p.Size), meta: cloneMap(r.Metadata),
		indexes: map[string]qdrant.FieldType{}, points: map[uuid.UUID]*point{},
	}
	return &qdrant.CollectionOperationResponse{Result: true}, nil
}

// Delete implements qdrant.CollectionsServer.
func (cs collections) Delete(ctx context.Context, r *qdrant.DeleteCollection) (*qdrant.CollectionOperationResponse, error) {
	if err := only(r, "collection_name"); err != nil {
		return nil, err
	}
	cs.s.mu.Lock()
	defer cs.s.mu.Unlock()
	_, ok := cs.s.cols[r.CollectionName]
	delete(cs.s.cols, r.CollectionName)
	return &qdrant.CollectionOperationResponse{Result: ok}, nil
}

func done() *qdrant.PointsOperationResponse {
	return &qdrant.PointsOperationResponse{Result: &qdrant.UpdateResult{Status: qdrant.UpdateStatus_Completed}}
}

// CreateFieldIndex implements qdrant.PointsServer.
func (ps points) CreateFieldIndex(ctx context.Context, r *qdrant.CreateFieldIndexCollection) (*qdrant.PointsOperationResponse, error) {
	if err := only(r, "collection_name", "wait", "field_name", "field_type"); err != nil {
		return nil, err
	}
	t := r.GetFieldType()
	if r.FieldType == nil || (t != qdrant.FieldType_FieldTypeKeyword && t != qdrant.FieldType_FieldTypeBool) {
		return nil, status.Errorf(codes.Unimplemented, "qdrantfake: field index type %v is not faked", r.FieldType)
	}
	ps.s.mu.Lock()
	defer ps.s.mu.Unlock()
	c, err := ps.s.col(r.CollectionName)
	if err != nil {
		return nil, err
	}
	c.indexes[r.FieldName] = t
	return done(), nil
}

// Upsert implements qdrant.PointsServer.
func (ps points) Upsert(ctx context.Context, r *qdrant.UpsertPoints) (*qdrant.PointsOperationResponse, error) {
	if err := only(r, "collection_name", "wait", "points"); err != nil {
		return nil, err
	}
	ps.s.mu.Lock()
	defer ps.s.mu.Unlock()
	c, err := ps.s.col(r.CollectionName)
	if err != nil {
		return nil, err
	}
	pts := make([]*point, 0, len(r.Points))
	for _, ps := range r.Points {
		p, err := c.parsePoint(ps)
		if err != nil {
			return nil, err
		}
		pts = append(pts, p)
	}
	for _, p := range pts {
		c.points[p.id] = p
	}
	return done(), nil
}

func (c *collection) parsePoint(ps *qdrant.PointStruct) (*point, error) {
	if err := only(ps, "id", "payload", "vectors"); err != nil {
		return nil, err
	}
	id, err := parseID(ps.Id)
	if err != nil {
		return nil, err
	}
	v := ps.GetVectors().GetVector()
	if v == nil {
		return nil, status.Error(codes.Unimplemented, "qdrantfake: only one unnamed vector per point is faked")
	}
	if err := only(v, "dense"); err != nil {
		return nil, err
	}
	data := v.GetDense().GetData()
	if len(data) != c.dim {
		return nil, status.Errorf(codes.InvalidArgument, "Wrong input: Vector dimension error: expected dim: %d, got %d", c.dim, len(data))
	}
	for _, val := range ps.Payload {
		if err := checkValue(val, true); err != nil {
			return nil, err
		}
	}
	return &point{id: id, vec: cosinePreprocess(data), payload: cloneMap(ps.Payload)}, nil
}

func parseID(id *qdrant.PointId) (uuid.UUID, error) {
	u, ok := id.GetPointIdOptions().(*qdrant.PointId_Uuid)
	if !ok {
		return uuid.UUID{}, status.Error(codes.Unimplemented, "qdrantfake: only UUID point ids are faked")
	}
	parsed, err := uuid.Parse(u.Uuid)
	if err != nil {
		return uuid.UUID{}, status.Errorf(codes.InvalidArgument, "Unable to parse UUID: %s", u.Uuid)
	}
	return parsed, nil
}

// checkValue accepts the payload kinds the adapter writes.
func checkValue(v *qdrant.Value, top bool) error {
	switch k := v.GetKind().(type) {
	case *qdrant.Value_StringValue, *qdrant.Value_IntegerValue, *qdrant.Value_BoolValue:
		return nil
	case *qdrant.Value_ListValue:
		if top {
			for _, e := range k.ListValue.GetValues() {
				if _, ok := e.GetKind().(*qdrant.Value_StringValue); !ok {
					return status.Error(codes.Unimplemented, "qdrantfake: only lists of strings are faked")
				}
			}
			return nil
		}
	}
	return status.Errorf(codes.Unimplemented, "qdrantfake: payload value %T is not faked", v.GetKind())
}

// cosinePreprocess scales v to unit length the way Qdrant does for Cosine,
// in float32: vectors whose squared norm is below epsilon, or already 1,
// stay as they are.
func cosinePreprocess(v []float32) []float32 {
	const epsilon = 1.1920929e-07 // Rust's f32::EPSILON
	var sq float32
	for _, x := range v {
		sq += x * x
	}
	out := slices.Clone(v)
	if sq < epsilon || math.Abs(float64(sq)-1) <= 1e-6 {
		return out
	}
	n := float32(math.Sqrt(float64(sq)))
	for i := range out {
		out[i] /= n
	}
	return out
}

// Delete implements qdrant.PointsServer (by filter only).
func (ps points) Delete(ctx context.Context, r *qdrant.DeletePoints) (*qdrant.PointsOperationResponse, error) {
	if err := only(r, "collection_name", "wait", "points"); err != nil {
		return nil, err
	}
	f := r.GetPoints().GetFilter()
	if f == nil {
		return nil, status.Error(codes.Unimplemented, "qdrantfake: only delete by filter is faked")
	}
	if err := checkFilter(f); err != nil {
		return nil, err
	}
	ps.s.mu.Lock()
	defer ps.s.mu.Unlock()
	c, err := ps.s.col(r.CollectionName)
	if err != nil {
		return nil, err
	}
	for id, p := range c.points {
		if matches(f, p) {
			delete(c.points, id)
		}
	}
	return done(), nil
}

// checkFilter accepts must conditions of keyword, keywords and bool matches.
func checkFilter(f *qdrant.Filter) error {
	if f == nil {
		return nil
	}
	if err := only(f, "must"); err != nil {
		return err
	}
	for _, c := range f.Must {
		fc := c.GetField()
		if fc == nil {
			return status.Errorf(codes.Unimplemented, "qdrantfake: condition %T is not faked", c.GetConditionOneOf())
		}
		if err := only(fc, "key", "match"); err != nil {
			return err
		}
		switch fc.GetMatch().GetMatchValue().(type) {
		case *qdrant.Match_Keyword, *qdrant.Match_Keywords, *qdrant.Match_Boolean:
		default:
			return status.Errorf(codes.Unimplemented, "qdrantfake: match %T is not faked", fc.GetMatch().GetMatchValue())
		}
		if fc.Key == "" || strings.ContainsAny(fc.Key, ".[") {
			return status.Errorf(codes.Unimplemented, "qdrantfake: key %q is not faked", fc.Key)
		}
	}
	return nil
}

func matches(f *qdrant.Filter, p *point) bool {
	for _, c := range f.GetMust() {
		fc := c.GetField()
		vals := []*qdrant.Value{p.payload[fc.Key]}
		if l := vals[0].GetListValue(); l != nil {
			vals = l.Values
		}
		if !slices.ContainsFunc(vals, func(v *qdrant.Value) bool { return matchOne(fc.Match, v) }) {
			return false
		}
	}
	return true
}

func matchOne(m *qdrant.Match, v *qdrant.Value) bool {
	switch mv := m.GetMatchValue().(type) {
	case *qdrant.Match_Keyword:
		s, ok := v.GetKind().(*qdrant.Value_StringValue)
		return ok && s.StringValue == mv.Keyword
	case *qdrant.Match_Keywords:
		s, ok := v.GetKind().(*qdrant.Value_StringValue)
		return ok && slices.Contains(mv.Keywords.GetStrings(), s.StringValue)
	case *qdrant.Match_Boolean:
		b, ok := v.GetKind().(*qdrant.Value_BoolValue)
		return ok && b.BoolValue == mv.Boolean
	}
	return false
}

// selection is a request's with_payload and with_vectors.
type selection struct {
	payload bool
	include []string // nil: every field
	vectors bool
}

func parseSelection(wp *qdrant.WithPayloadSelector, wv *qdrant.WithVectorsSelector) (selection, error) {
	var sel selection
	switch o := wp.GetSelectorOptions().(type) {
	case nil:
	case *qdrant.WithPayloadSelector_Enable:
		sel.payload = o.Enable
	case *qdrant.WithPayloadSelector_Include:
		sel.payload, sel.include = true, slices.Clone(o.Include.GetFields())
		if sel.include == nil {
			sel.include = []string{}
		}
	default:
		return sel, status.Errorf(codes.Unimplemented, "qdrantfake: with_payload %T is not faked", o)
	}
	switch o := wv.GetSelectorOptions().(type) {
	case nil:
	case *qdrant.WithVectorsSelector_Enable:
		sel.vectors = o.Enable
	default:
		return sel, status.Errorf(codes.Unimplemented, "qdrantfake: with_vectors %T is not faked", o)
	}
	return sel, nil
}

func (sel selection) payloadOf(p *point) map[string]*qdrant.Value {
	if !sel.payload {
		return nil
	}
	out := map[string]*qdrant.Value{}
	for k, v := range p.payload {
		if sel.include == nil || slices.Contains(sel.include, k) {
			out[k] = proto.Clone(v).(*qdrant.Value)
		}
	}
	return out
}

func (sel selection) vectorsOf(p *point) *qdrant.VectorsOutput {
	if !sel.vectors {
		return nil
	}
	return &qdrant.VectorsOutput{VectorsOptions: &qdrant.VectorsOutput_Vector{Vector: &qdrant.VectorOutput{
		Vector: &qdrant.VectorOutput_Dense{Dense: &qdrant.DenseVector{Data: slices.Clone(p.vec)}},
	}}}
}

// Scroll implements qdrant.PointsServer.
func (ps points) Scroll(ctx context.Context, r *qdrant.ScrollPoints) (*qdrant.ScrollResponse, error) {
	if err := only(r, "collection_name", "filter", "offset", "limit", "with_payload", "with_vectors"); err != nil {
		return nil, err
	}
	if err := checkFilter(r.Filter); err != nil {
		return nil, err
	}
	sel, err := parseSelection(r.WithPayload, r.WithVectors)
	if err != nil {
		return nil, err
	}
	var from uuid.UUID
	if r.Offset != nil {
		if from, err = parseID(r.Offset); err != nil {
			return nil, err
		}
	}
	limit := 10
	if r.Limit != nil {
		limit = int(*r.Limit)
	}
	if limit < 1 {
		return nil, status.Error(codes.InvalidArgument, "Validation error in body: [limit: value 0 invalid, must be 1 or more]")
	}
	ps.s.mu.Lock()
	defer ps.s.mu.Unlock()
	c, err := ps.s.col(r.CollectionName)
	if err != nil {
		return nil, err
	}
	var ids []uuid.UUID
	for id, p := range c.points {
		if string(id[:]) >= string(from[:]) && (r.Filter == nil || matches(r.Filter, p)) {
			ids = append(ids, id)
		}
	}
	slices.SortFunc(ids, func(a, b uuid.UUID) int { return strings.Compare(string(a[:]), string(b[:])) })
	resp := &qdrant.ScrollResponse{}
	for i, id := range ids {
		if i == limit {
			resp.NextPageOffset = qdrant.NewIDUUID(id.String())
			break
		}
		p := c.points[id]
		resp.Result = append(resp.Result, &qdrant.RetrievedPoint{
			Id: qdrant.NewIDUUID(id.String()), Payload: sel.payloadOf(p), Vectors: sel.vectorsOf(p),
		})
	}
	return resp, nil
}

// search is the part of Query and QueryGroups the two share.
type search struct {
	query  []float32
	filter *qdrant.Filter
	sel    selection
}

func parseSearch(q *qdrant.Query, f *qdrant.Filter, wp *qdrant.WithPayloadSelector, wv *qdrant.WithVectorsSelector) (search, error) {
	var s search
	nearest := q.GetNearest()
	if nearest == nil {
		return s, status.Errorf(codes.Unimplemented, "qdrantfake: query %T is not faked", q.GetVariant())
	}
	dense := nearest.GetDense()
	if dense == nil {
		return s, status.Errorf(codes.Unimplemented, "qdrantfake: vector input %T is not faked", nearest.GetVariant())
	}
	if err := checkFilter(f); err != nil {
		return s, err
	}
	sel, err := parseSelection(wp, wv)
	if err != nil {
		return s, err
	}
	return search{query: cosinePreprocess(dense.Data), filter: f, sel: sel}, nil
}

type scored struct {
	p *point
	s float32
}

// rank scores the admitted points of c, best first; s.mu must be held.
func (q search) rank(c *collection) ([]scored, error) {
	if len(q.query) != c.dim {
		return nil, status.Errorf(codes.InvalidArgument, "Wrong input: Vector dimension error: expected dim: %d, got %d", c.dim, len(q.query))
	}
	var out []scored
	for _, p := range c.points {
		if q.filter == nil || matches(q.filter, p) {
			var d float32
			for i, x := range q.query {
				d += x * p.vec[i]
			}
			out = append(out, scored{p, d})
		}
	}
	slices.SortFunc(out, func(a, b scored) int {
		if c := cmp.Compare(b.s, a.s); c != 0 {
			return c
		}
		return strings.Compare(string(a.p.id[:]), string(b.p.id[:]))
	})
	return out, nil
}

func (q search) hit(h scored) *qdrant.ScoredPoint {
	return &qdrant.ScoredPoint{
		Id: qdrant.NewIDUUID(h.p.id.String()), Score: h.s,
		Payload: q.sel.payloadOf(h.p), Vectors: q.sel.vectorsOf(h.p),
	}
}

// Query implements qdrant.PointsServer.
func (ps points) Query(ctx context.Context, r *qdrant.QueryPoints) (*qdrant.QueryResponse, error) {
	if err := only(r, "collection_name", "query", "filter", "limit", "offset", "with_payload", "with_vectors"); err != nil {
		return nil, err
	}
	q, err := parseSearch(r.Query, r.Filter, r.WithPayload, r.WithVectors)
	if err != nil {
		return nil, err
	}
	limit, offset := uint64(10), r.GetOffset()
	if r.Limit != nil {
		limit = *r.Limit
	}
	ps.s.mu.Lock()
	defer ps.s.mu.Unlock()
	c, err := ps.s.col(r.CollectionName)
	if err != nil {
		return nil, err
	}
	ranked, err := q.rank(c)
	if err != nil {
		return nil, err
	}
	resp := &qdrant.QueryResponse{}
	for i := offset; i < uint64(len(ranked)) && i-offset < limit; i++ {
		resp.Result = append(resp.Result, q.hit(ranked[i]))
	}
	return resp, nil
}

// QueryGroups implements qdrant.PointsServer.
func (ps points) QueryGroups(ctx context.Context, r *qdrant.QueryPointGroups) (*qdrant.QueryGroupsResponse, error) {
	if err := only(r, "collection_name", "query", "filter", "limit", "group_size", "group_by", "with_payload", "with_vectors"); err != nil {
		return nil, err
	}
	q, err := parseSearch(r.Query, r.Filter, r.WithPayload, r.WithVectors)
	if err != nil {
		return nil, err
	}
	if r.GroupBy == "" || strings.ContainsAny(r.GroupBy, ".[") {
		return nil, status.Errorf(codes.Unimplemented, "qdrantfake: group_by %q is not faked", r.GroupBy)
	}
	limit, size := uint64(3), uint64(3)
	if r.Limit != nil {
		limit = *r.Limit
	}
	if r.GroupSize != nil {
		size = *r.GroupSize
	}
	if limit < 1 || size < 1 {
		return nil, status.Error(codes.InvalidArgument, "Validation error: limit and group_size must be 1 or more")
	}
	ps.s.mu.Lock()
	defer ps.s.mu.Unlock()
	c, err := ps.s.col(r.CollectionName)
	if err != nil {
		return nil, err
	}
	ranked, err := q.rank(c)
	if err != nil {
		return nil, err
	}
	groups := map[string]*qdrant.PointGroup{}
	var order []*qdrant.PointGroup
	for _, h := range ranked {
		key, ok := h.p.payload[r.GroupBy].GetKind().(*qdrant.Value_StringValue)
		if !ok {
			continue
		}
		g := groups[key.StringValue]
		if g == nil {
			if uint64(len(order)) == limit {
				continue
			}
			g = &qdrant.PointGroup{Id: qdrant.NewGroupIDString(key.StringValue)}
			groups[key.StringValue] = g
			order = append(order, g)
		}
		if uint64(len(g.Hits)) < size {
			g.Hits = append(g.Hits, q.hit(h))
		}
	}
	return &qdrant.QueryGroupsResponse{Result: &qdrant.GroupsResult{Groups: order}}, nil
}

// HealthCheck implements qdrant.QdrantServer.
func (service) HealthCheck(ctx context.Context, r *qdrant.HealthCheckRequest) (*qdrant.HealthCheckReply, error) {
	return &qdrant.HealthCheckReply{Title: "qdrantfake", Version: "1.17.0"}, nil
}

func cloneMap(m map[string]*qdrant.Value) map[string]*qdrant.Value {
	if m == nil {
		return nil
	}
	out := make(map[string]*qdrant.Value, len(m))
	for k, v := range m {
		out[k] = proto.Clone(v).(*qdrant.Value)
	}
	return out
}

// String describes the server's state, for test failure messages.
func (s *Server) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	for name, c := range s.cols {
		fmt.Fprintf(&b, "%s: dim %d, %d points; ", name, c.dim, len(c.points))
	}
	return b.String()
}
