package record

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/compose"

	"github.com/baton-dev/baton/traces"
)

// causeWait bounds how long an agent's start waits for what caused it to be recorded: the
// transfer that brought control to it, and the end of the agent that transferred (normally
// microseconds: both already happened in eino).
const causeWait = 5 * time.Second

// Recorder records one eino ADK run as trace events while it goes on, without changing it.
//
// Everything comes from eino callbacks. Model, tool and agent callbacks fire synchronously where
// the work happens, so they are recorded as it happens and, for sequential flows, always in the
// same order. The copy of an agent's own events that eino hands to its end callback supplies
// what no callback reports (deterministic transfers, exits, interrupts, loop breaks, errors,
// messages of agents without a model, or of their own); its echoes of what callbacks already
// recorded (each model reply and tool result) are counted off per visit.
//
// A Recorder records a single run and finishes its sink when the run ends.
type Recorder struct {
	flow  string
	tree  *tree
	ended chan struct{} // closed once the run is finished

	// mu guards the pieces below, each with its own concern; a callback takes it and routes
	// what it reports to them.
	mu        sync.Mutex
	run       runState
	visits    visits
	calls     calls
	transfers transfers
	session   session
	out       delivery     // the way to the sink
	streams   inflight     // streamed outputs being read
	drains    inflight     // copies of events being read
	readers   chan reading // streamed outputs to read, to an idle reader (see readStreamed)

	toolCalls toolCallSlabs     // the calls of tool callbacks (see newCall)
	reads     slabs[streamRead] // the reads of streamed outputs (see OnEndWithStreamOutput)

	debug *Debugger // holds the run at breakpoints; nil for none (set before Run)
	stops []Stop    // moments recorded that a breakpoint may hold the run at (see holdQueued)
}

// NewRecorder returns a recorder writing to sink. declared is the agent tree of the run when the
// app declares it; agents the run shows are added to it (nothing needs declaring). flow names
// the run in run.started ("" names it after the root agent).
func NewRecorder(sink Sink, flow string, declared []traces.Agent) *Recorder {
	r := &Recorder{
		flow:      flow,
		tree:      newTree(declared),
		ended:     make(chan struct{}),
		readers:   make(chan reading),
		run:       runState{streamDone: true},
		calls:     newCalls(),
		transfers: newTransfers(),
		session:   newSession(),
		out:       newDelivery(sink),
	}
	if d, ok := sink.(interface{ debugger() *Debugger }); ok {
		r.debug = d.debugger() // armed only once the app opts in and Baton sets breakpoints
	}
	for _, a := range declared {
		sink.PutAgent(a)
	}
	return r
}

// Run starts runner on messages with the recorder's callbacks added to opts and returns an
// iterator over the same events runner.Run would yield, in the same order, each as soon as eino
// sends it. Recording ends when the run has ended and the iterator is exhausted; Done is closed
// then and Outcome tells how the run ended.
func (r *Recorder) Run(ctx context.Context, runner *adk.Runner, messages []adk.Message, opts ...adk.AgentRunOption) *adk.AsyncIterator[*adk.AgentEvent] {
	r.mu.Lock()
	r.run.streamDone = false
	r.mu.Unlock()
	return r.relay(ctx, runner.Run(ctx, messages, append(opts, adk.WithCallbacks(fixedHub(r)))...))
}

// Resume is Run for runner.ResumeWithParams: it resumes the run saved under checkPointID and
// records the rest of it, which starts with a resumed event (give it the sink of the interrupted
// run, reopened, to continue that trace). An error from eino (no such checkpoint, a resume eino
// refuses) is returned as it is, and nothing is recorded.
func (r *Recorder) Resume(ctx context.Context, runner *adk.Runner, checkPointID string, params *adk.ResumeParams, opts ...adk.AgentRunOption) (*adk.AsyncIterator[*adk.AgentEvent], error) {
	events, err := runner.ResumeWithParams(ctx, checkPointID, params, append(opts, adk.WithCallbacks(fixedHub(r)))...)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.run.streamDone = false
	r.mu.Unlock()
	return r.relay(ctx, events), nil
}

// relay hands on events as they come, records what only the Runner's stream carries, and
// finishes the recording once they have ended.
func (r *Recorder) relay(ctx context.Context, events *adk.AsyncIterator[*adk.AgentEvent]) *adk.AsyncIterator[*adk.AgentEvent] {
	out, gen := adk.NewAsyncIteratorPair[*adk.AgentEvent]()
	go func() {
		defer gen.Close()
		for {
			ev, ok := events.Next()
			if !ok {
				break
			}
			gen.Send(ev)
			if ev.Err != nil && ev.AgentName == "" {
				// Only the Runner's stream carries the errors of no agent (a transfer to an agent
				// eino cannot find, a panic in eino's own goroutine).
				r.unattributedError(ev.Err)
			}
		}
		r.mu.Lock()
		r.run.streamDone = true
		r.transfers.wakeRefusals()
		r.mu.Unlock()
		if !r.hasStarted() {
			r.start(ctx, "", nil) // the run failed before any agent started
		}
		r.maybeFinish()
	}()
	return out
}

// Done is closed once the run is recorded to its end.
func (r *Recorder) Done() <-chan struct{} { return r.ended }

// Outcome returns the run's final status and error message; meaningful once Done is closed.
func (r *Recorder) Outcome() (traces.Status, string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.run.outcome()
}

func (r *Recorder) hasStarted() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.run.started
}

// start emits run.started (or resumed, when the root resumes an interrupted run) once.
func (r *Recorder) start(ctx context.Context, rootAgent string, in *adk.AgentCallbackInput) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.run.started {
		return
	}
	r.run.started = true
	r.run.ctx = ctx
	if in != nil && in.ResumeInfo != nil {
		r.resumes(ctx, rootAgent, in.ResumeInfo)
		return
	}
	flow := r.flow
	if flow == "" {
		flow = rootAgent
	}
	input := ""
	if in != nil && in.Input != nil && len(in.Input.Messages) > 0 {
		if last := in.Input.Messages[len(in.Input.Messages)-1]; last != nil {
			input = last.Content
		}
	}
	r.out.emit(&traces.Event{Kind: traces.KindRunStarted, Run: &traces.RunMark{Flow: flow, Input: input, Status: traces.StatusRunning}})
}

// fail records an error event and remembers it as the run's failure. Callers hold r.mu.
func (r *Recorder) fail(agent string, path []string, msg string) {
	r.run.failure = msg
	r.out.emit(ptr(failure(agent, path, msg)))
}

// failure is the error event of a failure of agent.
func failure(agent string, path []string, msg string) traces.Event {
	return traces.Event{Kind: traces.KindError, Agent: agent, RunPath: path, Error: &traces.ErrorDetail{Message: msg}}
}

// maybeFinish finishes the run once the root visit's events are all in and the Runner's stream,
// when someone reads it through Run, has ended.
func (r *Recorder) maybeFinish() {
	r.mu.Lock()
	ready := r.run.streamDone && r.visits.rootDrained()
	r.mu.Unlock()
	if ready {
		r.finish()
	}
}

// finish closes what the run left open, records how it ended and finishes the sink. Only the
// first call has an effect.
func (r *Recorder) finish() {
	r.drains.wait()
	r.streams.wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.run.status != "" {
		return
	}
	r.out.decideAll(nil)
	r.abandonTools(nil, toolLeftOpen) // none stays open forever
	for _, v := range r.visits.order {
		r.refuse(v)
	}
	r.failUnexplained()
	for _, v := range r.visits.order {
		r.commit(v)
		v.runnableEnded, v.ownDone = true, true
		r.finishVisit(v)
	}
	r.diffSession(r.session.ctx, nil, false)
	status, msg := r.run.outcome()
	r.run.status = status
	r.out.finish(status, msg)
	close(r.ended)
}

// interruptOf returns the interrupt info stands for: its root cause, or what little info says.
func interruptOf(info *adk.InterruptInfo) *traces.Interrupt {
	out := &traces.Interrupt{}
	if info == nil {
		return out
	}
	if c := rootCause(info); c != nil {
		out.ID, out.Address, out.Info = c.ID, c.Address.String(), infoText(c.Info)
		return out
	}
	if _, ok := info.Data.(*adk.ChatModelAgentInterruptInfo); !ok && info.Data != nil {
		out.Info = infoText(info.Data)
	}
	return out
}

// rootCause returns the root cause of the interrupt info stands for, or nil. An interrupted
// event carries it in its contexts; a resumed agent may be handed it only inside its own state:
// a chat model agent's, or a workflow agent's, which nests the info of the sub-agent that
// interrupted (how a sequential, loop or parallel root is resumed).
func rootCause(info *adk.InterruptInfo) *adk.InterruptCtx {
	if info == nil {
		return nil
	}
	contexts := info.InterruptContexts
	if cm, ok := info.Data.(*adk.ChatModelAgentInterruptInfo); len(contexts) == 0 && ok && cm.Info != nil {
		contexts = cm.Info.InterruptContexts
	}
	for _, c := range contexts {
		if c != nil && c.IsRootCause {
			return c
		}
	}
	wf, ok := info.Data.(*adk.WorkflowInterruptInfo)
	if !ok || wf == nil {
		return nil
	}
	if c := rootCause(wf.SequentialInterruptInfo); c != nil {
		return c
	}
	for _, i := range slices.Sorted(maps.Keys(wf.ParallelInterruptInfo)) {
		if c := rootCause(wf.ParallelInterruptInfo[i]); c != nil {
			return c
		}
	}
	return nil
}

// interruptFromError returns the interrupt a runnable's error carries, as the events that follow
// it will say (the root cause, its address in agents and tools), or nil.
func interruptFromError(err error) *traces.Interrupt {
	info, ok := compose.ExtractInterruptInfo(err)
	if !ok || info == nil {
		return nil
	}
	for _, c := range info.InterruptContexts {
		if c == nil || !c.IsRootCause {
			continue
		}
		var addr adk.Address
		for _, seg := range c.Address {
			if seg.Type == adk.AddressSegmentAgent || seg.Type == adk.AddressSegmentTool {
				addr = append(addr, seg)
			}
		}
		return &traces.Interrupt{ID: c.ID, Address: addr.String(), Info: infoText(c.Info)}
	}
	return nil
}

// infoText renders what an interrupt carries for a person: a string as it is, a Stringer
// through String, anything else as JSON (never a Go struct dump with pointers).
func infoText(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case fmt.Stringer:
		return v.String()
	}
	return jsonValue(v)
}

// jsonValue renders a value as JSON, falling back to its printed form. Markup stays as written
// (no \u003c): the value is data, and every view escapes it when it shows it.
// Encoders are kept between calls, so that a value costs its encoding and its string only.
func jsonValue(v any) string {
	je := jsonEncoders.Get().(*jsonEncoder)
	defer func() {
		if je.buf.Cap() <= 64<<10 { // a rare large value is not worth keeping memory for
			jsonEncoders.Put(je)
		}
	}()
	je.buf.Reset()
	if je.enc.Encode(v) != nil {
		je.buf.Reset()
		je.enc.Encode(fmt.Sprint(v))
	}
	return string(bytes.TrimSuffix(je.buf.Bytes(), []byte("\n")))
}

// jsonEncoder is a JSON encoder that leaves markup as written, with the buffer it writes to.
type jsonEncoder struct {
	buf bytes.Buffer
	enc *json.Encoder
}

var jsonEncoders = sync.Pool{New: func() any {
	je := new(jsonEncoder)
	je.enc = json.NewEncoder(&je.buf)
	je.enc.SetEscapeHTML(false)
	return je
}}

func ptr[T any](v T) *T { return &v }
