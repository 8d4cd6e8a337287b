// Package meilifake is an in-process fake of exactly the Meilisearch
// endpoints and parameters the meili adapter uses, for tests:
//
//	PATCH /indexes/{uid}/settings        searchableAttributes, filterableAttributes,
//	                                     sortableAttributes, typoTolerance (disabled only),
//	                                     prefixSearch ("indexingTime" only)
//	POST  /indexes/{uid}/documents       JSON array, ?primaryKey= (add or replace)
//	POST  /indexes/{uid}/documents/delete  {"filter": "..."}
//	POST  /indexes/{uid}/documents/fetch   fields, filter, limit, offset
//	GET   /tasks/{uid}
//	POST  /multi-search                  queries (q, filter, matchingStrategy all|last,
//	                                     showRankingScore, attributesToRetrieve,
//	                                     attributesToCrop, cropLength, cropMarker,
//	                                     limit, offset), optional federation {limit, offset}
//
// Any other route, unknown JSON field, query parameter or setting value is
// rejected with a Meilisearch-style error, so the adapter cannot come to
// rely on behaviour the fake does not model. Every call is logged (Calls).
//
// Writes are asynchronous tasks, processed in order by one goroutine; a
// task that fails reports Meilisearch's error object. FailNextTask makes the
// next task fail.
//
// Matching is a small honest model of Meilisearch's, not a copy:
//   - words are runs of letters, digits and marks, lower-cased with
//     diacritics removed; each character of a script written without spaces
//     (Chinese, Japanese, Thai, ...) is a word of its own, where Meilisearch
//     segments such text into dictionary words;
//   - only the first 65,535 words of an attribute are indexed, and an array's
//     elements are 8 positions apart (no phrase spans two elements);
//   - in q, "phrases" match consecutive words, a leading '-' excludes a word or
//     phrase (exactly, never as a prefix), only the last word of q is a
//     prefix (when q does not end with a separator), and only the first 10
//     positive terms count; there is no typo tolerance;
//   - matchingStrategy "all" needs every term; "last" drops terms from the
//     end until the rest match;
//   - _rankingScore orders by the number of terms matched, then by the first
//     searchable attribute a term was found in (proximity, exactness and
//     term frequency are not modelled); ties keep insertion order;
//   - filters: AND, OR, parentheses, = != > >= < <= and IN [...], with
//     Meilisearch's quoting and escaping; strings compare case-insensitively
//     (Meilisearch normalises facet values); the field must be filterable;
//   - federated search merges the queries by score, keeps each document once,
//     and counts the union of matches; hits stop at 1,000 (maxTotalHits);
//   - cropping keeps cropLength words around the first matching word, never
//     highlights.
package meilifake

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// maxTotalHits is Meilisearch's default pagination limit.
const maxTotalHits = 1000

// Call is one request the fake received.
type Call struct {
	Method string
	Path   string
	Query  string
	Body   []byte
	Status int
}

// Server is a running fake. Its zero value is not usable; call New.
type Server struct {
	URL string

	srv *httptest.Server
	key string

	mu       sync.Mutex
	cond     *sync.Cond
	indexes  map[string]*index
	tasks    []*task
	pending  []*task
	calls    []Call
	failNext *apiError
	closed   bool
	done     chan struct{}
}

// Option configures New.
type Option func(*Server)

// WithAPIKey makes the fake require "Authorization: Bearer key".
func WithAPIKey(key string) Option { return func(s *Server) { s.key = key } }

// New starts a fake on 127.0.0.1 and stops it when tb ends.
func New(tb testing.TB, opts ...Option) *Server {
	tb.Helper()
	s := &Server{indexes: map[string]*index{}, done: make(chan struct{})}
	s.cond = sync.NewCond(&s.mu)
	for _, o := range opts {
		o(s)
	}
	s.srv = httptest.NewServer(s.handler())
	s.URL = s.srv.URL
	go s.work()
	tb.Cleanup(s.Close)
	return s
}

// Close stops the task worker and the HTTP server. It is idempotent.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	s.cond.Broadcast()
	s.mu.Unlock()
	<-s.done
	s.srv.Close()
}

// Calls returns a copy of the calls received so far.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

// ResetCalls forgets the calls received so far.
func (s *Server) ResetCalls() {
	s.mu.Lock()
	s.calls = nil
	s.mu.Unlock()
}

// FailNextTask makes the next task processed fail with Meilisearch error
// code and message, leaving the index unchanged.
func (s *Server) FailNextTask(code, message string) {
	s.mu.Lock()
	s.failNext = &apiError{Message: message, Code: code, Type: "invalid_request"}
	s.mu.Unlock()
}

// DocumentCount returns the number of documents in index uid.
func (s *Server) DocumentCount(uid string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ix := s.indexes[uid]; ix != nil {
		return len(ix.docs)
	}
	return 0
}

// Document returns a copy of document id of index uid.
func (s *Server) Document(uid, id string) (map[string]any, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ix := s.indexes[uid]
	if ix == nil {
		return nil, false
	}
	d, ok := ix.docs[id]
	if !ok {
		return nil, false
	}
	out := make(map[string]any, len(d))
	for k, v := range d {
		out[k] = v
	}
	return out, true
}

// apiError is Meilisearch's error object.
type apiError struct {
	Message string `json:"message"`
	Code    string `json:"code"`
	Type    string `json:"type"`
	Link    string `json:"link"`
}

func errf(code, format string, args ...any) *apiError {
	return &apiError{Message: fmt.Sprintf(format, args...), Code: code, Type: "invalid_request",
		Link: "https://docs.meilisearch.com/errors#" + code}
}

// task is one asynchronous write.
type task struct {
	UID        int64     `json:"uid"`
	IndexUID   string    `json:"indexUid"`
	Status     string    `json:"status"`
	Type       string    `json:"type"`
	Error      *apiError `json:"error"`
	EnqueuedAt time.Time `json:"enqueuedAt"`
	StartedAt  time.Time `json:"startedAt"`
	FinishedAt time.Time `json:"finishedAt"`

	apply func() *apiError // runs with s.mu held
}

// work processes tasks in order until Close.
func (s *Server) work() {
	defer close(s.done)
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		for len(s.pending) == 0 && !s.closed {
			s.cond.Wait()
		}
		if s.closed {
			return
		}
		t := s.pending[0]
		s.pending = s.pending[1:]
		t.StartedAt = time.Now().UTC()
		if s.failNext != nil {
			t.Error, s.failNext = s.failNext, nil
		} else {
			t.Error = t.apply()
		}
		t.apply = nil // the task stays for getTask; its documents need not
		t.Status = "succeeded"
		if t.Error != nil {
			t.Status = "failed"
		}
		t.FinishedAt = time.Now().UTC()
	}
}

// enqueue registers a task; s.mu must be held.
func (s *Server) enqueue(uid, typ string, apply func() *apiError) *task {
	t := &task{UID: int64(len(s.tasks)), IndexUID: uid, Status: "enqueued", Type: typ,
		EnqueuedAt: time.Now().UTC(), apply: apply}
	s.tasks = append(s.tasks, t)
	s.pending = append(s.pending, t)
	s.cond.Signal()
	return t
}

func (s *Server) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("PATCH /indexes/{uid}/settings", s.updateSettings)
	mux.HandleFunc("POST /indexes/{uid}/documents", s.addDocuments)
	mux.HandleFunc("POST /indexes/{uid}/documents/delete", s.deleteDocuments)
	mux.HandleFunc("POST /indexes/{uid}/documents/fetch", s.fetchDocuments)
	mux.HandleFunc("GET /tasks/{uid}", s.getTask)
	mux.HandleFunc("POST /multi-search", s.multiSearch)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, errf("unsupported_by_fake", "meilifake does not serve %s %s", r.Method, r.URL.Path))
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			writeError(w, http.StatusBadRequest, errf("bad_request", "read body: %v", err))
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		defer func() {
			s.mu.Lock()
			s.calls = append(s.calls, Call{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Body: body, Status: rec.status})
			s.mu.Unlock()
		}()
		if s.key != "" {
			auth := r.Header.Get("Authorization")
			if auth == "" {
				writeError(rec, http.StatusUnauthorized, errf("missing_authorization_header", "The Authorization header is missing."))
				return
			}
			if auth != "Bearer "+s.key {
				writeError(rec, http.StatusForbidden, errf("invalid_api_key", "The provided API key is invalid."))
				return
			}
		}
		mux.ServeHTTP(rec, r)
	})
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, e *apiError) { writeJSON(w, status, e) }

// decodeStrict decodes body into v, rejecting unknown fields.
func decodeStrict(body io.Reader, v any) *apiError {
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return errf("bad_request", "meilifake: %v", err)
	}
	if dec.More() {
		return errf("bad_request", "meilifake: trailing data after JSON body")
	}
	return nil
}

// readBody checks that r has no query parameters and decodes its body
// strictly into v; on failure it answers 400 and returns false.
func readBody(w http.ResponseWriter, r *http.Request, v any) bool {
	e := noQuery(r)
	if e == nil {
		e = decodeStrict(r.Body, v)
	}
	if e != nil {
		writeError(w, http.StatusBadRequest, e)
		return false
	}
	return true
}

// noQuery rejects query parameters other than allowed.
func noQuery(r *http.Request, allowed ...string) *apiError {
	for k := range r.URL.Query() {
		if !slices.Contains(allowed, k) {
			return errf("bad_request", "meilifake: unsupported query parameter %q", k)
		}
	}
	return nil
}

var validUID = regexp.MustCompile(`^[A-Za-z0-9_-]{1,400}$`)

// accepted answers a write with its task summary.
func accepted(w http.ResponseWriter, t *task) {
	writeJSON(w, http.StatusAccepted, map[string]any{
		"taskUid": t.UID, "indexUid": t.IndexUID, "status": "enqueued", "type": t.Type, "enqueuedAt": t.EnqueuedAt,
	})
}

// index is one fake index.
type index struct {
	primaryKey string
	searchable []string // nil: every field, in name order
	filterable map[string]bool
	docs       map[string]map[string]any
	seq        map[string]int64
	next       int64
	analyzed   map[string][]attrWords                // by document id, for the searchable attributes
	byValue    map[string]map[string]map[string]bool // field -> lower-cased value -> ids (see candidates)
}

// indexFor returns index uid, creating it; s.mu must be held.
func (s *Server) indexFor(uid string) *index {
	ix := s.indexes[uid]
	if ix == nil {
		ix = &index{filterable: map[string]bool{}, docs: map[string]map[string]any{}, seq: map[string]int64{},
			analyzed: map[string][]attrWords{}}
		s.indexes[uid] = ix
	}
	return ix
}

type settingsBody struct {
	SearchableAttributes *[]string `json:"searchableAttributes"`
	FilterableAttributes *[]string `json:"filterableAttributes"`
	SortableAttributes   *[]string `json:"sortableAttributes"`
	TypoTolerance        *struct {
		Enabled             *bool `json:"enabled"`
		MinWordSizeForTypos *struct {
			OneTypo  int `json:"oneTypo"`
			TwoTypos int `json:"twoTypos"`
		} `json:"minWordSizeForTypos"`
		DisableOnWords      []string `json:"disableOnWords"`
		DisableOnAttributes []string `json:"disableOnAttributes"`
		DisableOnNumbers    bool     `json:"disableOnNumbers"`
	} `json:"typoTolerance"`
	PrefixSearch *string `json:"prefixSearch"`
}

func (s *Server) updateSettings(w http.ResponseWriter, r *http.Request) {
	uid := r.PathValue("uid")
	var b settingsBody
	if !readBody(w, r, &b) {
		return
	}
	if !validUID.MatchString(uid) {
		writeError(w, http.StatusBadRequest, errf("invalid_index_uid", "invalid index uid %q", uid))
		return
	}
	if t := b.TypoTolerance; t != nil && (t.Enabled == nil || *t.Enabled) {
		writeError(w, http.StatusBadRequest, errf("unsupported_by_fake", "meilifake models no typo tolerance: send enabled: false"))
		return
	}
	if b.PrefixSearch != nil && *b.PrefixSearch != "indexingTime" {
		writeError(w, http.StatusBadRequest, errf("unsupported_by_fake", "meilifake models prefixSearch indexingTime only"))
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.enqueue(uid, "settingsUpdate", func() *apiError {
		ix := s.indexFor(uid)
		if b.SearchableAttributes != nil {
			ix.searchable = append([]string(nil), *b.SearchableAttributes...)
			if len(ix.searchable) == 1 && ix.searchable[0] == "*" {
				ix.searchable = nil
			}
			ix.analyzed = map[string][]attrWords{}
		}
		if b.FilterableAttributes != nil {
			ix.filterable = map[string]bool{}
			for _, f := range *b.FilterableAttributes {
				ix.filterable[f] = true
			}
		}
		return nil
	})
	accepted(w, t)
}

var validDocID = regexp.MustCompile(`^[A-Za-z0-9_-]{1,511}$`)

func (s *Server) addDocuments(w http.ResponseWriter, r *http.Request) {
	uid := r.PathValue("uid")
	if e := noQuery(r, "primaryKey"); e != nil {
		writeError(w, http.StatusBadRequest, e)
		return
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		writeError(w, http.StatusUnsupportedMediaType, errf("invalid_content_type", "meilifake accepts application/json only, not %q", ct))
		return
	}
	var docs []map[string]any
	dec := json.NewDecoder(r.Body)
	if err := dec.Decode(&docs); err != nil {
		writeError(w, http.StatusBadRequest, errf("malformed_payload", "meilifake: documents must be a JSON array of objects: %v", err))
		return
	}
	if !validUID.MatchString(uid) {
		writeError(w, http.StatusBadRequest, errf("invalid_index_uid", "invalid index uid %q", uid))
		return
	}
	pk := r.URL.Query().Get("primaryKey")
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.enqueue(uid, "documentAdditionOrUpdate", func() *apiError {
		ix := s.indexFor(uid)
		key := ix.primaryKey
		switch {
		case key == "" && pk == "":
			return errf("index_primary_key_no_candidate_found", "meilifake: no primary key given")
		case key == "":
			key = pk
		case pk != "" && pk != key:
			return errf("index_primary_key_already_exists", "index already has primary key %q", key)
		}
		ids := make([]string, len(docs))
		for i, d := range docs {
			var id string
			switch v := d[key].(type) {
			case string:
				id = v
			case float64:
				id = strconv.FormatFloat(v, 'f', -1, 64)
			case nil:
				return errf("missing_document_id", "Document doesn't have a `%s` attribute", key)
			}
			if !validDocID.MatchString(id) {
				return errf("invalid_document_id", "Document identifier `%v` is invalid. A document identifier can be of type integer or string, only composed of alphanumeric characters (a-z A-Z 0-9), hyphens (-) and underscores (_), and can not be more than 511 bytes.", d[key])
			}
			ids[i] = id
		}
		ix.primaryKey = key
		for i, d := range docs {
			id := ids[i]
			if old, ok := ix.docs[id]; !ok {
				ix.seq[id] = ix.next
				ix.next++
			} else {
				ix.indexValues(id, old, false)
			}
			ix.docs[id] = d
			ix.indexValues(id, d, true)
			delete(ix.analyzed, id)
		}
		return nil
	})
	accepted(w, t)
}

func (s *Server) deleteDocuments(w http.ResponseWriter, r *http.Request) {
	uid := r.PathValue("uid")
	var b struct {
		Filter *string `json:"filter"`
	}
	if !readBody(w, r, &b) {
		return
	}
	if b.Filter == nil {
		writeError(w, http.StatusBadRequest, errf("missing_document_filter", "Missing field `filter`"))
		return
	}
	f, err := parseFilter(*b.Filter)
	if err != nil {
		writeError(w, http.StatusBadRequest, errf("invalid_document_filter", "%v", err))
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.enqueue(uid, "documentDeletion", func() *apiError {
		ix := s.indexes[uid]
		if ix == nil {
			return errf("index_not_found", "Index `%s` not found.", uid)
		}
		if e := ix.checkFilterable(f, "invalid_document_filter"); e != nil {
			return e
		}
		for _, id := range ix.candidates(f) {
			if d := ix.docs[id]; d != nil && f.eval(d) {
				ix.indexValues(id, d, false)
				delete(ix.docs, id)
				delete(ix.seq, id)
				delete(ix.analyzed, id)
			}
		}
		return nil
	})
	accepted(w, t)
}

func (ix *index) checkFilterable(f filter, code string) *apiError {
	var bad string
	f.fields(func(name string) {
		if !ix.filterable[name] && bad == "" {
			bad = name
		}
	})
	if bad != "" {
		return errf(code, "Attribute `%s` is not filterable.", bad)
	}
	return nil
}

func (s *Server) fetchDocuments(w http.ResponseWriter, r *http.Request) {
	uid := r.PathValue("uid")
	var b struct {
		Fields []string `json:"fields"`
		Filter *string  `json:"filter"`
		Limit  *int     `json:"limit"`
		Offset *int     `json:"offset"`
	}
	if !readBody(w, r, &b) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ix := s.indexes[uid]
	if ix == nil {
		writeError(w, http.StatusNotFound, errf("index_not_found", "Index `%s` not found.", uid))
		return
	}
	var f filter
	if b.Filter != nil {
		var err error
		if f, err = parseFilter(*b.Filter); err != nil {
			writeError(w, http.StatusBadRequest, errf("invalid_document_filter", "%v", err))
			return
		}
		if e := ix.checkFilterable(f, "invalid_document_filter"); e != nil {
			writeError(w, http.StatusBadRequest, e)
			return
		}
	}
	limit, offset := 20, 0
	if b.Limit != nil {
		limit = *b.Limit
	}
	if b.Offset != nil {
		offset = *b.Offset
	}
	var ids []string
	if f == nil {
		ids = ix.ordered()
	} else {
		for _, id := range ix.candidates(f) { // narrowed: a page costs its filter's documents
			if d := ix.docs[id]; d != nil && f.eval(d) {
				ids = append(ids, id)
			}
		}
		sort.Slice(ids, func(i, j int) bool { return ix.seq[ids[i]] < ix.seq[ids[j]] })
		ids = slices.Compact(ids) // a document holding two pinned values came twice
	}
	results := []map[string]any{}
	for i := offset; i < len(ids) && i < offset+limit; i++ {
		results = append(results, project(ix.docs[ids[i]], b.Fields))
	}
	writeJSON(w, http.StatusOK, map[string]any{"results": results, "offset": offset, "limit": limit, "total": len(ids)})
}

// ordered returns the document ids in insertion order.
func (ix *index) ordered() []string {
	ids := make([]string, 0, len(ix.docs))
	for id := range ix.docs {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ix.seq[ids[i]] < ix.seq[ids[j]] })
	return ids
}

// project copies the fields of d listed in fields (all when nil or "*").
func project(d map[string]any, fields []string) map[string]any {
	if len(fields) == 0 || (len(fields) == 1 && fields[0] == "*") {
		out := make(map[string]any, len(d))
		for k, v := range d {
			out[k] = v
		}
		return out
	}
	out := map[string]any{}
	for _, f := range fields {
		if v, ok := d[f]; ok {
			out[f] = v
		}
	}
	return out
}

func (s *Server) getTask(w http.ResponseWriter, r *http.Request) {
	if e := noQuery(r); e != nil {
		writeError(w, http.StatusBadRequest, e)
		return
	}
	n, err := strconv.ParseInt(r.PathValue("uid"), 10, 64)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil || n < 0 || n >= int64(len(s.tasks)) {
		writeError(w, http.StatusNotFound, errf("task_not_found", "Task `%s` not found.", r.PathValue("uid")))
		return
	}
	writeJSON(w, http.StatusOK, s.tasks[n])
}

// searchQuery is one query of a multi-search.
type searchQuery struct {
	IndexUID             string          `json:"indexUid"`
	Q                    *string         `json:"q"`
	Filter               json.RawMessage `json:"filter"`
	MatchingStrategy     string          `json:"matchingStrategy"`
	ShowRankingScore     bool            `json:"showRankingScore"`
	AttributesToRetrieve []string        `json:"attributesToRetrieve"`
	AttributesToCrop     []string        `json:"attributesToCrop"`
	CropLength           *int            `json:"cropLength"`
	CropMarker           *string         `json:"cropMarker"`
	Limit                *int            `json:"limit"`
	Offset               *int            `json:"offset"`
	Hybrid               json.RawMessage `json:"hybrid"`
}

type multiSearchBody struct {
	Federation *struct {
		Limit  *int `json:"limit"`
		Offset *int `json:"offset"`
	} `json:"federation"`
	Queries []searchQuery `json:"queries"`
}

// scored is one matching document of one query.
type scored struct {
	id    string
	score float64
	query int
}

// prepared is a validated query.
type prepared struct {
	sq     searchQuery
	ix     *index
	q      query
	filter filter
}

func (s *Server) multiSearch(w http.ResponseWriter, r *http.Request) {
	var b multiSearchBody
	if !readBody(w, r, &b) {
		return
	}
	if b.Queries == nil {
		writeError(w, http.StatusBadRequest, errf("bad_request", "Missing field `queries`"))
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var ps []prepared
	for i, sq := range b.Queries {
		p, e := s.prepare(sq, b.Federation != nil)
		if e != nil {
			e.Message = fmt.Sprintf("Inside `.queries[%d]`: %s", i, e.Message)
			writeError(w, http.StatusBadRequest, e)
			return
		}
		ps = append(ps, p)
	}
	if b.Federation == nil {
		results := []map[string]any{}
		for _, p := range ps {
			limit, offset := 20, 0
			if p.sq.Limit != nil {
				limit = *p.sq.Limit
			}
			if p.sq.Offset != nil {
				offset = *p.sq.Offset
			}
			matches := p.run(0)
			hits := []map[string]any{}
			for i := offset; i < len(matches) && i < offset+limit && i < maxTotalHits; i++ {
				hits = append(hits, p.hit(matches[i], nil))
			}
			results = append(results, map[string]any{"indexUid": p.sq.IndexUID, "hits": hits, "query": *p.sq.Q,
				"processingTimeMs": 0, "limit": limit, "offset": offset, "estimatedTotalHits": len(matches)})
		}
		writeJSON(w, http.StatusOK, map[string]any{"results": results})
		return
	}
	limit, offset := 20, 0
	if b.Federation.Limit != nil {
		limit = *b.Federation.Limit
	}
	if b.Federation.Offset != nil {
		offset = *b.Federation.Offset
	}
	var all []scored
	for i, p := range ps {
		all = append(all, p.run(i)...)
	}
	sort.SliceStable(all, func(i, j int) bool {
		if all[i].score != all[j].score {
			return all[i].score > all[j].score
		}
		return all[i].query < all[j].query
	})
	seen := map[string]bool{}
	var merged []scored
	for _, m := range all {
		key := ps[m.query].sq.IndexUID + "\x00" + m.id
		if !seen[key] {
			seen[key] = true
			merged = append(merged, m)
		}
	}
	hits := []map[string]any{}
	for i := offset; i < len(merged) && i < offset+limit && i < maxTotalHits; i++ {
		m := merged[i]
		hits = append(hits, ps[m.query].hit(m, map[string]any{
			"indexUid": ps[m.query].sq.IndexUID, "queriesPosition": m.query, "weightedRankingScore": m.score,
		}))
	}
	writeJSON(w, http.StatusOK, map[string]any{"hits": hits, "processingTimeMs": 0, "limit": limit, "offset": offset,
		"estimatedTotalHits": len(merged)})
}

// prepare validates one query; s.mu must be held.
func (s *Server) prepare(sq searchQuery, federated bool) (prepared, *apiError) {
	p := prepared{sq: sq}
	if len(sq.Hybrid) > 0 && string(sq.Hybrid) != "null" {
		return p, errf("unsupported_by_fake", "meilifake does not model hybrid search")
	}
	if federated && (sq.Limit != nil || sq.Offset != nil) {
		return p, errf("invalid_multi_search_query_pagination", "Using pagination options is not allowed in federated queries.")
	}
	switch sq.MatchingStrategy {
	case "", "last", "all":
	default:
		return p, errf("unsupported_by_fake", "meilifake models matchingStrategy all and last only, not %q", sq.MatchingStrategy)
	}
	if sq.Q == nil {
		return p, errf("unsupported_by_fake", "meilifake needs q in every query")
	}
	p.ix = s.indexes[sq.IndexUID]
	if p.ix == nil {
		return p, errf("index_not_found", "Index `%s` not found.", sq.IndexUID)
	}
	if len(sq.Filter) > 0 && string(sq.Filter) != "null" {
		var fs string
		if err := json.Unmarshal(sq.Filter, &fs); err != nil {
			return p, errf("unsupported_by_fake", "meilifake models string filters only")
		}
		f, err := parseFilter(fs)
		if err != nil {
			return p, errf("invalid_search_filter", "%v", err)
		}
		if e := p.ix.checkFilterable(f, "invalid_search_filter"); e != nil {
			return p, e
		}
		p.filter = f
	}
	p.q = parseQuery(*sq.Q)
	return p, nil
}

// run returns the documents matching p, best first.
func (p prepared) run(qi int) []scored {
	strategy := p.sq.MatchingStrategy
	if strategy == "" {
		strategy = "last"
	}
	var ids []string
	if p.filter == nil {
		ids = p.ix.ordered()
	} else {
		// Narrowed, as Meilisearch's filter index does: a query per note
		// (the adapter's best passages) costs that note's documents, not
		// the whole index's.
		ids = p.ix.candidates(p.filter)
		sort.Slice(ids, func(i, j int) bool { return p.ix.seq[ids[i]] < p.ix.seq[ids[j]] })
		ids = slices.Compact(ids) // a document holding two pinned values came twice
	}
	var out []scored
	for _, id := range ids {
		d := p.ix.docs[id]
		if d == nil || p.filter != nil && !p.filter.eval(d) {
			continue
		}
		if sc := p.q.score(p.ix.analyze(id), strategy); sc > 0 {
			out = append(out, scored{id: id, score: sc, query: qi})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].score > out[j].score })
	return out
}

// analyze returns the searchable attributes of document id, analysed once.
func (ix *index) analyze(id string) []attrWords {
	if a, ok := ix.analyzed[id]; ok {
		return a
	}
	d := ix.docs[id]
	names := ix.searchable
	if names == nil {
		for k := range d {
			names = append(names, k)
		}
		sort.Strings(names)
	}
	a := make([]attrWords, len(names))
	for i, n := range names {
		a[i] = analyze(d[n])
	}
	ix.analyzed[id] = a
	return a
}

// hit renders one matching document.
func (p prepared) hit(m scored, federation map[string]any) map[string]any {
	d := p.ix.docs[m.id]
	h := project(d, p.sq.AttributesToRetrieve)
	if p.sq.ShowRankingScore {
		h["_rankingScore"] = m.score
	}
	if len(p.sq.AttributesToCrop) > 0 {
		length, marker := 10, "…"
		if p.sq.CropLength != nil {
			length = *p.sq.CropLength
		}
		if p.sq.CropMarker != nil {
			marker = *p.sq.CropMarker
		}
		f := project(d, p.sq.AttributesToRetrieve)
		for _, a := range p.sq.AttributesToCrop {
			if s, ok := d[a].(string); ok {
				f[a] = crop(s, p.q, length, marker)
			}
		}
		h["_formatted"] = f
	}
	if federation != nil {
		h["_federation"] = federation
	}
	return h
}

// stringOf renders a scalar as Meilisearch indexes it.
func stringOf(v any) string {
	switch x := v.(type) {
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	}
	return ""
}
