package tools

import "github.com/sheaf-dev/sheaf/shared/core"

func maintenanceTools(c *core.Core) []Tool {
	lint := define(Spec{
		Name:        "lint",
		Title:       "Lint the vault",
		Description: "Deterministic, offline vault hygiene: unresolved-link, ambiguous-link, orphan-note (no links in or out), no-inbound (links out, nothing links in; index, AGENTS.md and log.md exempt), tag-typo, orphan-tag, untagged-note, unreadable-frontmatter (YAML that cannot be read: its tags, aliases and title are ignored), and when index.md's frontmatter declares `lint: {tags: {allowed, required, deprecated}}` also unknown-tag, missing-required-tag, deprecated-tag (lint-config reports a malformed block). Returns paginated {rule, severity, path, line, message, suggestion} findings sorted by rule, path, line, plus counts per rule.",
		Hints:       readOnly,
		Access:      reads(),
	}, c.Lint)
	health := define(Spec{
		Name:        "wiki_health",
		Title:       "Wiki health score",
		Description: "One 0-100 score to track whether the wiki is getting healthier: round(100 * mean(linkHealth, lintCleanliness, tagCoverage)) with linkHealth = 1 - orphans/notes, lintCleanliness = 1 - lint warnings/notes (clamped to 0), tagCoverage = fraction of notes with a tag. Returns the score with its parts.",
		Hints:       readOnly,
		Access:      reads(),
	}, c.WikiHealth)
	recent := define(Spec{
		Name:        "recent_activity",
		Title:       "Recent activity",
		Description: "The log.md ledger as data, newest first ({date, op, title, line}; lines `- YYYY-MM-DD op: title`, `- [YYYY-MM-DD] op: title` or `## [YYYY-MM-DD] op | title`), filtered by `since` and `op`, plus uncompiledSources: notes under the write-once source folders that no page links to or derives from yet. No log.md gives no entries.",
		Hints:       readOnly,
		Access:      reads(),
	}, c.RecentActivity)
	return []Tool{lint, health, recent}
}
