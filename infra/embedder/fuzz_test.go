package embedder_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/sheaf-dev/sheaf/infra/embedder"
)

var fuzzClient = &http.Client{Timeout: 2 * time.Minute}

// FuzzEmbeddingsBody posts arbitrary bodies: the server answers 200 with one
// good vector per input, or an OpenAI error, and never falls over.
func FuzzEmbeddingsBody(f *testing.F) {
	for _, seed := range []string{
		`{"input": "hello", "model": "m"}`,
		`{"input": ["a", "b"], "encoding_format": "base64"}`,
		`{"input": ["\u0000", "\ud800", "🍅"], "dimensions": 512}`,
		`{"input": [[1, 2]]}`,
		`{"input": "ﷺﷺﷺﷺ"}`,
		"{\"input\": \"\xff\xfe\"}",
		`{"input": {"a": 1}}`,
		`{"__proto__": {"input": "x"}}`,
		`[]`, `null`, `"x"`, ``, `{`,
	} {
		f.Add([]byte(seed))
	}
	base := embedder.Start(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		resp, err := fuzzClient.Post(base+"/v1/embeddings", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		var out map[string]any
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatalf("status %d, answer is not JSON: %.200q", resp.StatusCode, raw)
		}
		switch resp.StatusCode {
		case http.StatusOK:
			var r embeddingsResponse
			if err := json.Unmarshal(raw, &r); err != nil {
				t.Fatal(err)
			}
			if len(r.Data) == 0 || r.Model != embedder.Model {
				t.Fatalf("200 with %d vectors from model %q", len(r.Data), r.Model)
			}
			for i, d := range r.Data {
				if d.Index != i {
					t.Fatalf("data[%d].index = %d", i, d.Index)
				}
				var v []float32
				if err := json.Unmarshal(d.Embedding, &v); err != nil {
					var s string
					if err := json.Unmarshal(d.Embedding, &s); err != nil {
						t.Fatalf("data[%d].embedding: %.80s", i, d.Embedding)
					}
					if v, err = decodeBase64(s); err != nil {
						t.Fatal(err)
					}
				}
				checkVector(t, "fuzzed vector", v)
			}
		case http.StatusBadRequest:
			checkError(t, out, "")
		default:
			t.Fatalf("status %d: %.200s", resp.StatusCode, raw)
		}
	})
}

// FuzzEmbedText embeds one arbitrary string: a good vector for any non-empty
// text, a 400 for the empty one.
func FuzzEmbedText(f *testing.F) {
	for _, seed := range []string{"hello", " ", "東京", "e\u0301", "\x00", "ﷺ", "🍅🌱", "\u202eabc"} {
		f.Add(seed)
	}
	base := embedder.Start(f)
	f.Fuzz(func(t *testing.T, text string) {
		body := mustJSON(t, map[string]any{"input": []string{text}})
		status, out := post(t, base, "/v1/embeddings", "", body)
		if text == "" {
			if status != http.StatusBadRequest {
				t.Fatalf("empty text: status %d, want 400", status)
			}
			checkError(t, out, "input")
			return
		}
		if status != http.StatusOK {
			t.Fatalf("status %d: %v", status, out)
		}
		var r embeddingsResponse
		if err := json.Unmarshal(mustJSON(t, out), &r); err != nil {
			t.Fatal(err)
		}
		var v []float32
		if len(r.Data) != 1 || json.Unmarshal(r.Data[0].Embedding, &v) != nil {
			t.Fatalf("want one float vector: %.200v", out)
		}
		checkVector(t, "fuzzed vector", v)
		if r.Usage.PromptTokens < 1 {
			t.Errorf("usage %+v", r.Usage)
		}
	})
}
