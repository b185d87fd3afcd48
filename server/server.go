// Package server is Baton's HTTP side: the Echo routes of the pages and the JSON API, the run
// manager that starts flows in the background, the websocket endpoints that stream a run as it
// happens, and the middleware that keeps a local debugger from being driven by other web sites
// (Host and Origin checks, a token, security headers, body limits).
package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/traces"
)

// Defaults of Config.
const (
	DefaultAddr    = "127.0.0.1:7070"
	DefaultMaxBody = 64 << 10
	// MaxPace is the largest pace a run accepts, in milliseconds.
	MaxPace = 10_000
)

// shutdownGrace bounds how long Start waits for runs, websockets and requests to end once its
// context is done.
const shutdownGrace = 10 * time.Second

// Config configures a Server. The zero value serves the built-in flows on DefaultAddr.
type Config struct {
	// Addr is the host:port to listen on; DefaultAddr when empty. Any address that is not loopback
	// (0.0.0.0, ::, a LAN address, a host name other than localhost) requires a token.
	Addr string
	// Token, when set, is required on every request. When empty and Addr is not loopback, New
	// generates one; read it back with Server.Token.
	Token string
	// Flows are the flows one can start; agents.Catalogue() when nil.
	Flows []agents.Flow
	// DefaultPace is the pace of a run whose request gives no pace_ms.
	DefaultPace time.Duration
	// Models, when set, replaces the flows' scripted models (a real LLM); Model names it in the
	// run's metadata ("scripted" when Models is nil and Model empty).
	Models agents.ModelFor
	Model  string
	// Streaming makes agents stream their replies.
	Streaming bool
	// Logger receives internal errors and lifecycle messages; slog.Default() when nil.
	Logger *slog.Logger
	// MaxBody bounds a request body in bytes; DefaultMaxBody when 0.
	MaxBody int64
	// MaxRunning bounds how many runs may go on at once; 32 when 0.
	MaxRunning int
	// Queue is how many events a viewer of a run this server starts may fall behind before it is
	// dropped; traces.DefaultQueue when 0.
	Queue int
	// Broker holds the runs the server shows; a new one when nil. Recordings added to it by others
	// are shown and streamed like the server's own runs, but cannot be paced.
	Broker *traces.Broker
	// MaxIngestBody bounds the body of the routes that take events or trace files (POST
	// /api/ingest, /api/ingest/:id, /api/traces) in bytes; DefaultMaxIngestBody when 0.
	MaxIngestBody int64
	// IngestTimeout is how long a run an app streams may go without a post before it is finished
	// interrupted; DefaultIngestTimeout when 0.
	IngestTimeout time.Duration
}

// Server serves Baton's pages, API and websockets. Create it with New; it is safe for concurrent
// use.
type Server struct {
	cfg    Config
	log    *slog.Logger
	echo   *echo.Echo
	broker *traces.Broker
	flows  []agents.Flow
	runs   *runManager
	ingest *ingestion
	token  string
	hosts  atomic.Pointer[hostPolicy]

	// ctx ends when the server shuts down: every run and websocket derives from it.
	ctx    context.Context
	cancel context.CancelFunc

	sockets  sync.WaitGroup // websocket handlers in flight
	mu       sync.Mutex
	shutting bool // no new websockets once set; guarded by mu
}

// New checks cfg and returns a server ready to Start (or to mount with Handler). It fails with a
// traces.CodeInvalid error when Addr is not host:port or a value is out of range.
func New(cfg Config) (*Server, error) {
	if cfg.Addr == "" {
		cfg.Addr = DefaultAddr
	}
	hosts, err := newHostPolicy(cfg.Addr)
	if err != nil {
		return nil, err
	}
	if cfg.Flows == nil {
		cfg.Flows = agents.Catalogue()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	switch {
	case cfg.MaxBody < 0:
		return nil, traces.Errorf(traces.CodeInvalid, "max body %d is negative", cfg.MaxBody)
	case cfg.MaxBody == 0:
		cfg.MaxBody = DefaultMaxBody
	}
	if err := ingestDefaults(&cfg); err != nil {
		return nil, err
	}
	if cfg.MaxRunning <= 0 {
		cfg.MaxRunning = 32
	}
	if cfg.DefaultPace < 0 || cfg.DefaultPace > MaxPace*time.Millisecond {
		return nil, traces.Errorf(traces.CodeInvalid, "default pace %s is not between 0 and %dms", cfg.DefaultPace, MaxPace)
	}
	if cfg.Model == "" && cfg.Models == nil {
		cfg.Model = "scripted"
	}
	if cfg.Broker == nil {
		cfg.Broker = traces.NewBroker(0)
	}
	token := cfg.Token
	if token == "" && hosts.needsToken {
		if token, err = newToken(); err != nil {
			return nil, err
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{
		cfg:    cfg,
		log:    cfg.Logger,
		broker: cfg.Broker,
		flows:  cfg.Flows,
		token:  token,
		ctx:    ctx,
		cancel: cancel,
	}
	s.hosts.Store(hosts)
	s.runs = newRunManager(ctx, runManagerConfig{
		broker:     cfg.Broker,
		queue:      cfg.Queue,
		maxRunning: cfg.MaxRunning,
		model:      cfg.Model,
		options:    agents.Options{Models: cfg.Models, Streaming: cfg.Streaming},
		log:        cfg.Logger,
	})
	s.ingest = newIngestion(ctx, cfg.Broker, cfg.IngestTimeout, cfg.Queue)
	s.echo = s.routes()
	return s, nil
}

// newToken returns 128 random bits in hex.
func newToken() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generate token: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// routes builds the Echo instance: middleware, then one group of routes per resource.
func (s *Server) routes() *echo.Echo {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = s.handleError
	e.Use(
		s.recoverPanic,
		securityHeaders,
		s.checkHost,
		s.checkToken,
		checkOrigin,
		bodyLimit(s.bodyLimitFor),
	)
	s.pageRoutes(e)
	s.flowRoutes(e)
	s.runRoutes(e)
	s.eventRoutes(e)
	s.liveRoutes(e)
	s.ingestRoutes(e)
	return e
}

// Handler returns the server's HTTP handler (the Echo instance), for tests and for mounting. Call
// Shutdown when done with it so runs and websockets end.
func (s *Server) Handler() http.Handler { return s.echo }

// Token returns the token every request must carry, or "" when none is required.
func (s *Server) Token() string { return s.token }

// URL returns the address a person should open: the index page, with ?token= when a token is
// required. For a wildcard address it names 127.0.0.1.
func (s *Server) URL() string { return s.hosts.Load().url(s.token) }

// Start listens on Config.Addr and serves until ctx ends, then shuts down gracefully: running
// runs are canceled, websockets closed, in-flight requests given time to finish. It returns nil
// after a clean shutdown. A Server serves once: after Start or Serve returns, it is shut down.
func (s *Server) Start(ctx context.Context) error {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", s.cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", s.cfg.Addr, err)
	}
	return s.Serve(ctx, ln)
}

// Serve is Start on a listener the caller opened; Serve closes it. When Config.Addr has port 0,
// the listener's port is the one allowed in Host headers and URL.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	hosts, err := s.hosts.Load().withListener(ln.Addr())
	if err != nil {
		ln.Close()
		return err
	}
	s.hosts.Store(hosts)
	hs := &http.Server{
		Handler:           s.echo,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	s.log.Info("baton is serving", "url", hosts.url("")) // the token stays out of logs

	select {
	case err = <-served:
		// Serve failed on its own; still stop the runs it may have started.
		sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
		defer cancel()
		return errors.Join(fmt.Errorf("serve: %w", err), s.Shutdown(sctx))
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	// Runs and websockets first: http.Server.Shutdown does not wait for hijacked connections.
	errRuns := s.Shutdown(sctx)
	errHTTP := hs.Shutdown(sctx)
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		errHTTP = errors.Join(errHTTP, err)
	}
	if errHTTP != nil {
		errHTTP = fmt.Errorf("shut down http server: %w", errHTTP)
	}
	return errors.Join(errRuns, errHTTP)
}

// Shutdown cancels every running run, closes every websocket (close code 1001, going away) and
// waits until their goroutines have ended or ctx is done. Later websocket upgrades and runs are
// refused. Safe to call more than once; Start calls it when its context ends.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.shutting = true
	s.mu.Unlock()
	s.cancel()

	done := make(chan struct{})
	go func() {
		s.runs.wait()
		s.ingest.wait()
		s.sockets.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("shut down runs and websockets: %w", ctx.Err())
	}
}
