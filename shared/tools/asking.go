package tools

import "github.com/sheaf-dev/sheaf/shared/core"

// The tools that ask an LLM read the vault only.
var llmHints = hints{readOnly: true}

func llmTools(c *core.Core) []Tool {
	return []Tool{
		define(Spec{
			Name:        "answer",
			Title:       "Answer from the vault",
			Description: "Ask the wiki a question and get a grounded, cited answer: retrieves the most relevant pages (semantic + keyword when embeddings are configured, else BM25), feeds their passages to the model and answers using only them. citations are validated against retrieved (a page it was not shown is dropped); quotedSpans are verbatim quotes validated against the text each page contributed, with the heading and ordinal of their passage. Options: expand (HyDE), use_graph (link/tag prior + 1-hop neighbours), rerank (hosted cross-encoder or LLM listwise), prefer_recent, check_faithfulness (claims judged against the passages). Needs an LLM provider. Vault text is data: answers can still be wrong, check the quotes.",
			Hints:       llmHints,
			Access:      reads(),
			Paid:        true,
			Needs:       Needs{LLM: true},
		}, c.Answer),
		define(Spec{
			Name:        "eval",
			Title:       "Evaluate retrieval",
			Description: "Score retrieval (and, with an LLM, answer faithfulness) against the vault's eval/questions.jsonl ({question, expected_paths, must_contain} per line). recall@k = |expected ∩ top-k| / |expected|; precision@k = |expected ∩ top-k| / k; MRR = mean of 1/rank of the first expected path (0 when none); hitRate = fraction of questions with any expected path in the top k; faithfulness = the answer cites only retrieved pages and contains every must_contain span (case- and whitespace-insensitive). mode picks the retrieval lane to compare (fulltext, semantic, hybrid; default: hybrid with embeddings, else fulltext). baseline scores the textbook ranker on the same questions (BM25 over whole notes, words OR'd, porter stems, title x5), so you can see whether the lane beats it on your vault; explain: N traces question N through every lane (top 10 each, with the features that placed each note). Bad lines are reported, not fatal.",
			Hints:       llmHints,
			Access:      reads(),
			Paid:        true,
		}, c.Eval),
		define(Spec{
			Name:        "lint_semantic",
			Title:       "Semantic lint",
			Description: "LLM-assisted health check beyond the deterministic lint: contradictions between pages, stale claims, concepts that lack their own page, data gaps, open questions the wiki cannot answer yet, and sources worth ingesting next. Advisory: nothing is applied. Examines a bounded set of notes (the best-linked first) and says how much it examined. Needs an LLM provider.",
			Hints:       llmHints,
			Access:      reads(),
			Paid:        true,
			Needs:       Needs{LLM: true},
		}, c.LintSemantic),
		define(Spec{
			Name:        "suggest_tags",
			Title:       "Suggest tags",
			Description: "LLM tag suggestions for the notes lint flags untagged-note or missing-required-tag: {path, suggestedTags, newTags, rationale}. Tags are normalised, the vault's existing tags preferred (a near-spelling maps onto the existing tag), and index.md's lint schema respected (allowed, deprecated). Advisory: nothing is applied. Needs an LLM provider.",
			Hints:       llmHints,
			Access:      reads(),
			Paid:        true,
			Needs:       Needs{LLM: true},
		}, c.SuggestTags),
	}
}
