package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/sheaf-dev/sheaf/shared/config"
	"github.com/sheaf-dev/sheaf/shared/tools"
)

func serveCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "serve --vault DIR [--http ADDR]",
		Short: "Serve a vault over MCP (stdio by default, or streamable HTTP)",
		Args:  cobra.NoArgs,
	}
	cfg := withConfig(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		ctx := cmd.Context()
		log := logger(cfg.LogLevel)
		if cfg.HTTP != "" && cfg.Token == "" && !loopback(cfg.HTTP) {
			return fmt.Errorf("refusing to listen on %s without a token: set --token (SHEAF_TOKEN) or bind 127.0.0.1", cfg.HTTP)
		}
		l, err := config.OpenLocal(ctx, cfg, log)
		if err != nil {
			return err
		}
		defer l.Close()
		l.Start(ctx, cfg.NoWatch)
		s, err := tools.NewServer(l.Vault)
		if err != nil {
			return err
		}
		srv, err := s.MCPServer(version, cfg.Profile)
		if err != nil {
			return err
		}
		if cfg.HTTP == "" {
			return tools.ServeStdio(ctx, srv, os.Stdin, os.Stdout)
		}
		ln, err := net.Listen("tcp", cfg.HTTP)
		if err != nil {
			return err
		}
		hs := &http.Server{
			Handler:           tools.HTTPHandler(srv, tools.HTTPOptions{Token: cfg.Token, AllowedOrigins: cfg.AllowedOrigins}),
			ReadHeaderTimeout: 10 * time.Second,
		}
		go func() {
			<-ctx.Done()
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = hs.Shutdown(sctx)
		}()
		log.Info("serving MCP over streamable HTTP", "url", "http://"+ln.Addr().String()+"/mcp", "vault", l.Root)
		if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	}
	return cmd
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
