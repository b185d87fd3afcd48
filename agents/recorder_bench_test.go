package agents_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/callbacks"
	"github.com/cloudwego/eino/schema"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/agents/agentstest"
	"github.com/baton-dev/baton/attach"
	"github.com/baton-dev/baton/traces"
)

// discard is a sink that only counts: the benchmarks measure the recorder, not a Recording.
type discard struct{ n int }

func (d *discard) Emit(e traces.Event) traces.Event { d.n++; return e }
func (d *discard) PutAgent(traces.Agent)            {}
func (d *discard) Finish(traces.Status, string)     {}

const longTicks = 1000

// drainLong runs flow once at pace, recorded into sink when it is not nil.
func drainLong(b *testing.B, flow agents.Flow, pace *agents.Pace, sink *discard, opts ...adk.AgentRunOption) {
	b.Helper()
	ctx := context.Background()
	root, err := flow.Build(ctx, flow.ScriptedModels(pace))
	if err != nil {
		b.Fatal(err)
	}
	runner := adk.NewRunner(ctx, adk.RunnerConfig{Agent: root})
	msgs := []adk.Message{schema.UserMessage(flow.DefaultInput)}
	var events *adk.AsyncIterator[*adk.AgentEvent]
	if sink == nil {
		events = runner.Run(ctx, msgs, opts...)
	} else {
		events = attach.NewRecorder(sink, flow.Name, flow.Agents).Run(ctx, runner, msgs)
	}
	for {
		ev, ok := events.Next()
		if !ok {
			return
		}
		if ev.Err != nil {
			b.Fatal(ev.Err)
		}
	}
}

// BenchmarkRecorder runs a long scripted run (thousands of events) three ways in turn, so machine
// load hits all three alike: plain, with a callback handler that does nothing (eino's own cost of
// calling any observer), and recorded. It reports the recorder's overhead per recorded event and
// the time ratios; ns/op is one round of all three. At zero pace eino itself costs microseconds
// per event, the worst case for a ratio; models taking 2ms and 20ms a reply, both far faster than
// any LLM, show what the ratio becomes as soon as the model does any work.
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
	timed := func(f func()) time.Duration {
		start := time.Now()
		f()
		return time.Since(start)
	}
	var plain, observed, recorded time.Duration
	var sink discard
	var mallocs uint64
	var ms runtime.MemStats
	for b.Loop() {
		plain += timed(func() { drainLong(b, flow, pace, nil) })
		observed += timed(func() { drainLong(b, flow, pace, nil, adk.WithCallbacks(noop)) })
		runtime.ReadMemStats(&ms)
		before := ms.Mallocs
		recorded += timed(func() { drainLong(b, flow, pace, &sink) })
		runtime.ReadMemStats(&ms)
		mallocs += ms.Mallocs - before
	}
	events := float64(sink.n)
	b.ReportMetric(events/float64(b.N), "events/run")
	b.ReportMetric(float64(recorded-observed)/events, "ns/event-over-noop")
	b.ReportMetric(float64(recorded-plain)/events, "ns/event-over-plain")
	b.ReportMetric(float64(recorded)/float64(plain), "recorded/plain")
	b.ReportMetric(float64(recorded)/float64(observed), "recorded/noop")
	b.ReportMetric(float64(mallocs)/events, "allocs/event-recorded-run")
}
