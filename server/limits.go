package server

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/baton-dev/baton/traces"
)

// Defaults of the Config fields that keep slow and hostile clients from holding the server.
const (
	// DefaultMaxConns leaves room for many pages and scripts while staying far below the
	// process's file descriptor limit.
	DefaultMaxConns          = 512
	DefaultMaxRunning        = 32
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultBodyTimeout       = 30 * time.Second
	DefaultWriteTimeout      = 10 * time.Second
	DefaultShutdownGrace     = 10 * time.Second
)

// idleTimeout bounds how long a keep-alive connection may wait for its next request.
const idleTimeout = 2 * time.Minute

// setLimits gives the zero limits their defaults and refuses negative ones.
func (cfg *Config) setLimits() error {
	switch {
	case cfg.MaxBody < 0:
		return traces.Errorf(traces.CodeInvalid, "max body %d is negative", cfg.MaxBody)
	case cfg.MaxBody == 0:
		cfg.MaxBody = DefaultMaxBody
	}
	switch {
	case cfg.MaxConns < 0:
		return traces.Errorf(traces.CodeInvalid, "max conns %d is negative", cfg.MaxConns)
	case cfg.MaxConns == 0:
		cfg.MaxConns = DefaultMaxConns
	}
	if cfg.MaxRunning <= 0 {
		cfg.MaxRunning = DefaultMaxRunning
	}
	for _, d := range []struct {
		name  string
		value *time.Duration
		def   time.Duration
	}{
		{"read header timeout", &cfg.ReadHeaderTimeout, DefaultReadHeaderTimeout},
		{"body timeout", &cfg.BodyTimeout, DefaultBodyTimeout},
		{"write timeout", &cfg.WriteTimeout, DefaultWriteTimeout},
		{"shutdown grace", &cfg.ShutdownGrace, DefaultShutdownGrace},
	} {
		switch {
		case *d.value < 0:
			return traces.Errorf(traces.CodeInvalid, "%s %s is negative", d.name, *d.value)
		case *d.value == 0:
			*d.value = d.def
		}
	}
	return nil
}

// httpServer is the http.Server that Serve runs: no client may hold a connection by sending its
// request slowly. bodyLimit sets the body's own deadline; ReadTimeout backs it for the bodies
// net/http reads itself (the rest of a body no handler read, up to 256 KiB).
func (s *Server) httpServer() *http.Server {
	return &http.Server{
		Handler:           s.echo,
		ReadHeaderTimeout: s.cfg.ReadHeaderTimeout,
		ReadTimeout:       s.cfg.ReadHeaderTimeout + s.cfg.BodyTimeout,
		IdleTimeout:       idleTimeout,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
}

// shutdownHTTP closes hs's listener at once and waits for the requests in flight until ctx ends;
// then it cuts the connections of the clients still sending or reading, which is no failure.
func (s *Server) shutdownHTTP(ctx context.Context, hs *http.Server) error {
	err := hs.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		s.log.Warn("shutdown grace is over: cutting the connections of slow clients")
		// Its only error would be closing the listener a second time.
		_ = hs.Close()
		return nil
	}
	return err
}
