package meilifake

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// do sends a JSON request and decodes the JSON answer.
func do(t *testing.T, s *Server, method, path, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, s.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if len(bytes.TrimSpace(raw)) > 0 {
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatalf("%s %s: %v in %s", method, path, err, raw)
		}
	}
	return resp.StatusCode, out
}

// waitTask waits for a task and returns its final state.
func waitTask(t *testing.T, s *Server, resp map[string]any) map[string]any {
	t.Helper()
	uid := int(resp["taskUid"].(float64))
	for range 1000 {
		_, task := do(t, s, "GET", fmt.Sprintf("/tasks/%d", uid), "")
		if st := task["status"]; st == "succeeded" || st == "failed" {
			return task
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("task %d did not finish", uid)
	return nil
}

// setup creates index "i" with a few documents.
func setup(t *testing.T) *Server {
	s := New(t)
	_, r := do(t, s, "PATCH", "/indexes/i/settings", `{"searchableAttributes":["title","body"],"filterableAttributes":["tag","n"],
		"typoTolerance":{"enabled":false}}`)
	if task := waitTask(t, s, r); task["status"] != "succeeded" {
		t.Fatalf("settings: %v", task)
	}
	_, r = do(t, s, "POST", "/indexes/i/documents?primaryKey=id", `[
		{"id":"a","title":"Green tomatoes","body":"pick them before the frost","tag":"Garden","n":1},
		{"id":"b","title":"Soup","body":"tomatoes turn green in the greenhouse","tag":["x","garden"],"n":2},
		{"id":"c","title":"Basil","body":"one two three four five six seven eight nine ten eleven twelve","tag":"herb","n":3}]`)
	if task := waitTask(t, s, r); task["status"] != "succeeded" {
		t.Fatalf("documents: %v", task)
	}
	return s
}

// ids runs one non-federated query and returns the hit ids.
func ids(t *testing.T, s *Server, query string) []string {
	t.Helper()
	code, r := do(t, s, "POST", "/multi-search", `{"queries":[`+query+`]}`)
	if code != 200 {
		t.Fatalf("search %s: %d %v", query, code, r)
	}
	var out []string
	for _, h := range r["results"].([]any)[0].(map[string]any)["hits"].([]any) {
		out = append(out, h.(map[string]any)["id"].(string))
	}
	slices.Sort(out)
	return out
}

func TestMatching(t *testing.T) {
	s := setup(t)
	for _, tc := range []struct {
		q, strategy string
		want        []string
	}{
		{"tomat", "all", []string{"a", "b"}}, // the last word is a prefix
		{"tomat green", "all", nil},          // an earlier word is not
		{"tomat ", "all", nil},               // nor a last word followed by a space
		{"green tomatoes", "all", []string{"a", "b"}},
		{`"green tomatoes"`, "all", []string{"a"}}, // phrase
		{`"green tomat"`, "all", nil},              // a phrase is not a prefix
		{"tomatoes -frost", "all", []string{"b"}},
		{`tomatoes -"turn green"`, "all", []string{"a"}},
		{"tomatoes -gree", "all", []string{"a", "b"}}, // exclusions are exact
		{"TOMATOES", "all", []string{"a", "b"}},
		{"soup frost", "last", []string{"b"}}, // drops terms from the end
		{"frost soup", "last", []string{"a"}},
		{"one two three four five six seven eight nine ten eleven", "all", []string{"c"}}, // 10 terms count
		{"", "all", []string{"a", "b", "c"}},
	} {
		q, _ := json.Marshal(tc.q)
		got := ids(t, s, fmt.Sprintf(`{"indexUid":"i","q":%s,"matchingStrategy":%q}`, q, tc.strategy))
		if !slices.Equal(got, tc.want) {
			t.Errorf("q %q (%s): got %v, want %v", tc.q, tc.strategy, got, tc.want)
		}
	}
}

func TestFilters(t *testing.T) {
	s := setup(t)
	for _, tc := range []struct {
		filter string
		want   []string
	}{
		{`tag = "garden"`, []string{"a", "b"}}, // case-insensitive, arrays
		{`tag = garden AND n >= 2`, []string{"b"}},
		{`(tag = "herb" OR n = 1) AND NOT_A_FIELD_IS_FINE_IF_UNUSED = 1 OR n < 0`, nil},
		{`n IN [1, 3]`, []string{"a", "c"}},
		{`tag IN ["x"] OR n > 2`, []string{"b", "c"}},
		{`tag != "herb"`, []string{"a", "b"}},
	} {
		f, _ := json.Marshal(tc.filter)
		code, r := do(t, s, "POST", "/multi-search", `{"queries":[{"indexUid":"i","q":"","filter":`+string(f)+`}]}`)
		if strings.Contains(tc.filter, "NOT_A_FIELD") {
			if code != 400 || r["code"] != "invalid_search_filter" {
				t.Errorf("filter on an unfilterable field: %d %v", code, r)
			}
			continue
		}
		if got := ids(t, s, `{"indexUid":"i","q":"","filter":`+string(f)+`}`); !slices.Equal(got, tc.want) {
			t.Errorf("filter %s: got %v, want %v", tc.filter, got, tc.want)
		}
	}
	for _, bad := range []string{`tag = `, `tag = "open`, `tag ~ 1`, `(tag = 1`, `tag IN [1`, `tag = "\q"`, `AND = 1`, `tag = 1 extra`} {
		f, _ := json.Marshal(bad)
		if code, r := do(t, s, "POST", "/multi-search", `{"queries":[{"indexUid":"i","q":"","filter":`+string(f)+`}]}`); code != 400 {
			t.Errorf("filter %s: %d %v, want 400", bad, code, r)
		}
	}
}

func TestFilterValues(t *testing.T) {
	for expr, want := range map[string][]string{
		`a = "x\"y"`:               {`x"y`},
		`a = "x\\y"`:               {`x\y`},
		`a = "\\\""`:               {`\"`},
		`a = "\u{1F355}" OR b = c`: {"🍕", "c"},
		`a IN ["p", 'q\'r']`:       {"p", "q'r"},
	} {
		got, err := FilterValues(expr)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("FilterValues(%s) = %q, %v; want %q", expr, got, err, want)
		}
	}
}

func TestFederation(t *testing.T) {
	s := setup(t)
	code, r := do(t, s, "POST", "/multi-search", `{"federation":{"limit":10},"queries":[
		{"indexUid":"i","q":"tomatoes","matchingStrategy":"all","showRankingScore":true},
		{"indexUid":"i","q":"green","matchingStrategy":"all","showRankingScore":true},
		{"indexUid":"i","q":"basil","matchingStrategy":"all","showRankingScore":true}]}`)
	if code != 200 {
		t.Fatalf("%d %v", code, r)
	}
	hits := r["hits"].([]any)
	if len(hits) != 3 || r["estimatedTotalHits"] != 3.0 {
		t.Fatalf("want 3 distinct hits, got %v", r)
	}
	prev := 2.0
	for _, h := range hits {
		fed := h.(map[string]any)["_federation"].(map[string]any)
		score := fed["weightedRankingScore"].(float64)
		if score > prev {
			t.Errorf("hits not best first: %v", hits)
		}
		prev = score
	}
	code, r = do(t, s, "POST", "/multi-search", `{"federation":{},"queries":[{"indexUid":"i","q":"x","limit":3}]}`)
	if code != 400 || r["code"] != "invalid_multi_search_query_pagination" {
		t.Errorf("per-query limit in a federation: %d %v", code, r)
	}
}

func TestCrop(t *testing.T) {
	s := setup(t)
	code, r := do(t, s, "POST", "/multi-search", `{"queries":[{"indexUid":"i","q":"nine","attributesToRetrieve":["title"],
		"attributesToCrop":["body"],"cropLength":3,"cropMarker":"…"}]}`)
	if code != 200 {
		t.Fatalf("%d %v", code, r)
	}
	h := r["results"].([]any)[0].(map[string]any)["hits"].([]any)[0].(map[string]any)
	if _, ok := h["body"]; ok {
		t.Errorf("body retrieved although not asked for: %v", h)
	}
	f := h["_formatted"].(map[string]any)
	if f["body"] != "…eight nine ten…" || f["title"] != "Basil" {
		t.Errorf("_formatted = %v", f)
	}
}

func TestRejectsWhatItDoesNotModel(t *testing.T) {
	s := setup(t)
	for _, tc := range []struct{ method, path, body string }{
		{"GET", "/version", ""},
		{"DELETE", "/indexes/i", ""},
		{"POST", "/indexes/i/search", `{"q":"x"}`},
		{"PATCH", "/indexes/i/settings", `{"rankingRules":["words"]}`},
		{"PATCH", "/indexes/i/settings", `{"typoTolerance":{"enabled":true}}`},
		{"POST", "/multi-search", `{"queries":[{"indexUid":"i","q":"x","sort":["n:asc"]}]}`},
		{"POST", "/multi-search", `{"queries":[{"indexUid":"i","q":"x","matchingStrategy":"frequency"}]}`},
		{"POST", "/multi-search", `{"queries":[{"indexUid":"i","q":"x","hybrid":{"embedder":"e"}}]}`},
		{"POST", "/multi-search", `{"queries":[{"indexUid":"nope","q":"x"}]}`},
		{"POST", "/indexes/i/documents?csvDelimiter=%3B", `[]`},
		{"POST", "/indexes/i/documents/delete", `{"filter":"tag = ("}`},
		{"POST", "/indexes/i/documents/fetch", `{"ids":["a"]}`},
	} {
		if code, r := do(t, s, tc.method, tc.path, tc.body); code < 400 || r["code"] == nil {
			t.Errorf("%s %s %s: %d %v, want an error", tc.method, tc.path, tc.body, code, r)
		}
	}
	if n := len(s.Calls()); n < 12 {
		t.Errorf("calls logged: %d", n)
	}
}

func TestDocumentsAndTasks(t *testing.T) {
	s := setup(t)
	_, r := do(t, s, "POST", "/indexes/i/documents", `[{"id":"bad id!"}]`)
	task := waitTask(t, s, r)
	if task["status"] != "failed" || task["error"].(map[string]any)["code"] != "invalid_document_id" {
		t.Errorf("bad id: %v", task)
	}
	_, r = do(t, s, "POST", "/indexes/i/documents", `[{"id":"`+strings.Repeat("x", 512)+`"}]`)
	if task := waitTask(t, s, r); task["status"] != "failed" {
		t.Errorf("512-byte id: %v", task)
	}
	s.FailNextTask("internal", "boom")
	_, r = do(t, s, "POST", "/indexes/i/documents/delete", `{"filter":"n >= 1"}`)
	if task := waitTask(t, s, r); task["error"].(map[string]any)["message"] != "boom" || s.DocumentCount("i") != 3 {
		t.Errorf("injected failure: %v, %d documents", task, s.DocumentCount("i"))
	}
	_, r = do(t, s, "POST", "/indexes/i/documents/delete", `{"filter":"n >= 2"}`)
	waitTask(t, s, r)
	code, r := do(t, s, "POST", "/indexes/i/documents/fetch", `{"fields":["id"],"filter":"n < 100","limit":10}`)
	if code != 200 || r["total"] != 1.0 || len(r["results"].([]any)) != 1 {
		t.Errorf("fetch after delete: %d %v", code, r)
	}
	if d, ok := s.Document("i", "a"); !ok || d["title"] != "Green tomatoes" {
		t.Errorf("Document(a) = %v, %v", d, ok)
	}
}

func TestAPIKey(t *testing.T) {
	s := New(t, WithAPIKey("k"))
	if code, r := do(t, s, "GET", "/tasks/0", ""); code != 401 || r["code"] != "missing_authorization_header" {
		t.Errorf("no key: %d %v", code, r)
	}
}

func FuzzParseFilter(f *testing.F) {
	for _, s := range []string{`a = "x"`, `a IN [1, "2"]`, `(a = 1 OR b != 'c') AND d >= 2`, `a = "\u{41}"`, `"`, `a = "\`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if flt, err := parseFilter(s); err == nil {
			flt.eval(map[string]any{"a": "x", "b": []any{1.0, "y"}})
		}
	})
}

func FuzzParseQuery(f *testing.F) {
	for _, s := range []string{`a "b c" -d -"e f" g`, `"`, `-`, `东京 tower`, "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q := parseQuery(s)
		if len(q.pos) > maxQueryTerms {
			t.Fatalf("%d positive terms", len(q.pos))
		}
		for _, tm := range append(q.pos, q.neg...) {
			if len(tm.words) == 0 {
				t.Fatalf("%q: empty term", s)
			}
		}
		q.score([]attrWords{analyze(s)}, "last")
		crop(s, q, 3, "…")
	})
}
