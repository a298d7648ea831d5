package exporter

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Handler serves /metrics (the exporter's registry), /healthz (the
// process serves) and /readyz (a look has completed).
func (e *Exporter) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(e.reg, promhttp.HandlerOpts{
		ErrorLog:            slog.NewLogLogger(e.cfg.Logger.Handler(), slog.LevelError),
		MaxRequestsInFlight: 4,
		Timeout:             30 * time.Second,
	}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok\n")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if !e.Ready() {
			http.Error(w, "no look has completed yet", http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "ok\n")
	})
	return mux
}

// ShutdownTimeout bounds how long Serve waits for scrapes in flight once
// ctx ended.
const ShutdownTimeout = 10 * time.Second

// The server's timeouts for a connection without a request in flight:
// short, since a scrape sends its header at once and comes back within
// its interval, or opens a new connection (each is also closed earlier,
// when the connection cap is reached: connLimiter).
const (
	ReadHeaderTimeout = 5 * time.Second
	IdleTimeout       = 15 * time.Second
)

// server returns the http.Server of Serve, without a listener.
func (e *Exporter) server() *http.Server {
	return &http.Server{
		Handler:           e.Handler(),
		ReadHeaderTimeout: ReadHeaderTimeout,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       IdleTimeout,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(e.cfg.Logger.Handler(), slog.LevelWarn),
	}
}

// serveLimited serves srv on l holding at most MaxConnections open, where
// idle and slow connections give way to the ones serving a request
// (connLimiter).
func serveLimited(srv *http.Server, l net.Listener, max int) (*connLimiter, chan error) {
	cl := limitConns(l, max)
	srv.ConnState = cl.ConnState
	served := make(chan error, 1)
	go func() { served <- srv.Serve(cl) }()
	return cl, served
}

// Serve runs the looks and serves Handler on l (at most MaxConnections at
// once) until ctx ends (SIGTERM in the CLI), then stops the looks and
// shuts the server down gracefully.
func (e *Exporter) Serve(ctx context.Context, l net.Listener) error {
	srv := e.server()
	_, served := serveLimited(srv, l, MaxConnections)
	e.cfg.Logger.Info("serving", "address", l.Addr().String(), "interval", e.cfg.Interval.String())
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	looped := make(chan struct{})
	go func() {
		defer close(looped)
		e.Run(rctx, nil)
	}()
	var err error
	select {
	case <-ctx.Done():
	case err = <-served:
		err = fmt.Errorf("serving on %s: %w", l.Addr(), err)
	}
	e.cfg.Logger.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ShutdownTimeout)
	defer cancel()
	if serr := srv.Shutdown(sctx); serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, fmt.Errorf("shutting down: %w", serr))
	}
	stop()
	<-looped
	return err
}
