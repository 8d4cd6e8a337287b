package config

import (
	"errors"
	"testing"

	"github.com/sheaf-dev/sheaf/shared/llm"
)

func TestOpenLLM(t *testing.T) {
	chat, rr, err := (&Config{RerankURL: "http://127.0.0.1:1/rerank"}).OpenLLM()
	if chat != nil || rr == nil || err != nil {
		t.Errorf("a reranker without a chat model (the search tools' rerank): %v %v %v", chat, rr, err)
	}
	if chat, rr, err := (&Config{}).OpenLLM(); chat != nil || rr != nil || err != nil {
		t.Errorf("nothing set: %v %v %v", chat, rr, err)
	}
	if _, _, err := (&Config{LLMBaseURL: "http://127.0.0.1:1/v1"}).OpenLLM(); !errors.Is(err, llm.ErrNotConfigured) {
		t.Errorf("no model: %v", err)
	}
	chat, rr, err = (&Config{LLMBaseURL: "http://127.0.0.1:1/v1", LLMModel: "m"}).OpenLLM()
	if err != nil || chat == nil || chat.Model() != "m" || rr != nil {
		t.Errorf("chat only: %v %v %v", chat, rr, err)
	}
	_, rr, err = (&Config{LLMBaseURL: "http://127.0.0.1:1/v1", LLMModel: "m", RerankURL: "http://127.0.0.1:1/rerank"}).OpenLLM()
	if err != nil || rr == nil {
		t.Errorf("with reranker: %v %v", rr, err)
	}
}
