package core

import (
	"context"
	"log/slog"

	"github.com/sheaf-dev/sheaf/shared/audit"
	"github.com/sheaf-dev/sheaf/shared/auth"
)

// The read audit (docs/audit.md): every document read_note, search,
// semantic_search and search_and_read return is recorded in the vault's
// audit log (who asked, as which agent, through which tool, which path,
// when), and their answers carry each path's retrieval_count. A vault
// whose Audit is nil (--no-audit) records nothing and counts nothing.

// AgentArg is the optional agent_id of the read tools.
type AgentArg struct {
	AgentID string `json:"agent_id,omitempty" jsonschema:"Who is reading, as recorded in the vault's read audit (e.g. \"claude-code\"); default \"unknown\"." schema:"minLength=1,maxLength=128"`
}

// audited records that tool returned paths to the caller in ctx and
// returns their retrieval counts, this read included; nil when the audit is
// off or the counts cannot be read (the answer goes out without them).
func (s *Core) audited(ctx context.Context, v *Vault, tool string, a AgentArg, paths []string) map[string]int64 {
	if v.Audit == nil || len(paths) == 0 {
		return nil
	}
	caller := auth.IdentityFrom(ctx).Subject
	if caller == "" {
		caller = "local"
	}
	now := s.now().UTC()
	recs := make([]audit.Record, len(paths))
	for i, p := range paths {
		recs[i] = audit.Record{Time: now, Caller: caller, AgentID: a.AgentID, Tool: tool, Path: p}
	}
	v.Audit.Record(recs...)
	counts, err := v.Audit.Counts(ctx, paths)
	if err != nil {
		slog.Warn("read audit: the retrieval counts cannot be read", "vault", v.ID, "err", err)
		return nil
	}
	return counts
}

// countOf is path's count in counts, nil when there are none.
func countOf(counts map[string]int64, path string) *int64 {
	if counts == nil {
		return nil
	}
	n := counts[path]
	return &n
}

// auditHits records search hits and sets their retrieval counts.
func (s *Core) auditHits(ctx context.Context, v *Vault, tool string, a AgentArg, hits []SearchHit) {
	paths := make([]string, len(hits))
	for i, h := range hits {
		paths[i] = h.Path
	}
	counts := s.audited(ctx, v, tool, a, paths)
	for i := range hits {
		hits[i].RetrievalCount = countOf(counts, hits[i].Path)
	}
}
