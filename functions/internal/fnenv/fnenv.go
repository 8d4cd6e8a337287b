// Package fnenv reads a Lambda function's configuration: the SHEAF_*
// variables that the CLI's flags also read (SHEAF_VAULT, SHEAF_SEARCH,
// SHEAF_TOKEN, ...), and a JSON logger for CloudWatch.
package fnenv

import (
	"context"
	"log/slog"
	"os"
	"runtime/debug"
	"strconv"

	"github.com/spf13/pflag"

	"github.com/sheaf-dev/sheaf/shared/config"
)

// Config returns the configuration the SHEAF_* variables give, with the
// flags' defaults for the rest.
func Config() (*config.Config, error) {
	c := &config.Config{}
	fs := pflag.NewFlagSet("lambda", pflag.ContinueOnError)
	config.Flags(c, fs)
	if err := fs.Parse(nil); err != nil {
		return nil, err
	}
	if err := config.Env(fs); err != nil {
		return nil, err
	}
	return c, nil
}

// Logger logs JSON lines to stderr at level ("debug", "info", "warn",
// "error"; anything else is info).
func Logger(level string) *slog.Logger {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		l = slog.LevelInfo
	}
	return slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: l}))
}

// MemoryLimit is the Go heap's soft limit for a function of memMB
// megabytes: 85%, the rest for the runtime's own and the binary. Without
// one the heap may grow to twice what is live before a collection (a
// 100k-note catalog holds about 550 MB), past the function's memory.
func MemoryLimit(memMB int) int64 { return int64(memMB) << 20 * 85 / 100 }

// setMemoryLimit applies MemoryLimit of the function's memory
// (AWS_LAMBDA_FUNCTION_MEMORY_SIZE), unless GOMEMLIMIT says otherwise.
func setMemoryLimit() {
	mb, err := strconv.Atoi(os.Getenv("AWS_LAMBDA_FUNCTION_MEMORY_SIZE"))
	if err != nil || mb <= 0 || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetMemoryLimit(MemoryLimit(mb))
}

// OpenCloud sets the heap's limit from the function's memory, reads the
// configuration and wires the cloud vault; it makes no network call.
func OpenCloud(ctx context.Context) (*config.Config, *config.Cloud, *slog.Logger, error) {
	setMemoryLimit()
	c, err := Config()
	if err != nil {
		return nil, nil, Logger("info"), err
	}
	log := Logger(c.LogLevel)
	cl, err := config.OpenCloud(ctx, c, log)
	return c, cl, log, err
}
