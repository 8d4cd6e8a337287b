// Command sheaf is the Sheaf CLI: an MCP server over a vault of Markdown
// notes, and the shell tools around it.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/sheaf-dev/sheaf/shared/config"
	"github.com/sheaf-dev/sheaf/shared/config/local"
	"github.com/sheaf-dev/sheaf/shared/core"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	hangAfterAppend(os.Getenv("SHEAF_TEST_HANG_AFTER_APPEND"))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := rootFor(os.Args[1:])
	if err := root.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "sheaf:", err)
		os.Exit(1)
	}
}

// hangAfterAppend, for the kill -9 test only (TestKillBetweenAppendAndRecord):
// when marker is set, an idempotent append that has written its note
// creates the file marker and hangs there, before its record, so that the
// test kills the process at exactly that point.
func hangAfterAppend(marker string) {
	if marker == "" {
		return
	}
	core.SetAppendLandedHook(func() {
		_ = os.WriteFile(marker, []byte("landed\n"), 0o600)
		select {}
	})
}

// rootFor is the command tree that runs args: for `sheaf serve`, the root
// with serve alone, since every subcommand declares the whole
// configuration's flags (about 1 ms of CPU per command tree, 3 ms in a
// cold process) and a client spawning a server waits for its first
// answer; for anything else, rootCmd.
func rootFor(args []string) *cobra.Command {
	if len(args) > 0 && args[0] == "serve" {
		root := newRoot()
		root.AddCommand(serveCmd())
		return root
	}
	return rootCmd()
}

// newRoot is the sheaf command without its subcommands.
func newRoot() *cobra.Command {
	return &cobra.Command{
		Use:           "sheaf",
		Short:         "An MCP server for Markdown note vaults",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version,
	}
}

// rootCmd is the sheaf command and every subcommand.
func rootCmd() *cobra.Command {
	root := newRoot()
	root.AddCommand(serveCmd(), indexCmd(), searchCmd(), healthCmd(), genCmd())
	root.AddCommand(reconcileCmd())
	root.AddCommand(relatedCmd())
	root.AddCommand(answerCmd())
	root.AddCommand(evalCmd())
	root.AddCommand(embedCmd())
	root.AddCommand(writeCmd(), mvCmd(), rmCmd(), restoreCmd())
	root.AddCommand(logCmd(), diffCmd(), undoCmd())
	root.AddCommand(keysCmd())
	root.AddCommand(stateCmd())
	root.AddCommand(syncCmd())
	root.AddCommand(docsCmd(), probeCmd())
	return root
}

// indexed opens the vault, brings its index up to date and returns the tool
// server over it, for the commands that answer one question from the shell.
// The caller closes the returned vault.
func indexed(cmd *cobra.Command, cfg *config.Config) (*local.Vault, *core.Core, error) {
	l, err := local.Open(cmd.Context(), cfg, logger(cfg.LogLevel))
	if err != nil {
		return nil, nil, err
	}
	if _, err := l.Indexer.Sync(cmd.Context(), nil); err != nil {
		l.Close()
		return nil, nil, err
	}
	s, err := core.New(l.Vault)
	if err != nil {
		l.Close()
		return nil, nil, err
	}
	return l, s, nil
}

// printJSON writes v indented to stdout.
func printJSON(v any) error {
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// logFormat is the --log-format of the running command, set before it runs.
var logFormat = "text"

// logger logs to stderr (stdout belongs to the MCP stdio transport) at
// level, in the command's --log-format; it becomes slog's default.
func logger(level string) *slog.Logger {
	l, err := newLogger(level, logFormat, os.Stderr)
	if err != nil { // withConfig checked both before the command ran
		return slog.Default()
	}
	return l
}
