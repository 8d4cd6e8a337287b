package main

import (
	"fmt"
	"slices"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sheaf-dev/sheaf/shared/config"
)

// flagGroups sorts the shared settings (config.Config.Flags) into groups, so
// that each command takes, and its help shows, only the flags it uses. A
// setting in no group fails TestEveryFlagHasAGroup.
var flagGroups = map[string][]string{
	"vault":   {"vault", "vault-id", "state", "log-level", "log-format", "max-note-bytes"},
	"backend": {"search", "search-key", "vectors", "vectors-key"},
	"embed":   {"embed-base-url", "embed-model", "embed-key", "embed-dimensions", "embed-query-prefix", "embed-document-prefix"},
	"llm":     {"llm-base-url", "llm-model", "llm-key", "rerank-url", "rerank-key"},
	"writes":  {"immutable-paths", "ledger", "history"},
	// A folder history's retention, applied by the long-lived server.
	"retention": {"history-days", "history-keep"},
	"ingest":    {"ingest-allow"},
	"audit":     {"no-audit"},
	"server": {"http", "token", "keys", "oauth-issuer", "oauth-audience", "oauth-jwks-url", "oauth-scope-prefix",
		"oauth-builtin", "oauth-client-ids", "oauth-private-client-hosts", "oauth-token-audiences",
		"allowed-origins", "profile", "max-request-bytes", "max-response-bytes", "max-attachment-bytes", "index-wait", "no-watch", "cursor-key"},
}

// commandGroups says which groups each command takes. A command missing
// here (one added without a line) takes every flag.
var commandGroups = map[string][]string{
	"serve":     {"vault", "backend", "embed", "llm", "writes", "retention", "ingest", "audit", "server"},
	"index":     {"vault"},
	"search":    {"vault"},
	"health":    {"vault"},
	"reconcile": {"vault", "backend", "embed"},
	"related":   {"vault", "backend", "embed"},
	"embed":     {"vault", "backend", "embed"},
	"answer":    {"vault", "backend", "embed", "llm"},
	"eval":      {"vault", "backend", "embed", "llm"},
	"write":     {"vault", "backend", "writes"},
	"mv":        {"vault", "backend", "writes"},
	"rm":        {"vault", "backend", "writes"},
	"restore":   {"vault", "backend", "writes"},
	"log":       {"vault", "backend", "writes"},
	"diff":      {"vault", "backend", "writes"},
	"undo":      {"vault", "backend", "writes"},
	"migrate":   {"vault"},
	"where":     {"vault"},
}

// quietCommands answer one request from the shell: they log warnings and
// errors only, unless --log-level says otherwise.
var quietCommands = []string{"search", "health", "related", "embed", "answer", "eval", "write", "mv", "rm", "restore", "log", "diff", "undo", "migrate", "where"}

// withConfig registers the settings cmd uses on it and returns the config,
// filled from flags and then SHEAF_* variables before cmd runs; settings a
// command does not take keep their defaults. It checks --log-level and
// --log-format before the command runs.
func withConfig(cmd *cobra.Command) *config.Config {
	cfg := &config.Config{}
	all := pflag.NewFlagSet(cmd.Name(), pflag.ContinueOnError)
	config.Flags(cfg, all)
	if slices.Contains(quietCommands, cmd.Name()) {
		cfg.LogLevel = "warn"
		all.Lookup("log-level").DefValue = "warn"
	}
	groups, known := commandGroups[cmd.Name()]
	all.SortFlags = false // VisitAll in declaration order: cmd.Flags() sorts for help
	all.VisitAll(func(f *pflag.Flag) {
		if !known || slices.ContainsFunc(groups, func(g string) bool { return slices.Contains(flagGroups[g], f.Name) }) {
			cmd.Flags().AddFlag(f)
		}
	})
	// A command not given the retention flags records versions and
	// prunes none: it cannot know the policy the server was given.
	cfg.HistoryNoPrune = known && !slices.Contains(groups, "retention")
	cmd.PreRunE = func(cmd *cobra.Command, _ []string) error {
		if err := config.Env(cmd.Flags()); err != nil {
			return err
		}
		if _, err := newLogger(cfg.LogLevel, cfg.LogFormat, cmd.ErrOrStderr()); err != nil {
			return err
		}
		logFormat = cfg.LogFormat
		return nil
	}
	return cfg
}

// vaultFirst takes the vault from the first argument, the form from before
// --vault was the one way to name it, and says so on stderr.
func vaultFirst(cmd *cobra.Command, cfg *config.Config, args []string) []string {
	fmt.Fprintf(cmd.ErrOrStderr(), "sheaf: naming the vault as the first argument is deprecated: use --vault %q (or SHEAF_VAULT)\n", args[0])
	cfg.Vault = args[0]
	return args[1:]
}
