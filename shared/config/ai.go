package config

import "github.com/sheaf-dev/sheaf/shared/llm"

// OpenLLM returns the chat model of answer, lint_semantic, suggest_tags,
// expansion and eval's faithfulness, and the hosted reranker of the
// rerank option (answer, search_and_read, semantic_search, search). The
// chat model is nil, with no error, when no chat endpoint is set
// (--llm-base-url): every LLM tool then reports "not configured". The
// reranker is nil when --rerank-url is unset (the chat model then reranks);
// alone, it still serves the search tools' rerank. A base URL without a
// model is an error.
func (c *Config) OpenLLM() (llm.Chat, llm.Reranker, error) {
	var rr llm.Reranker
	if c.RerankURL != "" {
		rr = llm.NewReranker(c.RerankURL, c.RerankKey)
	}
	if c.LLMBaseURL == "" {
		return nil, rr, nil
	}
	chat, err := llm.New(llm.Config{BaseURL: c.LLMBaseURL, Model: c.LLMModel, APIKey: c.LLMKey})
	if err != nil {
		return nil, nil, err
	}
	return chat, rr, nil
}
