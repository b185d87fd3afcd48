package agents

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/schema"

	"github.com/baton-dev/baton/traces"
)

// Sink receives the events a Recorder makes, in order, from one goroutine at a time.
// *traces.Recording is the usual sink: it numbers the events and fans them out.
type Sink interface {
	Emit(traces.Event) traces.Event
}

// transferWait bounds how long an agent's start waits for the stream to deliver the transfer
// that brought control to it (a transfer already sent, so normally microseconds).
const transferWait = 5 * time.Second

// Recorder records one eino ADK run as trace events while it goes on, without changing it.
//
// Most events come from eino callbacks, attached to the run alone (adk.WithCallbacks): they fire
// synchronously where the work happens, so they are recorded as it happens and, for sequential
// flows, always in the same order. The Runner's event stream supplies what no callback reports
// (deterministic transfers, exits, interrupts, loop breaks, errors, messages of agents without a
// model) and is handed on to the caller unchanged. Echoes on the stream of what callbacks already
// recorded (each model reply and tool result) are matched by count per agent visit and dropped.
//
// A Recorder records a single run: create one per run.
type Recorder struct {
	sink Sink
	tree map[string]traces.Agent

	mu         sync.Mutex
	visits     map[string]*visit        // by visit key (collapsed address path)
	byStream   map[string]*visit        // by collapsed stream run path
	order      []*visit                 // visits in start order
	models     int                      // model calls so far, for their ids
	toolCalls  int                      // tool calls so far, for their order
	openTools  map[string]openTool      // tool calls started and not yet finished, by call id
	agentTools map[string]agentToolCall // open AgentTool calls by call id
	transfers  map[string]int           // agent -> transfers to it recorded and not yet consumed by its start
	transferCh chan struct{}            // closed and replaced whenever a transfer is recorded
	session    map[string]string
	sessionCtx context.Context // a context that carries the run's session
	runCtx     context.Context
	lastAgent  string
	lastPath   []string
	failure    string
	interrupt  bool
	streams    inflight // streamed outputs still being read
}

// visit is one stretch of work of one agent. Callbacks know it by the agents in their execution
// address, the stream by eino's run path: the two agree for transfers and AgentTools, but inside
// a workflow the address is a call stack (seq>writer) and the run path a history
// (seq>planner>writer), so stream paths are matched to visits by each agent's order of visits.
type visit struct {
	agent    string
	kind     string // eino's agent type: ChatModel, Sequential, Supervisor...
	path     []string
	finished bool
	streamed bool // a stream run path is matched to this visit
	// Callback-recorded replies and tool results, and how many of their stream echoes were seen.
	modelOutputs, toolResults int
	echoedModel, echoedTool   int
	// lastInput is the visit's latest model input and converted its trace form: the next call's
	// input usually extends it, and then shares its converted messages.
	lastInput []*schema.Message
	converted []traces.Message
	// outputs counts the visit's streamed replies and tool results still being read; closing, its
	// agent's streamed output, whose end is the end of the agent's work.
	outputs, closing inflight
}

// openTool is a tool call in progress.
type openTool struct {
	name, args string
	at         place
	order      int // start order, to close forgotten calls in order
}

// agentToolCall is an AgentTool call in progress: what agenttool.entered said, and the callee's
// run path.
type agentToolCall struct {
	traces.AgentToolCall
	path []string
}

// NewRecorder returns a recorder writing to sink. tree is the agent tree of the run, if known: it
// tells which agent stores its answer in the session (OutputKey), for the session's "set by".
func NewRecorder(sink Sink, tree []traces.Agent) *Recorder {
	r := &Recorder{
		sink:       sink,
		tree:       make(map[string]traces.Agent, len(tree)),
		visits:     make(map[string]*visit),
		byStream:   make(map[string]*visit),
		openTools:  make(map[string]openTool),
		agentTools: make(map[string]agentToolCall),
		transfers:  make(map[string]int),
		transferCh: make(chan struct{}),
		session:    make(map[string]string),
	}
	for _, a := range tree {
		r.tree[a.Name] = a
	}
	return r
}

// Run starts runner on messages with the recorder's callbacks added to opts, emits run.started,
// and returns an iterator over the same events runner.Run would yield, in the same order. Drain
// it: recording ends when it is exhausted, and then Outcome tells how the run ended. flow and
// input only label run.started.
func (r *Recorder) Run(ctx context.Context, runner *adk.Runner, flow string, messages []adk.Message, opts ...adk.AgentRunOption) *adk.AsyncIterator[*adk.AgentEvent] {
	input := ""
	if len(messages) > 0 && messages[len(messages)-1] != nil {
		input = messages[len(messages)-1].Content
	}
	r.runCtx = ctx
	r.emit(traces.Event{Kind: traces.KindRunStarted, Run: &traces.RunMark{Flow: flow, Input: input, Status: traces.StatusRunning}})

	events := runner.Run(ctx, messages, append(opts, adk.WithCallbacks(r.handler()))...)
	out, gen := adk.NewAsyncIteratorPair[*adk.AgentEvent]()
	go func() {
		defer gen.Close()
		for {
			ev, ok := events.Next()
			if !ok {
				break
			}
			u := r.take(ev)
			gen.Send(ev) // the caller gets each event as soon as eino sends it
			r.observe(ev, u)
		}
		r.finish(ctx)
	}()
	return out
}

// Outcome returns the run's final status and error message. It is meaningful once the iterator
// returned by Run is exhausted.
func (r *Recorder) Outcome() (traces.Status, string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.interrupt:
		return traces.StatusInterrupted, ""
	case r.runCtx != nil && r.runCtx.Err() != nil:
		// Before failures: canceling makes the model or tool at work fail with the context's
		// error, and that is the cancellation, not a fault of the flow.
		return traces.StatusCanceled, "run canceled"
	case r.failure != "":
		return traces.StatusFailed, r.failure
	}
	return traces.StatusCompleted, ""
}

// emit hands e to the sink and remembers who acted last. Callers hold r.mu, except before the
// run starts.
func (r *Recorder) emit(e traces.Event) {
	if e.Agent != "" {
		r.lastAgent, r.lastPath = e.Agent, e.RunPath
	}
	r.sink.Emit(e)
}

// visitAt returns the visit for path, creating it when the path is new. Callers hold r.mu.
func (r *Recorder) visitAt(path []string) *visit {
	key := pathKey(path)
	v, ok := r.visits[key]
	if !ok {
		name := ""
		if len(path) > 0 {
			name = path[len(path)-1]
		}
		v = &visit{agent: name, path: path}
		r.visits[key] = v
		r.order = append(r.order, v)
	}
	return v
}

// streamVisit returns the visit a stream event belongs to: the one its run path was matched to,
// else the agent's oldest visit not matched yet (agents hand out their events in the order they
// run), else a new visit for an agent no callback announced. Callers hold r.mu.
func (r *Recorder) streamVisit(ev *adk.AgentEvent) *visit {
	path := runPathOf(ev.RunPath)
	key := pathKey(path)
	if v, ok := r.byStream[key]; ok {
		return v
	}
	var v *visit
	for _, cand := range r.order {
		if cand.agent == ev.AgentName && !cand.streamed {
			v = cand
			break
		}
	}
	if v == nil {
		v = r.visitAt(path)
	}
	v.streamed = true
	r.byStream[key] = v
	return v
}

// recordTransfer emits a transfer and wakes agent starts waiting for it. Callers hold r.mu.
func (r *Recorder) recordTransfer(path []string, t traces.Transfer) {
	r.emit(traces.Event{Kind: traces.KindTransfer, Agent: t.From, RunPath: path, Transfer: &t})
	r.transfers[t.To]++
	close(r.transferCh)
	r.transferCh = make(chan struct{})
}

// awaitTransfer blocks until a transfer to agent has been recorded, then consumes it. A start
// reached by transfer is caused by that transfer, whose stream event may still be on its way.
func (r *Recorder) awaitTransfer(ctx context.Context, agent string) {
	timeout := time.NewTimer(transferWait)
	defer timeout.Stop()
	for {
		r.mu.Lock()
		if r.transfers[agent] > 0 {
			r.transfers[agent]--
			r.mu.Unlock()
			return
		}
		wake := r.transferCh
		r.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return
		case <-timeout.C:
			return
		}
	}
}

// unechoed is what a stream event carries that no callback recorded: a message, or a copy of its
// stream still to be read.
type unechoed struct {
	msg    *schema.Message
	stream *schema.StreamReader[*schema.Message]
}

// take returns the event's message when no callback recorded it; echoes of replies and results
// that callbacks recorded are counted off. A streamed message is copied: the event keeps one copy
// for the caller and the recorder reads the other later. It never waits.
func (r *Recorder) take(ev *adk.AgentEvent) unechoed {
	if ev.Err != nil || ev.Output == nil || ev.Output.MessageOutput == nil {
		return unechoed{}
	}
	mo := ev.Output.MessageOutput
	r.mu.Lock()
	v := r.streamVisit(ev)
	echo := false
	if mo.Role == schema.Tool {
		echo = v.echoedTool < v.toolResults
		v.echoedTool += btoi(echo)
	} else {
		echo = v.echoedModel < v.modelOutputs
		v.echoedModel += btoi(echo)
	}
	r.mu.Unlock()
	switch {
	case echo:
		return unechoed{}
	case mo.IsStreaming:
		copies := mo.MessageStream.Copy(2)
		mo.MessageStream = copies[0]
		return unechoed{stream: copies[1]}
	}
	return unechoed{msg: mo.Message}
}

// observe records what a stream event says that no callback said. It runs on the stream's
// goroutine after the event was handed on, and first waits for what the event's agent visit
// streamed: that happened before whatever the visit sent next.
func (r *Recorder) observe(ev *adk.AgentEvent, u unechoed) {
	path := runPathOf(ev.RunPath)
	if len(path) > 0 {
		r.mu.Lock()
		v := r.streamVisit(ev)
		r.mu.Unlock()
		r.waitVisit(v)
	}
	msg := u.msg
	if u.stream != nil {
		msg = readStream(u.stream, ev.Output.MessageOutput.Role)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if ev.Err != nil {
		agent := ev.AgentName
		if agent == "" {
			// Transfer failures and some framework errors come unattributed: blame who acted last.
			agent, path = r.lastAgent, r.lastPath
		}
		r.failure = ev.Err.Error()
		r.emit(traces.Event{Kind: traces.KindError, Agent: agent, RunPath: path, Error: &traces.ErrorDetail{Message: ev.Err.Error()}})
		return
	}
	if msg != nil {
		r.emit(traces.Event{Kind: traces.KindMessage, Agent: ev.AgentName, RunPath: path, Message: ptr(traceMessage(msg))})
	}
	if ev.Action != nil {
		r.observeAction(ev, path, msg)
	}
}

// observeAction records an event's action. Callers hold r.mu.
func (r *Recorder) observeAction(ev *adk.AgentEvent, path []string, msg *schema.Message) {
	a := ev.Action
	switch {
	case a.TransferToAgent != nil && (msg != nil || ev.Output == nil):
		// A transfer no transfer_to_agent tool call announced: a deterministic wrapper or custom
		// agent emitted it.
		callID := ""
		if msg != nil {
			callID = msg.ToolCallID
		}
		r.recordTransfer(path, traces.Transfer{From: ev.AgentName, To: a.TransferToAgent.DestAgentName, Mode: traces.TransferDeterministic, CallID: callID})
	case a.Exit:
		final := ""
		if msg != nil {
			final = msg.Content
		} else if ev.Output != nil && ev.Output.MessageOutput != nil && ev.Output.MessageOutput.Message != nil {
			final = ev.Output.MessageOutput.Message.Content
		}
		r.emit(traces.Event{Kind: traces.KindExit, Agent: ev.AgentName, RunPath: path, Exit: &traces.Exit{FinalResult: final}})
	case a.BreakLoop != nil:
		r.emit(traces.Event{Kind: traces.KindBreakLoop, Agent: ev.AgentName, RunPath: path,
			BreakLoop: &traces.BreakLoop{From: a.BreakLoop.From, Iterations: a.BreakLoop.CurrentIterations}})
	case a.Interrupted != nil:
		r.interrupt = true
		r.emit(traces.Event{Kind: traces.KindInterrupted, Agent: ev.AgentName, RunPath: path, Interrupt: interruptOf(a.Interrupted)})
	}
}

// readStream joins a streamed message from its copy and closes it.
func readStream(sr *schema.StreamReader[*schema.Message], role schema.RoleType) *schema.Message {
	defer sr.Close()
	acc := streamedMessage{role: role}
	for {
		chunk, err := sr.Recv()
		if err != nil {
			return acc.message()
		}
		acc.add(chunk)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// finish closes what the run left open once the stream has ended.
func (r *Recorder) finish(ctx context.Context) {
	r.streams.wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	// eino fires no end for a tool that panicked: close such calls so none stays open forever.
	forgotten := slices.SortedFunc(maps.Values(r.openTools), func(a, b openTool) int { return a.order - b.order })
	for _, t := range forgotten {
		r.emit(traces.Event{Kind: traces.KindToolFinished, Agent: t.at.agent(), RunPath: t.at.path,
			Tool: &traces.ToolCall{Name: t.name, CallID: t.at.toolCallID, Error: "the tool never returned: it panicked or the run was stopped"}})
	}
	clear(r.openTools)
	for _, v := range r.order {
		if !v.finished {
			v.finished = true
			r.emit(traces.Event{Kind: traces.KindAgentFinished, Agent: v.agent, RunPath: v.path, AgentRun: &traces.AgentRun{}})
		}
	}
	if r.sessionCtx != nil {
		r.diffSession(r.sessionCtx, "", nil)
	}
}

func interruptOf(info *adk.InterruptInfo) *traces.Interrupt {
	out := &traces.Interrupt{}
	for _, c := range info.InterruptContexts {
		if c != nil && c.IsRootCause {
			out.ID, out.Address, out.Info = c.ID, c.Address.String(), fmt.Sprint(c.Info)
			return out
		}
	}
	if info.Data != nil {
		out.Info = fmt.Sprint(info.Data)
	}
	return out
}

// jsonValue renders a session value as JSON, falling back to its printed form. Markup stays as
// written (no \u003c): the value is data, and every view escapes it when it shows it.
func jsonValue(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		buf.Reset()
		enc.Encode(fmt.Sprint(v))
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

func ptr[T any](v T) *T { return &v }
