package agents_test

import (
	"context"
	"testing"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/callbacks"
	"github.com/cloudwego/eino/schema"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/agents/agentstest"
	"github.com/baton-dev/baton/traces"
)

// discard is a sink that only counts: the benchmarks measure the recorder, not a Recording.
type discard struct{ n int }

func (d *discard) Emit(e traces.Event) traces.Event { d.n++; return e }

const longTicks = 1000

// drainLong runs agentstest.Long(longTicks) once, recorded into sink when it is not nil, and returns
// how many events the recorder emitted.
func drainLong(b *testing.B, flow agents.Flow, sink *discard, opts ...adk.AgentRunOption) {
	b.Helper()
	ctx := context.Background()
	root, err := flow.Build(ctx, flow.ScriptedModels(nil))
	if err != nil {
		b.Fatal(err)
	}
	runner := adk.NewRunner(ctx, adk.RunnerConfig{Agent: root})
	msgs := []adk.Message{schema.UserMessage(flow.DefaultInput)}
	var events *adk.AsyncIterator[*adk.AgentEvent]
	if sink == nil {
		events = runner.Run(ctx, msgs, opts...)
	} else {
		events = agents.NewRecorder(sink, flow.Agents).Run(ctx, runner, flow.Name, msgs)
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

// BenchmarkLongRun compares a long scripted run (thousands of events, zero pace) with and without
// the recorder. The recorded case reports the recorder's cost per recorded event; compare the two
// ns/op for the overhead ratio (see the README's benchmark section).
func BenchmarkLongRun(b *testing.B) {
	flow := agentstest.Long(longTicks)
	b.Run("unrecorded", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			drainLong(b, flow, nil)
		}
	})
	// eino's own cost of calling a handler at every component, which any observer pays.
	b.Run("noop-callbacks", func(b *testing.B) {
		b.ReportAllocs()
		noop := callbacks.NewHandlerBuilder().
			OnStartFn(func(ctx context.Context, _ *callbacks.RunInfo, _ callbacks.CallbackInput) context.Context { return ctx }).
			OnEndFn(func(ctx context.Context, _ *callbacks.RunInfo, _ callbacks.CallbackOutput) context.Context {
				return ctx
			}).
			Build()
		for b.Loop() {
			drainLong(b, flow, nil, adk.WithCallbacks(noop))
		}
	})
	b.Run("recorded", func(b *testing.B) {
		b.ReportAllocs()
		var sink discard
		for b.Loop() {
			drainLong(b, flow, &sink)
		}
		b.ReportMetric(float64(sink.n)/float64(b.N), "events/run")
	})
}
