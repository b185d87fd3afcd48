package agents_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/callbacks"
	"github.com/cloudwego/eino/components"
	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/traces"
)

// BenchmarkRecorderFloor sets the recorder beside the least a recorder of eino's callbacks can do
// (capture): in rounds that alternate the three, the 3k run with eino's no-op handler, captured,
// and recorded as an attached app's run is (record.Handler, into a Recording). It reports the
// cost per recorded event of the last two over the no-op handler, CPU and wall time (min / median
// / max over the rounds). Time it on one core, where a core's time is the run's:
//
//	go test -c -o /tmp/agents.test ./agents
//	GOMAXPROCS=1 /tmp/agents.test -test.run '^$' -test.bench BenchmarkRecorderFloor -test.benchtime 100x
func BenchmarkRecorderFloor(b *testing.B) {
	flow := costRuns()[1].flow
	pace, noop := agents.NewPace(0), noopHandler()
	rec := traces.NewRecording(traces.Run{ID: "r-bench", Flow: flow.Name}, flow.Agents)
	drainRun(b, flow, pace, false, rec)
	c := newCapture()
	if drainRun(b, flow, pace, false, nil, adk.WithCallbacks(c)); c.n < 2*longTicks {
		b.Fatalf("capture kept %d records of a run of %d tool calls", c.n, longTicks)
	}
	const reps = 10
	n := float64(len(rec.Snapshot().Events) * reps)
	var floorCPU, floorWall, attachedCPU, attachedWall []float64
	for i := 0; b.Loop(); i++ {
		var took [3]runCost // no-op, captured, attached
		runs := [3]func(){
			func() { drainRun(b, flow, pace, false, nil, adk.WithCallbacks(noop)) },
			func() { drainRun(b, flow, pace, false, nil, adk.WithCallbacks(newCapture())) },
			func() { drainAttached(b, flow, false) },
		}
		for k := range 3 {
			j := (i + k) % 3
			took[j] = measureRuns(reps, runs[j])
		}
		floorCPU = append(floorCPU, (took[1].cpu-took[0].cpu)*1e9/n)
		floorWall = append(floorWall, float64(took[1].wall-took[0].wall)/n)
		attachedCPU = append(attachedCPU, (took[2].cpu-took[0].cpu)*1e9/n)
		attachedWall = append(attachedWall, float64(took[2].wall-took[0].wall)/n)
	}
	reportSpread(b, "floor-cpu-ns/event", floorCPU)
	reportSpread(b, "floor-ns/event", floorWall)
	reportSpread(b, "attached-cpu-ns/event", attachedCPU)
	reportSpread(b, "attached-ns/event", attachedWall)
	runtime.KeepAlive(rec)
}

// capture is the least a recorder of eino's callbacks does: it keeps, in order, a record of each
// agent's, model call's and tool call's start and end, with the time, a tool call's id, arguments
// and result, a model call's input and reply, and links each end to its start through the
// context the start returns. It keeps what eino hands it by reference: nothing is copied,
// converted or encoded, no session is read, and nothing follows the agents' events.
type capture struct {
	unasked
	base time.Time // read as a monotonic clock, half a time.Now
	recs []captured
	n    int // records kept
}

func newCapture() *capture { return &capture{base: time.Now()} }

type captured struct {
	at      time.Duration
	kind    uint8
	start   int // an end's start, by its index in its chunk
	id, str string
	ref     any
}

// captureCall is the context a start returns, for its end.
type captureCall struct {
	context.Context
	at int
}

type captureKey struct{}

func (c *captureCall) Value(key any) any {
	if _, ok := key.(captureKey); ok {
		return c
	}
	return c.Context.Value(key)
}

func (h *capture) Needed(_ context.Context, info *callbacks.RunInfo, timing callbacks.CallbackTiming) bool {
	if info == nil {
		return false
	}
	switch info.Component {
	case components.ComponentOfChatModel, components.ComponentOfTool, adk.ComponentOfAgent:
		return timing == callbacks.TimingOnStart || timing == callbacks.TimingOnEnd
	}
	return false
}

// add keeps r and returns its index, in chunks: a chunk filled is kept by what would encode it.
func (h *capture) add(r captured) int {
	if len(h.recs) == cap(h.recs) {
		h.recs = make([]captured, 0, 1024)
	}
	h.recs = append(h.recs, r)
	h.n++
	return len(h.recs) - 1
}

func (h *capture) OnStart(ctx context.Context, info *callbacks.RunInfo, in callbacks.CallbackInput) context.Context {
	r := captured{at: time.Since(h.base), kind: 1}
	switch info.Component {
	case components.ComponentOfTool:
		r.id = compose.GetToolCallID(ctx)
		if ti := tool.ConvCallbackInput(in); ti != nil {
			r.str = ti.ArgumentsInJSON
		}
	case components.ComponentOfChatModel:
		if mi := model.ConvCallbackInput(in); mi != nil {
			r.ref = mi.Messages
		}
	}
	return &captureCall{Context: ctx, at: h.add(r)}
}

func (h *capture) OnEnd(ctx context.Context, info *callbacks.RunInfo, out callbacks.CallbackOutput) context.Context {
	c, _ := ctx.Value(captureKey{}).(*captureCall)
	if c == nil {
		return ctx
	}
	r := captured{at: time.Since(h.base), kind: 2, start: c.at}
	switch info.Component {
	case components.ComponentOfTool:
		if o := tool.ConvCallbackOutput(out); o != nil {
			r.str = o.Response
		}
	case components.ComponentOfChatModel:
		if o := model.ConvCallbackOutput(out); o != nil {
			r.ref = o.Message
		}
	}
	h.add(r)
	return ctx
}

func (*capture) OnEndWithStreamOutput(ctx context.Context, _ *callbacks.RunInfo, out *schema.StreamReader[callbacks.CallbackOutput]) context.Context {
	out.Close()
	return ctx
}
