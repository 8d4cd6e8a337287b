package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/sheaf-dev/sheaf/shared/internal/provider"
)

// maxRerankResponse bounds the rerank response body read.
const maxRerankResponse = 8 << 20

// reranker is a hosted cross-encoder with the Cohere / Jina / Voyage /
// text-embeddings-inference rerank API:
//
//	POST <url>
//	Authorization: Bearer <key>            (when a key is set)
//	{"query": "...", "documents": ["...", ...], "top_n": N, "model": "..."}
//
//	200 {"results": [{"index": 0, "relevance_score": 0.93}, ...]}
//
// "model" is sent only when the URL carries a model query parameter
// (https://api.jina.ai/v1/rerank?model=jina-reranker-v2-base-multilingual),
// which is removed from the URL itself. "score" is accepted for
// "relevance_score" (text-embeddings-inference answers a bare array of
// {index, score}, also accepted).
type reranker struct {
	url, key, model string
	hc              *http.Client
	timeout         time.Duration
	r               provider.Retrier
}

var _ Reranker = (*reranker)(nil)

// NewReranker returns a Reranker posting to rawURL (see reranker for the
// wire format). A malformed URL fails on the first Rerank call.
func NewReranker(rawURL, key string) Reranker {
	rr := &reranker{url: strings.TrimSpace(rawURL), key: key, hc: &http.Client{}, timeout: 60 * time.Second, r: newRetrier(0)}
	if u, err := url.Parse(rr.url); err == nil {
		q := u.Query()
		if m := q.Get("model"); m != "" {
			rr.model = m
			q.Del("model")
			u.RawQuery = q.Encode()
			rr.url = u.String()
		}
	}
	return rr
}

type rerankRequest struct {
	Query     string   `json:"query"`
	Documents []string `json:"documents"`
	TopN      int      `json:"top_n"`
	Model     string   `json:"model,omitempty"`
}

type rerankResult struct {
	Index          *int     `json:"index"`
	RelevanceScore *float64 `json:"relevance_score"`
	Score          *float64 `json:"score"`
}

// Rerank scores every document. A document the provider left out of its
// results scores -Inf (last); an index out of range or repeated, or a
// non-finite score, makes the response unusable.
func (rr *reranker) Rerank(ctx context.Context, query string, docs []string) ([]float64, error) {
	if len(docs) == 0 {
		return nil, nil
	}
	u, err := url.Parse(rr.url)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("llm: rerank URL %q is not an http(s) URL", rr.url)
	}
	body, err := json.Marshal(rerankRequest{Query: valid(query), Documents: validAll(docs), TopN: len(docs), Model: rr.model})
	if err != nil {
		return nil, err
	}
	var scores []float64
	err = rr.r.Do(ctx, func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, rr.timeout)
		defer cancel()
		res, err := rr.send(ctx, body)
		if err != nil {
			return err
		}
		scores, err = rr.scores(res, len(docs))
		return err
	})
	return scores, err
}

// send makes one attempt and returns the results array.
func (rr *reranker) send(ctx context.Context, body []byte) ([]rerankResult, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, rr.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if rr.key != "" {
		req.Header.Set("Authorization", "Bearer "+rr.key)
	}
	resp, err := rr.hc.Do(req)
	if err != nil {
		return nil, &ProviderError{Err: err}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxRerankResponse))
	if err != nil {
		return nil, &ProviderError{Err: err}
	}
	if resp.StatusCode/100 != 2 {
		return nil, &ProviderError{Status: resp.StatusCode, RetryAfter: provider.RetryAfter(resp.Header, time.Now()),
			Err: errors.New(provider.Clip(strings.TrimSpace(string(data)), 300))}
	}
	var wrapped struct {
		Results []rerankResult `json:"results"`
	}
	if err := json.Unmarshal(data, &wrapped); err == nil && wrapped.Results != nil {
		return wrapped.Results, nil
	}
	var bare []rerankResult
	if err := json.Unmarshal(data, &bare); err == nil {
		return bare, nil
	}
	return nil, &ProviderError{Status: resp.StatusCode, Err: fmt.Errorf("the rerank response is not {\"results\": [...]}: %s", provider.Clip(string(data), 200))}
}

// scores turns results into one score per document.
func (rr *reranker) scores(res []rerankResult, n int) ([]float64, error) {
	out := make([]float64, n)
	seen := make([]bool, n)
	for i := range out {
		out[i] = math.Inf(-1)
	}
	for _, r := range res {
		s := r.RelevanceScore
		if s == nil {
			s = r.Score
		}
		switch {
		case r.Index == nil || s == nil:
			return nil, &ProviderError{Status: 200, Err: errors.New("a rerank result lacks index or relevance_score")}
		case *r.Index < 0 || *r.Index >= n || seen[*r.Index]:
			return nil, &ProviderError{Status: 200, Err: fmt.Errorf("rerank index %d is out of range or repeated", *r.Index)}
		case math.IsNaN(*s) || math.IsInf(*s, 0):
			return nil, &ProviderError{Status: 200, Err: errors.New("a rerank score is not finite")}
		}
		seen[*r.Index] = true
		out[*r.Index] = *s
	}
	return out, nil
}

func valid(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }

func validAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = valid(s)
	}
	return out
}
