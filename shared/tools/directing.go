package tools

import "github.com/sheaf-dev/sheaf/shared/core"

func agentTools(c *core.Core) []Tool {
	mentions := define(Spec{
		Name:        "agent_mentions",
		Title:       "Agent mentions",
		Description: "Find @handle mentions across the vault (e-mail addresses and code are skipped); pass handle to see one agent's queue. Paginated: {items: [{path, handle, line, context}], total}, sorted by path and line.",
		Hints:       readOnly,
		Access:      reads(),
	}, c.AgentMentions)
	return append([]Tool{mentions}, directiveTools(c)...)
}

func directiveTools(c *core.Core) []Tool {
	pending := define(Spec{
		Name:        "pending_directives",
		Title:       "Pending directives",
		Description: "Unresolved > [!ai] callouts: tasks left in the vault for an agent. Paginated: {items: [{path, line, title, body, done}], total}, sorted by path and line. Do the work, then mark it complete (the marker becomes [!ai-done]).",
		Hints:       readOnly,
		Access:      reads(pathArg{"path", argScope}),
	}, c.PendingDirectives)
	await := define(Spec{
		Name:        "await_directives",
		Title:       "Await directives",
		Description: "Long-poll companion to pending_directives: blocks until the set of pending > [!ai] directives changes (a directive added, completed, removed or edited; other note writes do not wake it), then returns {cursor, timedOut, directives}. Pass the returned cursor back next time; cursor 0 returns the backlog at once. On timeout: {timedOut: true, directives: []}; just call again. timeout_ms is clamped to [1000, 55000] and may be clamped lower by the server (clampedTimeoutMs says so). Several workers: give each a distinct worker id with claim true; each returned directive is then leased to that worker for about 2 minutes and withheld from the others (cooperative, not a security boundary).",
		Hints:       hints{readOnly: true},
		Access:      reads(pathArg{"path", argScope}),
	}, c.AwaitDirectives)
	return []Tool{pending, await}
}
