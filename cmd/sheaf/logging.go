package main

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
)

// newLogger is the one logger of a command, on w (stderr: stdout belongs to
// the MCP stdio transport): level debug, info, warn or error; format text
// (the default) or json. It becomes slog's default, so that every part of
// Sheaf, tool errors included, logs through it at its level.
func newLogger(level, format string, w io.Writer) (*slog.Logger, error) {
	var l slog.Level
	switch strings.ToLower(level) {
	case "debug", "info", "warn", "error":
		_ = l.UnmarshalText([]byte(level))
	default:
		return nil, fmt.Errorf("--log-level %q: use debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: l}
	var h slog.Handler
	switch strings.ToLower(format) {
	case "", "text":
		h = slog.NewTextHandler(w, opts)
	case "json":
		h = slog.NewJSONHandler(w, opts)
	default:
		return nil, fmt.Errorf("--log-format %q: use text or json", format)
	}
	log := slog.New(h)
	slog.SetDefault(log)
	return log, nil
}
