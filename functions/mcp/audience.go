package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"

	"github.com/sheaf-dev/sheaf/shared/auth/ssmkeys"
)

// lazyEndpoint wires the endpoint at the first request that reaches it,
// for an audience kept in an SSM parameter (SHEAF_OAUTH_AUDIENCE=ssm:NAME):
// the template's way to tell the function its own URL, which the function
// cannot reference itself (its API depends on it), so that one deployment
// gives a working built-in authorization server. Init stays free of
// network calls; a failed read is retried by the next request.
type lazyEndpoint struct {
	param string                                                           // ssm:NAME
	build func(ctx context.Context, audience string) (http.Handler, error) // wires the endpoint
	log   *slog.Logger

	mu sync.Mutex
	h  http.Handler
}

func (l *lazyEndpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h, err := l.handler(r.Context())
	if err != nil {
		l.log.Error("reading this endpoint's URL (the OAuth audience)", "parameter", l.param, "err", err)
		w.Header().Set("Retry-After", "5")
		http.Error(w, "Service unavailable: the endpoint's configuration cannot be read right now", http.StatusServiceUnavailable)
		return
	}
	h.ServeHTTP(w, r)
}

func (l *lazyEndpoint) handler(ctx context.Context) (http.Handler, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.h != nil {
		return l.h, nil
	}
	u, err := ssmkeys.ParseURL(l.param)
	if err != nil {
		return nil, err
	}
	src, err := ssmkeys.Open(ctx, u)
	if err != nil {
		return nil, err
	}
	data, found, err := src.Load(ctx)
	switch {
	case err != nil:
		return nil, err
	case !found:
		return nil, fmt.Errorf("%s does not exist", src)
	}
	audience := strings.TrimSpace(string(data))
	if audience == "" || strings.HasPrefix(audience, "ssm:") {
		return nil, errors.New("the parameter holds no URL")
	}
	h, err := l.build(ctx, audience)
	if err != nil {
		return nil, err
	}
	l.log.Info("the OAuth audience read from SSM", "audience", audience)
	l.h = h
	return h, nil
}
