// Package server is Baton's HTTP side: the Echo routes of the pages and the JSON API, the run
// manager that starts flows in the background, the ingestion of the runs apps send (package
// attach's remote recorder), the websocket endpoints that stream a run as it happens, and the
// middleware that keeps a local debugger from being driven by other web sites (Host and Origin
// checks, a token, security headers, body limits).
//
// It is Baton's own, not a supported API: its exported names serve the baton command and Baton's
// tests, and may change in any release. Apps record their runs with package attach.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
	"golang.org/x/net/netutil"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/internal/live"
	"github.com/baton-dev/baton/internal/prices"
	"github.com/baton-dev/baton/traces"
)

// Defaults of Config.
const (
	DefaultAddr    = "127.0.0.1:7070"
	DefaultMaxBody = 64 << 10
	// MaxPace is the largest pace a run accepts, in milliseconds.
	MaxPace = 10_000
)

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
	// Models are the chat models a run may pick ("model" of POST /api/runs) besides the scripted
	// one; the first is used by a run that names none, the scripted model when there is none.
	Models []*agents.Model
	// Streaming makes agents stream their replies.
	Streaming bool
	// Logger receives internal errors and lifecycle messages; slog.Default() when nil.
	Logger *slog.Logger
	// MaxBody bounds a request body in bytes; DefaultMaxBody when 0.
	MaxBody int64
	// MaxRunning bounds how many runs may go on at once; DefaultMaxRunning when 0.
	MaxRunning int
	// Broker holds the runs the server shows; a new one, in memory only, when nil
	// (live.NewStoredBroker keeps them in a database). Recordings added to it by others are
	// shown and streamed like the server's own runs, but cannot be paced.
	Broker *live.Broker
	// Export, when set, is handed the recording of every run as it starts or resumes: the
	// server's own runs and those apps stream in, not imported traces. It must return at once
	// (otlp.Exporter.Watch reads the run in a goroutine of its own).
	Export func(*traces.Recording)
	// Prices price model calls on the pages (prices.Load, prices.Default); nil shows tokens and
	// no money.
	Prices prices.Table

	// MaxConns bounds the connections served at once, websockets included; DefaultMaxConns when
	// 0. Past it, new connections wait to be accepted.
	MaxConns int
	// ReadHeaderTimeout bounds how long a client may take to send a request's headers;
	// DefaultReadHeaderTimeout when 0.
	ReadHeaderTimeout time.Duration
	// BodyTimeout bounds how long a client may take to send a request's body once its headers
	// are in; DefaultBodyTimeout when 0. A late body gets 408 and its connection is closed.
	BodyTimeout time.Duration
	// WriteTimeout is how long a websocket viewer may take to accept one message before it is
	// closed as too slow (CloseTooSlow); DefaultWriteTimeout when 0.
	WriteTimeout time.Duration
	// ShutdownGrace bounds how long Start and Serve take to shut down once their context ends:
	// clients still being served then are cut. DefaultShutdownGrace when 0.
	ShutdownGrace time.Duration

	// MaxIngestBody bounds the body of the routes that take events or trace files (POST
	// /api/ingest, /api/ingest/:id, /api/traces) in bytes; DefaultMaxIngestBody when 0.
	MaxIngestBody int64
	// IngestTimeout is how long a run an app streams may go without a post before it is finished
	// interrupted; DefaultIngestTimeout when 0.
	IngestTimeout time.Duration
	// MaxIngestRuns bounds the runs apps stream at once, MaxIngestRunsPerClient those of one
	// client (by address); DefaultMaxIngestRuns and DefaultMaxIngestRunsPerClient when 0. A start
	// past a bound is answered 503 (the server's) or 429 (the client's), with a Retry-After.
	MaxIngestRuns          int
	MaxIngestRunsPerClient int
}

// Server serves Baton's pages, API and websockets. Create it with New; it is safe for concurrent
// use.
type Server struct {
	cfg    Config
	log    *slog.Logger
	echo   *echo.Echo
	broker *live.Broker
	flows  []agents.Flow
	models []*agents.Model // the choices of a run, the default first; the scripted model is among them
	runs   *runManager
	feeds  feeds // what the viewers of each followed run share
	ingest *ingestion
	token  string
	hosts  atomic.Pointer[hostPolicy]

	// pongWait is how long a websocket peer may go without answering (pongWait; a test may wait
	// less).
	pongWait time.Duration

	// Shutdown ends these in turn. runsCtx: every run the server runs or an app streams into it
	// ends, recording run.finished. goingAway: websockets close once they delivered that.
	// cutSockets: the grace is over, and websockets still open are cut.
	runsCtx    context.Context
	endRuns    context.CancelFunc
	goingAway  context.Context
	goAway     context.CancelFunc
	cutSockets context.Context
	cut        context.CancelFunc

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
	if cfg.DefaultPace < 0 || cfg.DefaultPace > MaxPace*time.Millisecond {
		return nil, traces.Errorf(traces.CodeInvalid, "default pace %s is not between 0 and %dms", cfg.DefaultPace, MaxPace)
	}
	models, err := modelChoices(cfg.Models)
	if err != nil {
		return nil, err
	}
	if cfg.Broker == nil {
		cfg.Broker = live.NewBroker(0)
	}
	digests := newDigestCache()
	cfg.Broker.CountFindings(digests.countFindings)
	if err := cfg.setLimits(); err != nil {
		return nil, err
	}
	if err := ingestDefaults(&cfg); err != nil {
		return nil, err
	}
	token, err := tokenFor(cfg.Token, hosts.needsToken)
	if err != nil {
		return nil, err
	}

	s := &Server{
		cfg:    cfg,
		log:    cfg.Logger,
		broker: cfg.Broker,
		flows:  cfg.Flows,
		models: models,
		token:  token,
		feeds:  feeds{window: liveWindow, prices: cfg.Prices, linger: feedLinger, digests: digests},
	}
	s.pongWait = pongWait
	runsCtx, endRuns := context.WithCancelCause(context.Background())
	// The cause tells a run held at a breakpoint that Baton stopped, not a person: it ends
	// interrupted (see agents.ErrStopped).
	s.runsCtx, s.endRuns = runsCtx, func() { endRuns(agents.ErrStopped) }
	s.goingAway, s.goAway = context.WithCancel(context.Background())
	s.cutSockets, s.cut = context.WithCancel(context.Background())
	s.hosts.Store(hosts)
	s.runs = newRunManager(s.runsCtx, runManagerConfig{
		broker:     cfg.Broker,
		maxRunning: cfg.MaxRunning,
		streaming:  cfg.Streaming,
		log:        cfg.Logger,
		export:     cfg.Export,
	})
	s.ingest = newIngestion(s.runsCtx, cfg.Broker, cfg)
	s.echo = s.routes()
	return s, nil
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
		bodyLimit(s.bodyLimitFor, s.cfg.BodyTimeout),
		s.forwardActions,
	)
	s.pageRoutes(e)
	s.flowRoutes(e)
	s.runRoutes(e)
	s.eventRoutes(e)
	s.liveRoutes(e)
	s.typingRoutes(e)
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

// Listen opens the listener Serve takes, on Config.Addr. When its port is 0, the port the system
// chose becomes the server's: in URL and in the Host check.
func (s *Server) Listen(ctx context.Context) (net.Listener, error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", s.cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", s.cfg.Addr, err)
	}
	if err := s.adopt(ln); err != nil {
		ln.Close()
		return nil, err
	}
	return ln, nil
}

// adopt makes ln's port the server's when Config.Addr has port 0.
func (s *Server) adopt(ln net.Listener) error {
	hosts, err := s.hosts.Load().withListener(ln.Addr())
	if err != nil {
		return err
	}
	s.hosts.Store(hosts)
	return nil
}

// Start listens on Config.Addr and serves until ctx ends, then shuts down gracefully (see
// Shutdown). It returns nil after a clean shutdown, slow clients cut included. A Server serves
// once: after Start or Serve returns, it is shut down.
func (s *Server) Start(ctx context.Context) error {
	ln, err := s.Listen(ctx)
	if err != nil {
		return err
	}
	return s.Serve(ctx, ln)
}

// Serve is Start on a listener the caller opened; Serve closes it. When Config.Addr has port 0,
// the listener's port is the one allowed in Host headers and URL. It serves at most
// Config.MaxConns connections at once.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	if err := s.adopt(ln); err != nil {
		ln.Close()
		return err
	}
	hs := s.httpServer()
	served := make(chan error, 1)
	go func() { served <- hs.Serve(netutil.LimitListener(ln, s.cfg.MaxConns)) }()
	s.log.Info("baton is serving", "url", s.hosts.Load().url("")) // the token stays out of logs

	var err error
	select {
	case err = <-served:
		err = fmt.Errorf("serve: %w", err) // failed on its own; still stop the runs it started
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownGrace)
	defer cancel()
	// Both at once: the listener closes at once while runs and websockets wind down.
	httpDone := make(chan error, 1)
	go func() { httpDone <- s.shutdownHTTP(sctx, hs) }()
	err = errors.Join(err, s.Shutdown(sctx), <-httpDone)
	if err == nil {
		if serr := <-served; !errors.Is(serr, http.ErrServerClosed) {
			err = fmt.Errorf("serve: %w", serr)
		}
	}
	return err
}

// Shutdown stops the server in an order that leaves no page behind: later websockets and runs
// are refused; running runs, and the runs apps stream in, are canceled and each records its
// run.finished; viewers get their run's last events and a normal close (runs added to the broker
// by others and still going on get 1001, going away, with where to resume); when ctx ends,
// websockets still open (viewers too slow to take their last events) are cut. It returns nil
// then, and an error only when a run did not end once canceled. Safe to call more than once;
// Start calls it when its context ends.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.shutting = true
	s.mu.Unlock()

	s.endRuns()
	var errRuns error
	select {
	case <-waited(s.runs.wait, s.ingest.wait, s.feeds.waitWarm):
	case <-ctx.Done():
		errRuns = fmt.Errorf("runs did not end once canceled: %w", ctx.Err())
	}
	s.goAway()
	closed := waited(s.sockets.Wait)
	select {
	case <-closed:
	case <-ctx.Done():
		s.cut()
		<-closed // a cut socket's writer fails at once, and its handler returns
	}
	if errRuns != nil {
		return fmt.Errorf("shut down: %w", errRuns)
	}
	return nil
}

// waited returns a channel that closes once each of waits has returned, in turn, for waits that
// also watch a context.
func waited(waits ...func()) <-chan struct{} {
	ch := make(chan struct{})
	go func() {
		for _, wait := range waits {
			wait()
		}
		close(ch)
	}()
	return ch
}
