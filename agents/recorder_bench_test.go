package agents_test

import (
	"context"
	"crypto/rand"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/callbacks"
	"github.com/cloudwego/eino/schema"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/internal/agentstest"
	"github.com/baton-dev/baton/internal/live"
	"github.com/baton-dev/baton/internal/record"
	"github.com/baton-dev/baton/internal/sqlite"
	"github.com/baton-dev/baton/traces"
)

// Baton's benchmarks, all in one command (see docs/performance.md):
//
//	go test ./agents -run '^$' -bench 'BenchmarkRecorder|BenchmarkTraceFile' -benchtime 5x
//
// Each runs what it compares interleaved in one process, so that the machine's load hits every
// variant alike, and reports each ratio's min, median and max over the rounds.

const longTicks = 1000

// drainLong runs flow once at pace and reads its events to the end: recorded into rec when it is
// not nil, else with opts (eino callbacks, say).
func drainLong(b *testing.B, flow agents.Flow, pace *agents.Pace, rec *traces.Recording, opts ...adk.AgentRunOption) {
	b.Helper()
	drainRun(b, flow, pace, false, rec, opts...)
}

// drainRun is drainLong, its Runner streaming when streaming is set.
func drainRun(b *testing.B, flow agents.Flow, pace *agents.Pace, streaming bool, rec *traces.Recording, opts ...adk.AgentRunOption) {
	b.Helper()
	ctx := context.Background()
	root, err := flow.Build(ctx, flow.ScriptedModels(pace))
	if err != nil {
		b.Fatal(err)
	}
	runner := adk.NewRunner(ctx, adk.RunnerConfig{Agent: root, EnableStreaming: streaming})
	msgs := []adk.Message{schema.UserMessage(flow.DefaultInput)}
	var events *adk.AsyncIterator[*adk.AgentEvent]
	if rec == nil {
		events = runner.Run(ctx, msgs, opts...)
	} else {
		events = record.NewRecorder(rec, flow.Name, flow.Agents).Run(ctx, runner, msgs)
	}
	for {
		ev, ok := events.Next()
		if !ok {
			break
		}
		if ev.Err != nil {
			b.Fatal(ev.Err)
		}
	}
	if rec != nil {
		<-rec.Done()
	}
}

// BenchmarkRecorder runs a long scripted run (thousands of events) five ways in turn: plain, with
// a callback handler that does nothing (eino's own cost of calling any observer), with a tracing
// handler that makes a span per callback as an OpenTelemetry SDK does, and recorded by Baton into
// a live Recording, alone and as the server records it (the broker's reader writing its events to
// a SQLite store in a temporary directory beside the run). It reports Baton's own cost per
// recorded event (time and allocations over the no-op handler; "stored-" for the served run, its
// CPU time and allocations counted up to the store's last write) and the ratios. ns/op is one
// round of all five. At zero pace eino itself costs
// microseconds per event, the worst case for a ratio; models taking 2ms and 20ms a reply, both far
// faster than any LLM, show what the ratio becomes as soon as the model does any work.
func BenchmarkRecorder(b *testing.B) {
	for _, pace := range []time.Duration{0, 2 * time.Millisecond, 20 * time.Millisecond} {
		b.Run("pace="+pace.String(), func(b *testing.B) { benchmarkRecorder(b, agents.NewPace(pace)) })
	}
}

func benchmarkRecorder(b *testing.B, pace *agents.Pace) {
	flow := agentstest.Long(longTicks)
	noop := callbacks.NewHandlerBuilder().
		OnStartFn(func(ctx context.Context, _ *callbacks.RunInfo, _ callbacks.CallbackInput) context.Context { return ctx }).
		OnEndFn(func(ctx context.Context, _ *callbacks.RunInfo, _ callbacks.CallbackOutput) context.Context {
			return ctx
		}).
		Build()
	var spans spanExporter
	peer := spanHandler(&spans)
	var ms runtime.MemStats
	// measure runs f and returns its time, the process's CPU time and its allocations.
	measure := func(f func()) (time.Duration, float64, uint64) {
		runtime.ReadMemStats(&ms)
		before := ms.Mallocs
		start, cpu := time.Now(), cpuTime()
		f()
		elapsed, cpu := time.Since(start), cpuTime()-cpu
		runtime.ReadMemStats(&ms)
		return elapsed, cpu, ms.Mallocs - before
	}
	store, err := sqlite.Open(filepath.Join(b.TempDir(), "baton.db"), -1)
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	var overNoop, cpuOverNoop, allocsOverNoop, overPlain, perPlain, perNoop, perPeer, peerPerNoop []float64
	var storedOverNoop, storedCPUOverNoop, storedAllocsOverNoop []float64
	for b.Loop() {
		plain, _, _ := measure(func() { drainLong(b, flow, pace, nil) })
		observed, observedCPU, observedAllocs := measure(func() { drainLong(b, flow, pace, nil, adk.WithCallbacks(noop)) })
		traced, _, _ := measure(func() { drainLong(b, flow, pace, nil, adk.WithCallbacks(peer)) })
		rec := traces.NewRecording(traces.Run{ID: "r-bench", Flow: flow.Name}, flow.Agents)
		recorded, recordedCPU, recordedAllocs := measure(func() { drainLong(b, flow, pace, rec) })
		// As a served run: its events also written to a store by the broker's reader, which the
		// CPU time and allocations count up to the last write.
		broker := live.NewStoredBroker(0, store, nil)
		stored := traces.NewRecording(traces.Run{ID: traces.NewRunID(), Flow: flow.Name}, flow.Agents)
		if err := broker.Add(stored); err != nil {
			b.Fatal(err)
		}
		var storedRun time.Duration
		_, storedCPU, storedAllocs := measure(func() {
			storedRun, _, _ = measure(func() { drainLong(b, flow, pace, stored) })
			if err := broker.Close(context.Background()); err != nil {
				b.Fatal(err)
			}
		})
		events := float64(len(rec.Snapshot().Events))
		storedOverNoop = append(storedOverNoop, float64(storedRun-observed)/events)
		storedCPUOverNoop = append(storedCPUOverNoop, (storedCPU-observedCPU)*1e9/events)
		storedAllocsOverNoop = append(storedAllocsOverNoop, (float64(storedAllocs)-float64(observedAllocs))/events)
		overNoop = append(overNoop, float64(recorded-observed)/events)
		cpuOverNoop = append(cpuOverNoop, (recordedCPU-observedCPU)*1e9/events)
		allocsOverNoop = append(allocsOverNoop, (float64(recordedAllocs)-float64(observedAllocs))/events)
		overPlain = append(overPlain, float64(recorded-plain)/events)
		perPlain = append(perPlain, float64(recorded)/float64(plain))
		perNoop = append(perNoop, float64(recorded)/float64(observed))
		perPeer = append(perPeer, float64(recorded)/float64(traced))
		peerPerNoop = append(peerPerNoop, float64(traced)/float64(observed))
	}
	reportSpread(b, "ns/event-over-noop", overNoop)
	// The same in the process's CPU time, which other processes' load on the machine moves less.
	reportSpread(b, "cpu-ns/event-over-noop", cpuOverNoop)
	reportSpread(b, "allocs/event-over-noop", allocsOverNoop)
	reportSpread(b, "stored-ns/event-over-noop", storedOverNoop)
	reportSpread(b, "stored-cpu-ns/event-over-noop", storedCPUOverNoop)
	reportSpread(b, "stored-allocs/event-over-noop", storedAllocsOverNoop)
	reportSpread(b, "ns/event-over-plain", overPlain)
	reportSpread(b, "recorded/plain", perPlain)
	reportSpread(b, "recorded/noop", perNoop)
	reportSpread(b, "recorded/otel-peer", perPeer)
	reportSpread(b, "otel-peer/noop", peerPerNoop)
	if spans.n == 0 {
		b.Fatal("the tracing peer recorded no span")
	}
}

// reportSpread reports the min, median and max of values as three metrics named after unit.
func reportSpread(b *testing.B, unit string, values []float64) {
	s := slices.Sorted(slices.Values(values))
	b.ReportMetric(s[0], unit+"-min")
	b.ReportMetric(s[len(s)/2], unit+"-med")
	b.ReportMetric(s[len(s)-1], unit+"-max")
}

// span is what a tracing SDK keeps of one callback: ids, a name, times and attributes.
type span struct {
	traceID    [16]byte
	id, parent [8]byte
	name       string
	start, end time.Time
	attrs      []spanAttr
	err        string
}

type spanAttr struct{ key, value string }

type spanKey struct{}

// spanExporter collects ended spans in batches, as a batch span processor does.
type spanExporter struct {
	mu    sync.Mutex
	batch []*span
	n     int
}

func (x *spanExporter) export(s *span) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.batch = append(x.batch, s); len(x.batch) == 512 {
		x.batch = x.batch[:0] // sent on
	}
	x.n++
}

// spanHandler is the peer: an eino callback handler that starts a span at each callback's start
// (child of the span in the context, with random ids and the component's attributes) and ends
// and exports it at its end or error, as OpenTelemetry tracers for eino do, without serialising
// inputs or outputs.
func spanHandler(x *spanExporter) callbacks.Handler {
	end := func(ctx context.Context, err error) context.Context {
		if s, ok := ctx.Value(spanKey{}).(*span); ok {
			s.end = time.Now()
			if err != nil {
				s.err = err.Error()
			}
			x.export(s)
		}
		return ctx
	}
	return callbacks.NewHandlerBuilder().
		OnStartFn(func(ctx context.Context, info *callbacks.RunInfo, _ callbacks.CallbackInput) context.Context {
			s := &span{name: info.Name, start: time.Now(), attrs: []spanAttr{
				{"eino.component", string(info.Component)}, {"eino.type", info.Type}, {"eino.name", info.Name}}}
			rand.Read(s.id[:])
			if parent, ok := ctx.Value(spanKey{}).(*span); ok {
				s.traceID, s.parent = parent.traceID, parent.id
			} else {
				rand.Read(s.traceID[:])
			}
			return context.WithValue(ctx, spanKey{}, s)
		}).
		OnEndFn(func(ctx context.Context, _ *callbacks.RunInfo, _ callbacks.CallbackOutput) context.Context {
			return end(ctx, nil)
		}).
		OnErrorFn(func(ctx context.Context, _ *callbacks.RunInfo, err error) context.Context { return end(ctx, err) }).
		Build()
}

// cpuTime is the CPU time the process has used, in seconds.
func cpuTime() float64 {
	var u syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &u) != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano()).Seconds()
}
