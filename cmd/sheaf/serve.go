package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/sheaf-dev/sheaf/shared/config"
	"github.com/sheaf-dev/sheaf/shared/config/local"
	"github.com/sheaf-dev/sheaf/shared/core"
	"github.com/sheaf-dev/sheaf/shared/store/s3"
	"github.com/sheaf-dev/sheaf/shared/tools"
	"github.com/sheaf-dev/sheaf/shared/tools/mcphttp"
)

func serveCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "serve --vault DIR|s3://BUCKET/PREFIX [--http ADDR]",
		Short: "Serve a vault over MCP (stdio by default, or streamable HTTP)",
		Long: `serve answers MCP over stdio, or streamable HTTP with --http.

A folder vault is indexed in the background (SQLite FTS5 under --state) and
followed for changes unless --no-watch. A cloud vault (--vault
s3://bucket/prefix?endpoint=..., --search http://meili:7700, optionally
--vectors qdrant://host:6334) is served from the bucket: the tools read the
catalog snapshot that the indexer saved there. This server does not index;
run ` + "`sheaf reconcile`" + ` (with --webhook to follow S3 events) or the indexer
function beside it.`,
		Args: cobra.NoArgs,
	}
	cfg := withConfig(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		ctx := cmd.Context()
		log := logger(cfg.LogLevel)
		if cfg.HTTP != "" {
			addr, err := httpAddr(cfg.HTTP)
			if err != nil {
				return err
			}
			cfg.HTTP = addr
		}
		v, o, closeVault, err := openVault(ctx, cfg, log)
		if err != nil {
			return err
		}
		defer closeVault()
		s, err := tools.NewServer(v)
		if err != nil {
			return err
		}
		s.MaxResponseBytes = cfg.MaxResponseBytes
		// The tools are declared while the index opens, and over stdio
		// while initialize is answered; the vault's loads start once it is
		// (or soon anyway, for a client that sends something else first).
		srv, declare, err := s.MCPServerFirst(version, cfg.Profile)
		if err != nil {
			return err
		}
		declared := make(chan struct{})
		go func() { declare(); close(declared) }()
		if err := o.Opening(ctx); err != nil { // opened meanwhile
			return err
		}
		if cfg.HTTP == "" {
			time.AfterFunc(beginAfter, o.Begin)
			return mcphttp.ServeStdioLimited(ctx, srv, os.Stdin, &afterFirstWrite{w: os.Stdout, fn: o.Begin}, declared, requestLimit(cfg))
		}
		<-declared
		o.Begin()
		ln, err := listen(cfg.HTTP)
		if err != nil {
			return err
		}
		if cfg.OAuthBuiltin && cfg.OAuthAudience == "" && loopback(cfg.HTTP) {
			cfg.OAuthAudience = "http://" + ln.Addr().String() + "/mcp" // a local try-out
		}
		ha, err := httpAuth(ctx, cfg, v)
		if err != nil {
			ln.Close()
			return err
		}
		defer ha.Close()
		if ha.Builtin != nil {
			ha.Builtin.SetLog(log)
			if set, _, err := ha.Auth.Keys.Keys(ctx); err == nil && set.Owners(time.Now()) == 0 {
				log.Warn("no owner key yet: nobody can approve an OAuth client until one is added (sheaf keys add NAME --owner)")
			}
			log.Info("serving the built-in OAuth authorization server", "issuer", ha.Builtin.Issuer())
		}
		opts := mcphttp.HTTPOptions{Auth: ha.Auth, AllowedOrigins: cfg.AllowedOrigins, Routes: ha.Routes(), MaxRequestBytes: requestLimit(cfg)}
		if ha.Resource != nil { // a nil *oauth.Verifier is not a nil ProtectedResource
			opts.Resource = ha.Resource
		}
		// On SIGTERM the requests' context is cancelled (event streams
		// end, calls not yet writing give up) and the server waits up to
		// shutdownWait for the calls still running: a move or an undo
		// that has begun writing completes before the process exits.
		requests, stopRequests := context.WithCancel(context.Background())
		defer stopRequests()
		hs := &http.Server{
			Handler:           mcphttp.HTTPHandler(srv, opts),
			ReadHeaderTimeout: 10 * time.Second,
			BaseContext:       func(net.Listener) context.Context { return requests },
		}
		hs.RegisterOnShutdown(stopRequests)
		drained := make(chan struct{})
		go func() {
			defer close(drained)
			<-ctx.Done()
			sctx, cancel := context.WithTimeout(context.Background(), shutdownWait)
			defer cancel()
			if err := hs.Shutdown(sctx); err != nil {
				log.Warn("shutting down with calls still running", "err", err)
			}
		}()
		log.Info("serving MCP over streamable HTTP", "url", "http://"+ln.Addr().String()+"/mcp", "vault", v.Root)
		if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		<-drained
		return nil
	}
	return cmd
}

// shutdownWait bounds how long `sheaf serve --http` waits, once told to
// stop, for the calls still running.
const shutdownWait = 30 * time.Second

// openVault wires the vault to serve and returns it with what opened it
// (config.OpenLazily: call Begin once initialize is answered) and its
// closer. A folder is the local door's: this process indexes it and
// (unless --no-watch) follows it. A vault another process indexes (a
// bucket) is read through the catalog snapshot that process saves.
func openVault(ctx context.Context, cfg *config.Config, log *slog.Logger) (*core.Vault, *config.Opened, func() error, error) {
	o, err := config.OpenLazily(ctx, cfg, log)
	if err != nil {
		return nil, nil, nil, err
	}
	if !o.Site.Indexes() {
		if cw, ok := o.Site.Store.(conditionalWriter); ok {
			checkConditionalWrites(ctx, cw, log)
		}
		return o.Vault, o, o.Close, nil
	}
	l, err := local.Of(o, cfg)
	if err != nil {
		return nil, nil, nil, err
	}
	l.Start(ctx, cfg.NoWatch)
	return l.Vault, o, l.Close, nil
}

// beginAfter is when a stdio server begins its vault's loads if it has
// not answered initialize by then.
const beginAfter = 200 * time.Millisecond

// afterFirstWrite calls fn once its first write (a server's answer to
// initialize) has reached w.
type afterFirstWrite struct {
	w    io.Writer
	fn   func()
	once sync.Once
}

func (a *afterFirstWrite) Write(p []byte) (int, error) {
	n, err := a.w.Write(p)
	a.once.Do(a.fn)
	return n, err
}

// requestLimit is the request body limit: the flag, else what a write of
// the largest note needs.
func requestLimit(cfg *config.Config) int64 {
	if cfg.MaxRequestBytes > 0 {
		return cfg.MaxRequestBytes
	}
	return mcphttp.MaxRequestBytesFor(cfg.MaxNoteBytes)
}

// conditionalWriter is a store that can check that its server honours
// conditional writes (store/s3).
type conditionalWriter interface {
	CheckConditionalWrites(ctx context.Context) error
}

// checkConditionalWrites says at start when the bucket's server ignores
// conditional writes, on which every compare-and-swap write and every
// conditional delete rests (a Lambda handler, which makes no request at
// init, does not check).
func checkConditionalWrites(ctx context.Context, st conditionalWriter, log *slog.Logger) {
	switch err := st.CheckConditionalWrites(ctx); {
	case errors.Is(err, s3.ErrNoConditionalWrites):
		log.Error("this S3 server does not honour conditional writes: two writers of one note can overwrite each other, and a delete can remove a write made meanwhile; use a server that does (AWS S3, versitygw, MinIO)", "err", err)
	case err != nil:
		log.Warn("could not check that the S3 server honours conditional writes", "err", err)
	}
}

// httpAuth wires who may call the HTTP endpoint. Beyond loopback a
// credential is always required, and the server refuses to start unless
// someone can present one.
func httpAuth(ctx context.Context, cfg *config.Config, v *core.Vault) (*config.HTTPAuth, error) {
	wide := !loopback(cfg.HTTP)
	ha, err := config.OpenAuth(ctx, cfg, v.Store, wide)
	if err != nil {
		return nil, err
	}
	if ok, err := ha.HasCredentials(ctx); err != nil {
		ha.Close()
		return nil, err
	} else if wide && !ok {
		ha.Close()
		return nil, fmt.Errorf("refusing to listen on %s without credentials: add a key (sheaf keys add), set --token (SHEAF_TOKEN) or --oauth-issuer, or bind 127.0.0.1", cfg.HTTP)
	}
	return ha, nil
}

// loopback reports whether addr (host:port) binds only a loopback interface.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
