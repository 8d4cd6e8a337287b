// Command mcp is the MCP Lambda function: API Gateway HTTP API, Function URL
// and REST API events go through Sheaf's streamable HTTP handler (stateless,
// buffered JSON, bearer token checked before the MCP layer) over the cloud
// vault that the SHEAF_* variables name. Init makes no network call.
package main

import (
	"context"
	"errors"
	"net/http"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/sheaf-dev/sheaf/functions/internal/fnenv"
	"github.com/sheaf-dev/sheaf/functions/internal/lambdahttp"
	"github.com/sheaf-dev/sheaf/shared/tools"
)

// lambdaMaxResponseBytes caps the response budget: a synchronous Lambda
// response is at most 6 MB.
const lambdaMaxResponseBytes = 4 << 20

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	h, err := newHandler(context.Background())
	if err != nil {
		fnenv.Logger("error").Error("sheaf mcp function: init", "err", err)
		os.Exit(1)
	}
	lambda.Start(lambdahttp.Handler{H: h}.Invoke)
}

// newHandler wires the vault and returns the MCP endpoint (/mcp, and
// /healthz without a token). A deployment must set SHEAF_TOKEN: the
// endpoint is public.
func newHandler(ctx context.Context) (http.Handler, error) {
	cfg, cl, _, err := fnenv.OpenCloud(ctx)
	if err != nil {
		return nil, err
	}
	if cfg.Token == "" {
		return nil, errors.New("SHEAF_TOKEN is not set: the function's endpoint is public and must require a bearer token")
	}
	s, err := tools.NewServer(cl.Vault)
	if err != nil {
		return nil, err
	}
	// Lambda returns at most 6 MB: keep every answer well under it.
	s.MaxResponseBytes = min(cfg.MaxResponseBytes, lambdaMaxResponseBytes)
	srv, err := s.MCPServer(version, cfg.Profile)
	if err != nil {
		return nil, err
	}
	return tools.HTTPHandler(srv, tools.HTTPOptions{Token: cfg.Token, AllowedOrigins: cfg.AllowedOrigins}), nil
}
