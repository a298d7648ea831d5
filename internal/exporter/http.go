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

// Serve runs the looks and serves Handler on l until ctx ends (SIGTERM in
// the CLI), then stops the looks and shuts the server down gracefully.
func (e *Exporter) Serve(ctx context.Context, l net.Listener) error {
	srv := &http.Server{
		Handler:           e.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(e.cfg.Logger.Handler(), slog.LevelWarn),
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
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
