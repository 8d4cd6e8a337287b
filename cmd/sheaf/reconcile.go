package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/sheaf-dev/sheaf/shared/config"
	"github.com/sheaf-dev/sheaf/shared/s3events"
	"github.com/sheaf-dev/sheaf/shared/vault"
)

func reconcileCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "reconcile --vault s3://BUCKET/PREFIX --search http://HOST:7700 [--webhook ADDR]",
		Short: "Index a cloud vault once, as the scheduled indexer does; with --webhook, then follow S3 event notifications",
		Long: `reconcile brings a cloud vault's derived state (the Meilisearch index, the
catalog snapshot under .sheaf/, and the vectors when embeddings are set up)
in step with the bucket, once. With --webhook it also serves the indexer's
webhook, so any S3-compatible server that posts S3 event notifications
(versitygw --event-webhook-url, MinIO's webhook target) keeps the index
current without LocalStack or Lambda. The webhook listens before the
reconcile starts, so no event is lost meanwhile.`,
		Args: cobra.NoArgs,
	}
	cfg := withConfig(cmd)
	webhook := cmd.Flags().String("webhook", "", "after reconciling, serve S3 event notifications (POST, any path) on this address, e.g. 127.0.0.1:8790")
	webhookToken := cmd.Flags().String("webhook-token", "", "bearer token the webhook requires (required to listen beyond loopback); or SHEAF_WEBHOOK_TOKEN")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		ctx := cmd.Context()
		log := logger(cfg.LogLevel)
		if !config.IsCloud(cfg.Vault) {
			return fmt.Errorf("reconcile takes a cloud vault (--vault s3://bucket/prefix); index a folder with `sheaf index`")
		}
		if *webhookToken == "" {
			*webhookToken = os.Getenv("SHEAF_WEBHOOK_TOKEN")
		}
		if *webhook != "" && *webhookToken == "" && !loopback(*webhook) {
			return fmt.Errorf("refusing to serve the webhook on %s without a token: set --webhook-token (SHEAF_WEBHOOK_TOKEN) or bind 127.0.0.1", *webhook)
		}
		// With --webhook the webhook listens first, deferring events (see
		// s3events.Gated), and the vault is waited for: an S3 server that
		// tests its webhook when it starts can start after this one, or
		// before, and a bucket made later is picked up.
		var hs *http.Server
		served := make(chan error, 1)
		gate := s3events.NewGated(*webhookToken)
		var handler atomic.Pointer[http.Handler]
		deferring := http.Handler(gate)
		handler.Store(&deferring)
		if *webhook != "" {
			ln, err := net.Listen("tcp", *webhook)
			if err != nil {
				return err
			}
			hs = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				(*handler.Load()).ServeHTTP(w, r)
			}), ReadHeaderTimeout: 10 * time.Second}
			go func() { served <- hs.Serve(ln) }()
			defer hs.Close()
			log.Info("serving the indexer webhook", "url", "http://"+ln.Addr().String()+"/")
		}
		cl, err := openCloudVault(ctx, cfg, log, *webhook != "")
		if err != nil {
			return err
		}
		defer cl.Close()
		gate.Open(cl.Indexer)
		applying := embedAfter(ctx, cl, log, gate)
		handler.Store(&applying)
		if err := reconcileOnce(ctx, cl, log); err != nil {
			return err
		}
		if hs == nil {
			return nil
		}
		select {
		case err := <-served:
			return err
		case <-ctx.Done():
		}
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := hs.Shutdown(sctx); err != nil {
			return err
		}
		if err := <-served; !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	}
	return cmd
}

// openCloudVault opens the cloud vault and loads its catalog. With wait, a
// vault that cannot be read yet (the S3 server not started, the bucket not
// made) is tried again, every few seconds, until ctx ends; a setting that
// is wrong (OpenCloud reads nothing, so its errors are the settings') or a
// catalog of an unknown version fails at once.
func openCloudVault(ctx context.Context, cfg *config.Config, log *slog.Logger, wait bool) (*config.Cloud, error) {
	for attempt := 0; ; attempt++ {
		cl, err := config.OpenCloud(ctx, cfg, log)
		if err != nil {
			return nil, err
		}
		if err = cl.LoadCatalog(ctx); err == nil { // before any event is applied
			checkConditionalWrites(ctx, cl.Store, log)
			return cl, nil
		}
		cl.Close()
		if !wait || ctx.Err() != nil || errors.Is(err, vault.ErrSnapshotVersion) {
			return nil, err
		}
		pause := min(time.Second<<min(attempt, 4), 15*time.Second)
		log.Warn("the vault cannot be read yet; trying again (the webhook defers events meanwhile)", "err", err, "in", pause)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(pause):
		}
	}
}

// reconcileOnce reconciles, embeds what changed and prints what it did.
func reconcileOnce(ctx context.Context, cl *config.Cloud, log *slog.Logger) error {
	st, err := cl.Indexer.Reconcile(ctx)
	if err != nil {
		return err
	}
	printSync(st, cl.Indexer)
	if err := cl.ReconcileEmbeddings(ctx); err != nil {
		log.Warn("embedding the vault; the semantic tools will retry", "err", err)
	}
	return nil
}

// embedAfter re-embeds changed notes in the background after each webhook
// request; requests arriving meanwhile share the next pass.
func embedAfter(ctx context.Context, cl *config.Cloud, log *slog.Logger, next http.Handler) http.Handler {
	if cl.Embeddings == nil {
		return next
	}
	kick := make(chan struct{}, 1)
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-kick:
				if err := cl.RefreshEmbeddings(ctx); err != nil && ctx.Err() == nil {
					log.Warn("embedding changed notes", "err", err)
				}
			}
		}
	}()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r)
		select {
		case kick <- struct{}{}:
		default:
		}
	})
}
