package config

import "github.com/sheaf-dev/sheaf/shared/llm"

// OpenLLM returns the chat model of answer, lint_semantic, suggest_tags,
// expansion and eval's faithfulness, and the hosted reranker of answer's
// rerank. Both are nil, with no error, when no chat endpoint is set
// (--llm-base-url); the reranker is nil when --rerank-url is unset (the
// chat model then reranks). A base URL without a model is an error.
func (c *Config) OpenLLM() (llm.Chat, llm.Reranker, error) {
	if c.LLMBaseURL == "" {
		return nil, nil, nil // every LLM tool reports "not configured"; a lone --rerank-url has nothing to serve
	}
	chat, err := llm.New(llm.Config{BaseURL: c.LLMBaseURL, Model: c.LLMModel, APIKey: c.LLMKey})
	if err != nil {
		return nil, nil, err
	}
	var rr llm.Reranker
	if c.RerankURL != "" {
		rr = llm.NewReranker(c.RerankURL, c.RerankKey)
	}
	return chat, rr, nil
}
