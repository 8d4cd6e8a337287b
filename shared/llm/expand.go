package llm

import (
	"context"
	"strings"

	"github.com/sheaf-dev/sheaf/shared/internal/provider"
)

// maxExpansion bounds the hypothetical passage Expand appends, in bytes.
const maxExpansion = 1200

const expandPrompt = `You help a search engine find notes in a personal knowledge base.
Write one short passage (2 to 4 sentences, under 80 words) that would plausibly appear in a note
answering the user's query. Use the vocabulary such a note would use: names, terms, synonyms.
Do not say that you are guessing, do not add a preamble, do not use Markdown. Reply with the passage only.
Write in the language of the query.`

// Expand is HyDE query expansion: it asks c for a short hypothetical
// passage answering query and returns query + "\n" + passage, for the
// embedding and BM25 lanes (the query itself stays first, so its words
// keep their weight). The passage is cut to about 1,200 bytes. An error
// from the provider is returned as is; callers may fall back to query.
func Expand(ctx context.Context, c Chat, query string) (string, error) {
	if c == nil {
		return "", ErrNotConfigured
	}
	reply, err := c.Complete(ctx, Request{
		Messages: []Message{
			{Role: "system", Content: expandPrompt},
			{Role: "user", Content: query},
		},
		MaxTokens:   200,
		Temperature: 0,
	})
	if err != nil {
		return "", err
	}
	passage := strings.Join(strings.Fields(reply), " ")
	if len(passage) > maxExpansion {
		passage = strings.TrimSuffix(provider.Clip(passage, maxExpansion), "…")
	}
	if passage == "" {
		return query, nil
	}
	return query + "\n" + passage, nil
}
