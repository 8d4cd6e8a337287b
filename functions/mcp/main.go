// Command mcp is the MCP Lambda function: API Gateway HTTP API, Function URL
// and REST API events go through Sheaf's streamable HTTP handler (stateless,
// buffered JSON, the caller authenticated before the MCP layer) over the cloud
// vault that the SHEAF_* variables name; the scheduled {"warm": true} loads
// the catalog and builds its indexes (KeepWarm in template.yaml). Init makes
// no network call.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/sheaf-dev/sheaf/functions/internal/fnenv"
	"github.com/sheaf-dev/sheaf/functions/internal/lambdahttp"
	"github.com/sheaf-dev/sheaf/shared/audit"
	"github.com/sheaf-dev/sheaf/shared/auth"
	"github.com/sheaf-dev/sheaf/shared/auth/ssmkeys"
	"github.com/sheaf-dev/sheaf/shared/config"
	"github.com/sheaf-dev/sheaf/shared/core"
	"github.com/sheaf-dev/sheaf/shared/tools"
	"github.com/sheaf-dev/sheaf/shared/tools/mcphttp"
)

// lambdaMaxResponseBytes caps the response budget: a synchronous Lambda
// response is at most 6 MB.
const lambdaMaxResponseBytes = 4 << 20

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	h, v, limit, err := newHandler(context.Background())
	if err != nil {
		fnenv.Logger("error").Error("sheaf mcp function: init", "err", err)
		os.Exit(1)
	}
	lambda.Start(invoker{http: lambdahttp.Handler{H: h, MaxBodyBytes: limit}, cats: v.Catalogs, audit: v.Audit}.Invoke)
}

// invoker answers the function's events: HTTP ones through the MCP
// endpoint, and {"warm": true} (scheduled by KeepWarm; no HTTP event has a
// top-level "warm") by warming this instance.
type invoker struct {
	http  lambdahttp.Handler
	cats  core.Catalogs
	audit *audit.Log // flushed before each answer: a frozen instance runs no timer
}

// Invoke is the Lambda handler.
func (in invoker) Invoke(ctx context.Context, raw json.RawMessage) (any, error) {
	var ev struct {
		Warm bool `json:"warm"`
	}
	if json.Unmarshal(raw, &ev) == nil && ev.Warm {
		return in.warmUp(ctx)
	}
	out, err := in.http.Invoke(ctx, raw)
	if ferr := in.audit.Flush(ctx); ferr != nil {
		fnenv.Logger("warn").Warn("read audit: flush failed; kept for the next call", "err", ferr)
	}
	return out, err
}

// warmed is the answer to a warm-up.
type warmed struct {
	Warm  bool  `json:"warm"`
	Notes int   `json:"notes"`
	Ms    int64 `json:"ms"`
}

// warmUp loads the catalog and builds the indexes most calls need, so that
// the calls this instance serves next find them ready: on a big vault a
// cold instance's first call that needs the whole catalog takes seconds.
// An instance already warm only revalidates the catalog (milliseconds).
func (in invoker) warmUp(ctx context.Context) (warmed, error) {
	start := time.Now()
	cat, err := in.cats.Catalog(ctx)
	if err != nil {
		return warmed{}, err
	}
	cat.Warm()
	return warmed{Warm: true, Notes: cat.Len(), Ms: time.Since(start).Milliseconds()}, nil
}

// newHandler wires the vault and returns the MCP endpoint (/mcp, /healthz
// and, with OAuth, the protected resource metadata), and the vault's
// catalogs, and the request body limit it enforces. The endpoint is
// public, so every request needs a credential: an API key from the keys
// file (the bucket's .sheaf/keys.json by default, or SHEAF_KEYS), an OAuth
// access token (SHEAF_OAUTH_ISSUER and SHEAF_OAUTH_AUDIENCE, or the built-in
// authorization server's, SHEAF_OAUTH_BUILTIN) or the shared SHEAF_TOKEN.
// Nothing is fetched before the first request: an audience in an SSM
// parameter (ssm:NAME) is read then.
func newHandler(ctx context.Context) (http.Handler, *core.Vault, int64, error) {
	cfg, cl, log, err := fnenv.OpenCloud(ctx)
	if err != nil {
		return nil, nil, 0, err
	}
	s, err := tools.NewServer(cl.Vault)
	if err != nil {
		return nil, nil, 0, err
	}
	// Lambda returns at most 6 MB: keep every answer well under it.
	s.MaxResponseBytes = min(cfg.MaxResponseBytes, lambdaMaxResponseBytes)
	srv, err := s.MCPServer(version, cfg.Profile)
	if err != nil {
		return nil, nil, 0, err
	}
	limit := cfg.MaxRequestBytes
	if limit <= 0 {
		limit = mcphttp.MaxRequestBytesFor(cfg.MaxNoteBytes)
	}
	build := func(ctx context.Context, audience string) (http.Handler, error) {
		c := *cfg
		c.OAuthAudience = audience
		ha, err := config.OpenAuth(ctx, &c, cl.Vault.Store, true)
		if err != nil {
			return nil, err
		}
		if ha.Auth.Keys == nil && ha.Auth.Token == "" && ha.Auth.OAuth == nil {
			return nil, errors.New("SHEAF_KEYS=none without SHEAF_TOKEN or SHEAF_OAUTH_ISSUER: nobody could call the function")
		}
		if ha.Builtin != nil {
			ha.Builtin.SetLog(log)
		}
		if ha.Auth.Token == "" && ha.Auth.OAuth == nil && cfg.Keys == "" {
			log.Info("only API keys from the bucket's keys file are accepted", "keys", auth.KeysPath)
		}
		opts := mcphttp.HTTPOptions{Auth: ha.Auth, AllowedOrigins: cfg.AllowedOrigins, Routes: ha.Routes(), MaxRequestBytes: limit}
		if ha.Resource != nil { // a nil *oauth.Verifier is not a nil ProtectedResource
			opts.Resource = ha.Resource
		}
		return mcphttp.HTTPHandler(srv, opts), nil
	}
	if ssmkeys.IsURL(cfg.OAuthAudience) {
		// Checked now, read at the first request (init makes no network call).
		if _, err := ssmkeys.ParseURL(cfg.OAuthAudience); err != nil {
			return nil, nil, 0, fmt.Errorf("SHEAF_OAUTH_AUDIENCE: %w", err)
		}
		if _, err := build(ctx, "https://audience.invalid/mcp"); err != nil { // the rest of the settings, at init
			return nil, nil, 0, err
		}
		return &lazyEndpoint{param: cfg.OAuthAudience, build: build, log: log}, cl.Vault, limit, nil
	}
	h, err := build(ctx, cfg.OAuthAudience)
	if err != nil {
		return nil, nil, 0, err
	}
	return h, cl.Vault, limit, nil
}
