// Package otlp sends Baton's runs to an OpenTelemetry collector (Jaeger, Tempo, Langfuse, Phoenix
// and the like) over OTLP/HTTP, as spans that follow the OpenTelemetry GenAI semantic
// conventions: the run and each agent visit an invoke_agent span, each model call a chat span,
// each tool call, transfers included, an execute_tool span. docs/otlp.md has the whole mapping.
//
//	exp, err := otlp.New(otlp.Config{Endpoint: "http://localhost:4318"})
//	exp.Watch(rec) // for each run, as it starts; exp.Shutdown(ctx) before exiting
//
// Exporting never blocks or fails a run: a watcher reads the run's events like any subscriber,
// the spans carry the events' recorded times, and the SDK's batch span processor sends them in
// the background, dropping them when the collector cannot keep up.
package otlp

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"log/slog"
	"math/rand/v2"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/baton-dev/baton/traces"
)

// DefaultBatchTimeout is how long finished spans wait to be sent together by default.
const DefaultBatchTimeout = time.Second

// Config configures an Exporter.
type Config struct {
	// Endpoint is the collector's OTLP/HTTP address: a base URL such as http://localhost:4318,
	// to which /v1/traces is added, or the full URL of the traces route when it has a path.
	// Headers (an API key, say) come from OTEL_EXPORTER_OTLP_HEADERS, as in every OTLP exporter.
	Endpoint string
	// Content adds what messages, tools and the session said (prompts, replies, tool arguments
	// and results, session values): off by default, since it may hold user data.
	Content bool
	// Logger is told once when exporting starts failing, and when it works again; slog.Default()
	// when nil.
	Logger *slog.Logger
	// BatchTimeout is how long finished spans wait to be sent together; DefaultBatchTimeout when 0.
	BatchTimeout time.Duration
}

// Exporter turns runs into spans and sends them. Create it with New; it is safe for concurrent
// use.
type Exporter struct {
	content  bool
	provider *sdktrace.TracerProvider
	tracer   trace.Tracer

	wg     sync.WaitGroup // one per watched run
	mu     sync.Mutex
	closed bool // set by Shutdown: no more watches; guarded by mu
}

// New returns an exporter that sends to cfg.Endpoint. It connects to nothing yet; it fails with a
// traces.CodeInvalid error when the endpoint is not an http or https URL.
func New(cfg Config) (*Exporter, error) {
	endpoint, err := tracesURL(cfg.Endpoint)
	if err != nil {
		return nil, err
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.BatchTimeout <= 0 {
		cfg.BatchTimeout = DefaultBatchTimeout
	}
	client, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpointURL(endpoint))
	if err != nil {
		return nil, traces.Errorf(traces.CodeInvalid, "OTLP endpoint %q: %v", cfg.Endpoint, err)
	}
	res, err := resource.New(context.Background(),
		resource.WithTelemetrySDK(),
		resource.WithAttributes(attribute.String("service.name", "baton")),
		resource.WithFromEnv(), // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win
	)
	if err != nil {
		return nil, traces.Errorf(traces.CodeInvalid, "OTEL_RESOURCE_ATTRIBUTES or OTEL_SERVICE_NAME: %v; give key=value pairs separated by commas", err)
	}
	provider := sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(&reported{SpanExporter: client, log: cfg.Logger, endpoint: endpoint},
			sdktrace.WithBatchTimeout(cfg.BatchTimeout)),
		sdktrace.WithResource(res),
		sdktrace.WithIDGenerator(runIDs{}),
	)
	return &Exporter{
		content:  cfg.Content,
		provider: provider,
		tracer:   provider.Tracer("github.com/baton-dev/baton/internal/otlp"),
	}, nil
}

// tracesURL checks a collector's address and returns the URL of its traces route.
func tracesURL(endpoint string) (string, error) {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", traces.Errorf(traces.CodeInvalid,
			"OTLP endpoint %q is not an http:// or https:// URL; give the collector's OTLP/HTTP address, such as http://localhost:4318", endpoint)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/v1/traces"
	}
	return u.String(), nil
}

// Watch exports the run recorded in rec, in the background, as it is recorded: from its start,
// or, when it was resumed after an interrupt, from that resumption on (the part before was
// exported when it ran). Call it when the run starts or resumes; it returns at once. Watching
// ends when the run does; after Shutdown, Watch does nothing.
func (x *Exporter) Watch(rec *traces.Recording) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return
	}
	snap := rec.Snapshot()
	// Subscribed now, not in the goroutine: a run that ends and is resumed before the goroutine
	// runs must not be read past its end.
	sub := rec.Subscribe(resumedAfter(snap))
	x.wg.Add(1)
	go func() {
		defer x.wg.Done()
		x.follow(sub, newRunSpans(x.tracer, x.content, snap.Run, snap.Agents))
	}()
}

// follow turns the events sub delivers into spans until the run ends. It reads them from the
// recording at its own pace, in batches: the run never waits for it.
func (x *Exporter) follow(sub *traces.Subscription, spans *runSpans) {
	buf := make([]traces.Event, 64)
	for {
		n, err := sub.Read(context.Background(), buf)
		if err != nil { // io.EOF: the run has ended
			return
		}
		for _, e := range buf[:n] {
			spans.add(e)
		}
	}
}

// resumedAfter returns the seq after which the part of tr still to export starts: the run.finished
// that ended its last part when it was resumed, else 0 (the whole run).
func resumedAfter(tr traces.Trace) int64 {
	ev := tr.Events
	if tr.Run.Status == traces.StatusRunning {
		// Resumed but nothing recorded since: the part to export starts after the last run.finished.
		for i := len(ev) - 1; i >= 0; i-- {
			if ev[i].Kind == traces.KindRunFinished {
				return ev[i].Seq
			}
		}
		return 0
	}
	for i := len(ev) - 1; i > 0; i-- {
		if ev[i].Kind == traces.KindResumed && ev[i-1].Kind == traces.KindRunFinished {
			return ev[i-1].Seq
		}
	}
	return 0
}

// Shutdown stops watching, waits for the runs being watched to end, sends every span not sent yet
// and closes the connection. It returns when that is done or ctx ends, whichever comes first; its
// error says what was left undone. Safe to call more than once.
func (x *Exporter) Shutdown(ctx context.Context) error {
	x.mu.Lock()
	x.closed = true
	x.mu.Unlock()
	watched := make(chan struct{})
	go func() {
		x.wg.Wait()
		close(watched)
	}()
	var err error
	select {
	case <-watched:
	case <-ctx.Done():
		err = errors.New("runs still going on were not exported to their end")
	}
	return errors.Join(err, x.provider.Shutdown(ctx))
}

// reported sends spans through the OTLP exporter and logs a failure once, until an export works
// again, rather than on every batch. It never hands an error back to the batch processor, which
// would log it again, on every batch.
type reported struct {
	sdktrace.SpanExporter
	log      *slog.Logger
	endpoint string
	failing  atomic.Bool
}

func (r *reported) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	err := r.SpanExporter.ExportSpans(ctx, spans)
	switch {
	case err != nil && r.failing.CompareAndSwap(false, true):
		r.log.Warn("OpenTelemetry export failed; runs go on, their spans are dropped until it works again",
			"endpoint", r.endpoint, "err", err)
	case err == nil && r.failing.CompareAndSwap(true, false):
		r.log.Info("OpenTelemetry export works again", "endpoint", r.endpoint)
	}
	return nil
}

// runKey carries, in the context a run's span is started with, the run whose trace id to use.
type runKey struct{}

// runIDs gives a run's span the ids runTraceID and runSpanID derive from the run, and every other
// span random ids. So the part of a run resumed later, in this process or another, joins the
// run's trace under its first span.
type runIDs struct{}

func (runIDs) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	if run, ok := ctx.Value(runKey{}).(traces.Run); ok {
		return runTraceID(run), runSpanID(run)
	}
	var tid trace.TraceID
	binary.BigEndian.PutUint64(tid[:8], rand.Uint64())
	binary.BigEndian.PutUint64(tid[8:], rand.Uint64())
	return tid, randomSpanID()
}

func (runIDs) NewSpanID(context.Context, trace.TraceID) trace.SpanID { return randomSpanID() }

func randomSpanID() trace.SpanID {
	var sid trace.SpanID
	for sid == (trace.SpanID{}) {
		binary.BigEndian.PutUint64(sid[:], rand.Uint64())
	}
	return sid
}

// runHash is the SHA-256 of a run's id and start time: run ids are short, so the time keeps two
// servers' runs of the same id apart in one collector.
func runHash(run traces.Run) [32]byte {
	return sha256.Sum256([]byte(run.ID + " " + run.StartedAt.UTC().Format(time.RFC3339Nano)))
}

// runTraceID is the trace id of a run's spans: the first 16 bytes of runHash.
func runTraceID(run traces.Run) trace.TraceID {
	h := runHash(run)
	return trace.TraceID(h[:16])
}

// runSpanID is the span id of a run's span: the next 8 bytes of runHash.
func runSpanID(run traces.Run) trace.SpanID {
	h := runHash(run)
	return trace.SpanID(h[16:24])
}
