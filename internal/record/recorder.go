package record

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"

	"github.com/baton-dev/baton/traces"
)

// Sink receives what a Recorder records, in order, from one goroutine at a time.
// *traces.Recording is the usual sink: it numbers the events and fans them out.
type Sink interface {
	// Emit records an event and returns it as recorded.
	Emit(traces.Event) traces.Event
	// PutAgent adds an agent to the run's tree or replaces the one of the same name.
	PutAgent(traces.Agent)
	// Finish records run.finished with the run's final status; nothing is emitted after it.
	Finish(status traces.Status, errMsg string)
}

// ender is a Sink that can deliver what it holds before the run's end is certain (see
// Recorder.ending).
type ender interface {
	// Ending delivers what was emitted so far, with how the run ends should nothing follow, and
	// returns how to wait until that is delivered: as long as the sink finds worth it, which is
	// never long. The next Emit makes the ending void.
	Ending(e ending) (await func())
	// EmitForeseen records the first event of the ending's tail, as recorded after all, and
	// keeps rest (the ending with the rest of its tail) in one step: nobody sees the event twice
	// or the ending void.
	EmitForeseen(e traces.Event, rest ending) traces.Event
}

// ending is how a run ends should nothing more happen in it: its status and time, and the events
// its end would record then (the agent.finished of every visit still open, innermost first).
type ending struct {
	Status traces.Status
	Error  string
	Time   time.Time
	Tail   []traces.Event
}

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
	sink  Sink
	flow  string
	tree  *tree
	ended chan struct{} // closed once the run is finished

	mu          sync.Mutex
	started     bool
	root        *visit
	order       []*visit // visits in start order
	models      int      // model calls so far, for their ids
	toolCalls   int      // tool calls so far, for their order
	openTools   map[string]openTool
	agentTools  map[string]agentToolCall   // open AgentTool calls by call id
	transfers   map[string][]*heldTransfer // agent -> transfers to it its start has not claimed yet
	transferCh  chan struct{}              // closed and replaced whenever a transfer is held
	held        int                        // transfers not recorded yet, claimed or not
	einoErrs    []einoError                // eino's errors of no agent, to explain refusals
	errsChanged chan struct{}              // closed and replaced when one comes or a source ends
	session     session
	sessionCtx  context.Context // a context that carries the run's session
	runCtx      context.Context // the root agent's context: its Err tells a cancel
	lastAgent   string
	lastPath    []string
	// stamp is the time of the callback being recorded, which the events it records carry: one
	// clock read per callback rather than one per event (a clock read costs about 0.1 µs).
	stamp       time.Time
	failure     string
	interrupt   bool
	interrupts  []string // the root-cause ids of the interrupts recorded
	status      traces.Status
	promised    *ending       // the ending the sink holds, if any (see ending)
	streamDone  bool          // the Runner's stream has ended, or nobody reads it
	rootDrained bool          // the root visit's copy of events has ended: so has the run
	parked      []*parkedCall // AgentTool calls not decided yet, and what waits behind them (see park)
	streams     inflight      // streamed outputs being read
	drains      inflight      // copies of events being read
}

// visit is one activation of one agent: created at the agent's start callback and carried in the
// context of everything it runs, so every loop iteration and every re-entry is a visit of its own.
type visit struct {
	rec   *Recorder
	agent string
	kind  string // eino's agent type: ChatModel, Sequential, Supervisor...
	chat  bool   // its work is a chat model agent's (its own, or the one it folded)
	// path is eino's run path of the visit's events on the Runner's stream, carried by every event
	// recorded for it. Its own copy of events carries local, the same path without the callers'
	// prefix when it runs inside an AgentTool; and, when it folds an agent of its own name started
	// directly inside it, outer, the wrapper's path (the wrapper's own events, a deterministic
	// transfer out of a wrapped team, carry it).
	path         []string
	local, outer string
	addr         string // its execution address's agent path, collapsed: what an agent inside it extends
	boundary     string // the innermost AgentTool call it runs inside, if any
	via          string
	parent       *visit // the visit it runs inside: the AgentTool caller or the workflow
	iteration    int    // its loop's iteration, from 1, when a loop runs it
	// Until something happens inside the visit, its start is not recorded: an agent of its own
	// name started directly inside it (the prebuilt supervisor's container, a deterministic
	// wrapper around a team) still changes its path and input. started says it is recorded.
	started  bool
	resumed  bool
	fedInput []traces.Message      // the history eino fed it, for agent.started
	enter    *traces.AgentToolCall // the agenttool.entered to record with the start, if any
	startCtx context.Context       // the start's context, to read the session from
	// runnable says the agent runs a compose runnable whose end is the end of its own work;
	// ownDone that its copy of events delivered its last own event. A visit that holds a team
	// (a deterministic transfer around a multi-agent, folded with the team's first agent) ends its
	// first agent's work at teamDone, and its own events only with the wrapper's, after the team.
	runnable, runnableEnded, ownDone bool
	holds, teamDone                  bool
	// workDone is closed when its first agent's work is over (all of it, unless it holds a team);
	// settled when, besides, its own events and the visits it ran are; finished when its end is
	// recorded, which waits for its transfers' outcomes (held counts them).
	workDone, settled        chan struct{}
	workSignal, settleSignal bool
	held                     int
	interrupted              bool
	errMsg                   string
	// pendingInterrupt and pendingError are what the end of its work said (an interrupt, an
	// error) and its events have not said yet: they will, after that end (see foresee).
	pendingInterrupt *traces.Interrupt
	pendingError     bool
	closed           bool          // agent.finished is recorded
	finished         chan struct{} // closed with it
	// eventsOver says its own events have all been read; until then heldSets holds what its
	// runnable set (see noticeSession).
	eventsOver bool
	heldSets   []sessionSet
	// unechoed are its model replies recorded from callbacks whose echo its copy of events has not
	// carried yet; toolResults its tool results so recorded, echoedTool how many were echoed.
	unechoed                []*traces.Message
	toolResults, echoedTool int
	caughtUp                chan struct{} // closed when the echoes due are recorded (see echoesDue)
	observed                chan struct{} // closed when an event of its own is recorded (see catchUp)
	lastReply               string        // its latest reply's text: eino stores it under OutputKey
	// calls are its latest reply's tool calls until a tool runs one; handedOff says they were
	// recorded as a host multi-agent's handoffs, handedTo that the visit is a specialist one of
	// them started (see handOff).
	calls               []schema.ToolCall
	handedOff, handedTo bool
	lambda              bool // a specialist run as a lambda: its end is the lambda's, not a model call's
	// lastInput is the visit's latest model input and converted its trace form: the next call's
	// input usually extends it, and then shares its converted messages.
	lastInput []*schema.Message
	converted []traces.Message
	// outputs counts the visit's streamed replies and tool results still being read; closing, its
	// runnable's streamed output, whose end is the end of the agent's work.
	outputs, closing inflight
	// forwarded counts, per callee, the events its copy of events carried from inside its
	// AgentTool calls; echoedCalls is the calls whose result the copy carried before their end was
	// recorded (see inner.go).
	forwarded   map[string]int
	echoedCalls map[string]struct{}
	// ownRuns are the visits its own code ran on runs of their own (see agentStarted).
	ownRuns []*visit
	drained bool       // its copy of events has been read to its end
	session sessionRef // eino's session as its callbacks read it (see sessionOf)
}

// openTool is a tool call in progress.
type openTool struct {
	name, args, callID string
	v                  *visit
	order              int   // start order, to close forgotten calls in order
	call               *call // its callbacks' call: ended once its end is being recorded
}

// agentToolCall is an AgentTool call in progress: what agenttool.entered said, and the callee;
// returned says eino has ended it (its end is being recorded).
type agentToolCall struct {
	traces.AgentToolCall
	callee   *visit
	returned bool
}

// NewRecorder returns a recorder writing to sink. declared is the agent tree of the run when the
// app declares it; agents the run shows are added to it (nothing needs declaring). flow names
// the run in run.started ("" names it after the root agent).
func NewRecorder(sink Sink, flow string, declared []traces.Agent) *Recorder {
	r := &Recorder{
		sink:        sink,
		flow:        flow,
		tree:        newTree(declared),
		ended:       make(chan struct{}),
		openTools:   make(map[string]openTool),
		agentTools:  make(map[string]agentToolCall),
		transfers:   make(map[string][]*heldTransfer),
		transferCh:  make(chan struct{}),
		errsChanged: make(chan struct{}),
		session:     newSession(),
		streamDone:  true,
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
	r.streamDone = false
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
	r.streamDone = false
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
		r.streamDone = true
		r.wakeRefusals()
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
	return r.outcome()
}

// outcome decides the final status. eino reports a cancel as an ordinary error, so a failure
// while the run's context is done is a cancel. (The context alone says nothing: an app may well
// cancel it once the run is over, before the recorder has finished.) Callers hold r.mu.
func (r *Recorder) outcome() (traces.Status, string) {
	switch {
	case r.failure != "" && r.runCtx != nil && r.runCtx.Err() != nil:
		return traces.StatusCanceled, "run canceled"
	case r.interrupt:
		return traces.StatusInterrupted, ""
	case r.failure != "":
		return traces.StatusFailed, r.failure
	}
	return traces.StatusCompleted, ""
}

func (r *Recorder) hasStarted() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.started
}

// start emits run.started (or resumed, when the root resumes an interrupted run) once.
func (r *Recorder) start(ctx context.Context, rootAgent string, in *adk.AgentCallbackInput) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.started {
		return
	}
	r.started = true
	r.runCtx = ctx
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
	r.emit(traces.Event{Kind: traces.KindRunStarted, Run: &traces.RunMark{Flow: flow, Input: input, Status: traces.StatusRunning}})
}

// stampNow reads the clock for the callback being recorded: the events recorded until unstamp
// carry that time (see Recorder.stamp). It is read under r.mu, where the sink stamps the events
// recorded without one, so that times keep the order of the events around them. Callers hold
// r.mu.
func (r *Recorder) stampNow() time.Time {
	now := time.Now()
	r.stamp = now.UTC()
	return now
}

// unstamp ends the recording of a callback: later events are stamped by the sink, when they are
// recorded. Callers hold r.mu.
func (r *Recorder) unstamp() { r.stamp = time.Time{} }

// emit hands e to the sink and remembers who acted last. An event without a time carries the
// callback's being recorded, if any, else the sink stamps it. Callers hold r.mu.
func (r *Recorder) emit(e traces.Event) {
	if e.Agent != "" {
		r.lastAgent, r.lastPath = e.Agent, e.RunPath
	}
	if e.Time.IsZero() {
		e.Time = r.stamp
	}
	if n := len(r.parked); n > 0 {
		if e.Time.IsZero() {
			e.Time = time.Now().UTC() // when it happened, though the sink gets it later
		}
		r.parked[n-1].events = append(r.parked[n-1].events, e)
		return
	}
	r.deliver(e)
}

// fail records an error event and remembers it as the run's failure. Callers hold r.mu.
func (r *Recorder) fail(agent string, path []string, msg string) {
	r.failure = msg
	r.emit(failure(agent, path, msg))
}

// failure is the error event of a failure of agent.
func failure(agent string, path []string, msg string) traces.Event {
	return traces.Event{Kind: traces.KindError, Agent: agent, RunPath: path, Error: &traces.ErrorDetail{Message: msg}}
}

// ending runs in eino's callback for the end of v's work: the last moment before the app can see
// its run end, when v is the run's last agent. The run is finished only once the copies of its
// events are read, after that moment, and an app may exit as soon as it sees its last event. So
// unless v runs as a tool (its caller goes on) or something is known to go on (a transfer, a tool
// or AgentTool call, another agent's work), the sink is told how the run ends should nothing
// follow: its status and the events its end would record. It waits for that to be delivered.
// If the run goes on after all (the next step of a workflow, a deterministic transfer), what
// follows replaces it.
//
// First v's copy of events catches up with what eino sent before this moment, on its way to the
// app: events come within microseconds, and echoWait bounds the wait all the same. A chat model
// agent's events are each the echo of a reply or tool result callbacks recorded, followed by what
// only the copy says (an exit, a loop's break): the wait ends when all are in. A custom agent's
// runnable may send events of its own that no callback announces (plan-execute's planner and
// replanner send the plan, the response and the loop's break): the wait ends once its copy has
// been quiet for quietWait.
func (r *Recorder) ending(v *visit) {
	e, ok := r.sink.(ender)
	if !ok || v.insideTool() {
		return
	}
	v.catchUp()
	r.mu.Lock()
	if !r.mayBeLast(v) {
		r.mu.Unlock()
		return
	}
	end := r.foresee(time.Now().UTC())
	r.promised = &end
	await := e.Ending(end)
	r.mu.Unlock()
	await()
}

// deliver hands e to the sink. While an ending is promised, an event that is the next of its
// tail (the drain of a copy of events recording what the tail foresaw) keeps the rest of it
// promised; any other means the run went on. Callers hold r.mu.
func (r *Recorder) deliver(e traces.Event) {
	p := r.promised
	switch {
	case p == nil:
		r.sink.Emit(e)
	case foreseen(p, e):
		r.sink.(ender).EmitForeseen(e, *p)
	case lateFact(e.Kind):
		r.sink.(ender).EmitForeseen(e, *p) // before the tail, which still stands
	default:
		r.promised = nil
		r.sink.Emit(e)
	}
}

// foreseen reports whether e is in p's tail, and takes it out: the first of it, or any agent's
// end (visits whose copies of events end at once may close in either order). Callers hold r.mu.
func foreseen(p *ending, e traces.Event) bool {
	for i, t := range p.Tail {
		if sameFact(e, t) {
			p.Tail = slices.Delete(slices.Clone(p.Tail), i, i+1)
			return true
		}
		if t.Kind != traces.KindAgentFinished {
			return false
		}
	}
	return false
}

// lateFact reports whether an event of kind, recorded after an ending, may be a fact of the work
// that ended, which the ending could not foresee (an OutputKey eino stores once the agent's
// runnable has returned, what a custom agent sends then): no new work, no change of outcome.
func lateFact(kind traces.Kind) bool {
	switch kind {
	case traces.KindSessionSet, traces.KindMessage, traces.KindExit, traces.KindBreakLoop:
		return true
	}
	return false
}

// sameFact reports whether a and b record the same fact, whenever and wherever in the trace.
func sameFact(a, b traces.Event) bool {
	a.Seq, a.Time, b.Seq, b.Time = 0, time.Time{}, 0, time.Time{}
	return reflect.DeepEqual(a, b)
}

// How long the end of an agent's work waits for its copy of events to catch up (see ending): at
// most echoWait, and for a custom agent until its copy has been quiet for quietWait.
const (
	echoWait  = 200 * time.Millisecond
	quietWait = 2 * time.Millisecond
)

// catchUp waits until v's copy of events has carried what eino sent of v so far (see ending).
func (v *visit) catchUp() {
	r := v.rec
	deadline := time.NewTimer(echoWait)
	defer deadline.Stop()
	r.mu.Lock()
	caughtUp := v.echoesDue()
	r.mu.Unlock()
	select {
	case <-caughtUp:
	case <-deadline.C:
		return
	}
	if v.kind == "ChatModel" {
		return
	}
	quiet := time.NewTimer(quietWait)
	defer quiet.Stop()
	for {
		r.mu.Lock()
		if v.observed == nil {
			v.observed = make(chan struct{})
		}
		observed := v.observed
		r.mu.Unlock()
		select {
		case <-observed:
			quiet.Reset(quietWait)
		case <-quiet.C:
			return
		case <-deadline.C:
			return
		}
	}
}

// insideTool reports whether v runs inside a tool call (an AgentTool's callee, a host
// specialist): its end is never the run's, the caller goes on.
func (v *visit) insideTool() bool {
	for ; v != nil; v = v.parent {
		if v.via == viaAgentTool || v.handedTo {
			return true
		}
	}
	return false
}

// mayBeLast reports whether nothing is known to go on in the run once v's work has ended: no tool
// or AgentTool call is open, no other agent's work runs. (A transfer may be refused: its target
// starts, or the ending foresees the refusal.) Callers hold r.mu.
func (r *Recorder) mayBeLast(v *visit) bool {
	if len(r.openTools) > 0 || len(r.agentTools) > 0 {
		return false
	}
	for _, o := range r.order {
		if o != v && o.runnable && !o.runnableEnded {
			return false
		}
	}
	return true
}

// foresee returns how the run ends should nothing more happen in it, stamped at, without
// recording anything. Its tail is what finish would record then, in finish's order: what is
// parked; each transfer no agent claimed, refused, with the run's failure; what only the events
// of an agent whose work just ended would still say (its error, its interrupt); then
// agent.finished for every visit still open, each once the visits inside it have finished, the
// latest started first. Callers hold r.mu.
func (r *Recorder) foresee(at time.Time) ending {
	end := ending{Time: at}
	end.Status, end.Error = r.outcome()
	add := func(e traces.Event) {
		e.Time = at
		end.Tail = append(end.Tail, e)
	}
	for _, p := range r.parked {
		for i, e := range p.events {
			if i == 0 {
				exited := *e.AgentTool
				exited.InnerEvents = p.v.innerEvents(p.callee)
				e.AgentTool = &exited
			}
			add(e)
		}
	}
	for _, v := range r.order {
		for _, h := range r.heldFrom(v) {
			t := h.t
			msg, by, _ := r.refusal(v, h)
			t.Outcome, t.Error, t.ErrorBy = traces.TransferFailed, msg, by
			add(traces.Event{Kind: traces.KindTransfer, Agent: t.From, RunPath: v.path, Transfer: &t})
			add(failure(v.agent, v.path, msg))
			end.Status, end.Error = traces.StatusFailed, msg
		}
	}
	closed := make(map[*visit]bool)
	interrupts := slices.Clone(r.interrupts)
	var closeVisit func(v *visit)
	closeVisit = func(v *visit) {
		if v.closed || closed[v] || !v.started {
			return
		}
		for _, c := range r.order {
			if c.parent == v && c.started && !c.closed && !closed[c] {
				return // closed by the last of them
			}
		}
		closed[v] = true
		switch {
		case v.pendingInterrupt != nil && !slices.Contains(interrupts, v.pendingInterrupt.ID):
			interrupts = append(interrupts, v.pendingInterrupt.ID) // once, where it arose: first
			add(traces.Event{Kind: traces.KindInterrupted, Agent: v.agent, RunPath: v.path, Interrupt: v.pendingInterrupt})
			if end.Status == traces.StatusCompleted {
				end.Status, end.Error = traces.StatusInterrupted, ""
			}
		case v.pendingError:
			add(failure(v.agent, v.path, v.errMsg))
			end.Status, end.Error = traces.StatusFailed, v.errMsg
		}
		add(v.finishedEvent())
		if v.parent != nil {
			closeVisit(v.parent)
		}
	}
	// A visit's end is recorded when its copy of events ends, and the copy of an agent that
	// handed over ends after everything downstream: the latest started close first.
	for _, v := range slices.Backward(r.order) {
		closeVisit(v)
	}
	return end
}

// maybeFinish finishes the run once the root visit's events are all in and the Runner's stream,
// when someone reads it through Run, has ended.
func (r *Recorder) maybeFinish() {
	r.mu.Lock()
	ready := r.streamDone && (r.root == nil || r.rootDrained)
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
	if r.status != "" {
		return
	}
	r.decideAll(nil)
	r.abandonTools(nil, toolLeftOpen) // none stays open forever
	for _, v := range r.order {
		r.refuse(v)
	}
	r.failUnexplained()
	for _, v := range r.order {
		r.commit(v)
		v.runnableEnded, v.ownDone = true, true
		r.finishVisit(v)
	}
	r.diffSession(r.sessionCtx, nil, false)
	status, msg := r.outcome()
	r.status = status
	r.sink.Finish(status, msg)
	close(r.ended)
}

func interruptOf(info *adk.InterruptInfo) *traces.Interrupt {
	out := &traces.Interrupt{}
	if info == nil {
		return out
	}
	contexts := info.InterruptContexts
	if cm, ok := info.Data.(*adk.ChatModelAgentInterruptInfo); len(contexts) == 0 && ok && cm.Info != nil {
		contexts = cm.Info.InterruptContexts // how a resumed chat model agent is handed its interrupt
	}
	for _, c := range contexts {
		if c != nil && c.IsRootCause {
			out.ID, out.Address, out.Info = c.ID, c.Address.String(), infoText(c.Info)
			return out
		}
	}
	if _, ok := info.Data.(*adk.ChatModelAgentInterruptInfo); !ok && info.Data != nil {
		out.Info = infoText(info.Data)
	}
	return out
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
