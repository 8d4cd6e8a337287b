// Command sheaf is the Sheaf CLI: an MCP server over a vault of Markdown
// notes, and the shell tools around it.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/sheaf-dev/sheaf/shared/config"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := &cobra.Command{
		Use:           "sheaf",
		Short:         "An MCP server for Markdown note vaults",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version,
	}
	root.AddCommand(serveCmd(), indexCmd(), searchCmd(), healthCmd(), genCmd())
	if err := root.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "sheaf:", err)
		os.Exit(1)
	}
}

// withConfig registers the shared settings on cmd and returns the config,
// filled from flags and then SHEAF_* variables before cmd runs.
func withConfig(cmd *cobra.Command) *config.Config {
	cfg := &config.Config{}
	cfg.Flags(cmd.Flags())
	cmd.PreRunE = func(cmd *cobra.Command, _ []string) error {
		return config.Env(cmd.Flags())
	}
	return cfg
}

// logger logs to stderr (stdout belongs to the MCP stdio transport).
func logger(level string) *slog.Logger {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		l = slog.LevelInfo
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: l}))
}
