package record

import (
	"context"
	"io"
	"sync"
	"sync/atomic"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/callbacks"
	"github.com/cloudwego/eino/components"
	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"
)

// hub is an eino callback handler that sends each callback to the recorder of the run it belongs
// to. A callback inside an agent finds its visit, and so its run, in its context. An agent start
// outside any visit is a transfer target, a resumed agent or a new run's root: the run is then
// told by eino's session, which every agent of one run shares (see runIdentity).
//
// Every method returns quickly: streamed outputs and event copies are read on goroutines of their
// own, and nothing in eino's inputs or outputs is changed.
type hub struct {
	fixed  *Recorder             // every callback belongs to this run (Recorder.Run)
	newRun func() *Recorder      // otherwise: makes the recorder of a run that starts
	mu     sync.Mutex            // guards open and last
	open   map[uintptr]*Recorder // runs going on, by eino session
	last   *Recorder             // the latest run started, for when the session cannot be read
}

// fixedHub returns the handler of a single run.
func fixedHub(r *Recorder) *hub { return &hub{fixed: r} }

// runsHub returns a handler that records every run it sees, each with a recorder of its own.
func runsHub(newRun func() *Recorder) *hub {
	return &hub{newRun: newRun, open: make(map[uintptr]*Recorder)}
}

// runOf returns the recorder of the run an agent starting in ctx (inside visit in, if any)
// belongs to, and whether that run starts with it.
func (h *hub) runOf(ctx context.Context, at place, in *visit) (*Recorder, bool) {
	if in != nil {
		return in.rec, false
	}
	if h.fixed != nil {
		return h.fixed, !h.fixed.hasStarted()
	}
	id := runIdentity(ctx)
	h.mu.Lock()
	defer h.mu.Unlock()
	if r := h.open[id]; id != 0 && r != nil {
		return r, false
	}
	if id == 0 && len(collapse(at.path)) > 1 && h.last != nil && !h.last.isFinished() {
		return h.last, false // eino's session is unreadable: the latest run is the best guess
	}
	r := h.newRun()
	h.last = r
	if id != 0 {
		h.open[id] = r
		go func() {
			<-r.ended
			h.mu.Lock()
			delete(h.open, id)
			h.mu.Unlock()
		}()
	}
	return r, true
}

// call is what a callback's OnStart leaves in the context for its OnEnd. Inside the prebuilt
// supervisor every callback fires twice with the same *RunInfo: the second OnStart finds the
// first one's call in its context, and only the first OnEnd passes ended.
//
// A call is itself the context OnStart returns (the callback's context, with the call as the
// value of callKey): one allocation per callback instead of two. An agent's is held as a plain
// context value instead (see OnStart): eino's lookups from everything the agent runs pass it.
type call struct {
	context.Context
	info    *callbacks.RunInfo
	v       *visit // the agent visit the callback belongs to
	started clock  // a model or tool call's start, as recorded
	modelID string
	// toolCallID is a tool call's id; of the callback's place, all its end needs (the rest would
	// more than double the size of a call, which every callback allocates).
	toolCallID string
	tool       *toolEvents // a tool call's, when the sink may keep its events' payloads; else nil
	// scope is the visit ctx runs in (visitIn): a callback starting inside the call then finds
	// its visit in its nearest call, where it looks for that call anyway, instead of walking on
	// up the chain of eino's contexts. An agent's call (and a lambda specialist's) holds the
	// visit it starts: no context of its own carries it, one layer fewer for every lookup eino
	// makes inside the agent.
	scope  *visit
	ended  atomic.Bool
	openAt int32 // a tool call's index in the calls in progress (see calls.open)
}

// toolEvents is a tool callback's call allocated together with the payloads of the events its
// start and end record (see toolPayloads), for a sink that may keep them: one allocation per tool
// call, where a third of a run's events are tool calls'. The payloads keep the call reachable
// while a sink keeps the events (a sender's queue, until it sends them).
type toolEvents struct {
	call
	toolPayloads
}

// newCall returns the call of a callback starting inside visit v (nil for none); for a tool's,
// allocated with its events' payloads unless the sink keeps none (see delivery.reuses), else
// taken from the run's slab of tool calls.
func newCall(info *callbacks.RunInfo, v *visit, toolCallID string) *call {
	if v == nil || info.Component != components.ComponentOfTool {
		return &call{info: info, v: v, toolCallID: toolCallID}
	}
	if v.rec.out.reuses {
		c := v.rec.toolCalls.next()
		c.info, c.v, c.toolCallID = info, v, toolCallID
		return c
	}
	t := &toolEvents{call: call{info: info, v: v, toolCallID: toolCallID}}
	t.tool = t
	return &t.call
}

// toolCallSlabs hands out the calls of a run's tool callbacks, which may start on several
// goroutines at once (eino runs a reply's tool calls in parallel): a third of a run's callbacks
// are tool calls' starts, each of which needs a call. A call that outlives the others of its slab
// (eino keeps a tool's context no longer than the tool runs; a long AgentTool call's) keeps at most
// 31 finished ones, 3 KB.
type toolCallSlabs = slabs[call]

type callKey struct{}

// Value returns the call for callKey, and what its context holds for any other key. It tells the
// key by its type alone: eino's own lookups pass through every call.
func (c *call) Value(key any) any {
	if _, ok := key.(callKey); ok {
		return c
	}
	return c.Context.Value(key)
}

// visitIn returns the innermost agent visit ctx runs in, or nil: the scope of the nearest call.
func visitIn(ctx context.Context) *visit {
	if c, _ := ctx.Value(callKey{}).(*call); c != nil {
		return c.scope
	}
	return nil
}

// end reports whether this is the first end of the call started in ctx. An agent's runnable
// keeps no call (see hub.OnStart): its end finds the call of its agent (or of the visit's
// container) nearest, and gets a call of its own, once per runnable run.
func end(ctx context.Context, info *callbacks.RunInfo) (*call, bool) {
	c, _ := ctx.Value(callKey{}).(*call)
	switch {
	case c == nil:
		return nil, false
	case c.info != info:
		if v := c.scope; v != nil && v.endRunnable(info) {
			return &call{info: info, v: v, scope: v}, true
		}
		return nil, false
	case !c.ended.CompareAndSwap(false, true):
		return nil, false
	}
	return c, true
}

// Needed tells eino which components to call the recorder for: agents, models, tools, and the
// runnables that carry an agent's work. Saying no to the rest (lambdas, tool nodes...) spares
// eino the calls and, in streaming runs, the stream copies it would make for us.
//
// A tools node is asked for its start only (see toolsStarted): eino never gives it a streamed
// input, and without its end eino copies none of its streamed output for us.
func (h *hub) Needed(_ context.Context, info *callbacks.RunInfo, timing callbacks.CallbackTiming) bool {
	if info == nil {
		return false
	}
	switch info.Component {
	case adk.ComponentOfAgent, components.ComponentOfChatModel, components.ComponentOfTool,
		compose.ComponentOfChain, compose.ComponentOfGraph, compose.ComponentOfWorkflow:
		return true
	case compose.ComponentOfToolsNode, compose.ComponentOfAgenticToolsNode:
		return timing == callbacks.TimingOnStart
	}
	return isSpecialist(info)
}

// toolsStarted puts in the context of a tools node starting inside a visit that visit's tools
// call (see visit.tools): each of its tool calls' starts then finds its visit a few layers up,
// where it walked up some twenty of eino's contexts to the agent's call (now once a model reply,
// not once a tool call). It is a plain context value, which eino's own lookups pass as cheaply
// as their own, and the visit's: no allocation but the context's.
func toolsStarted(ctx context.Context, near *call) context.Context {
	var v *visit
	if near != nil {
		v = near.scope
	} else {
		v = visitIn(ctx)
	}
	if v == nil {
		return ctx
	}
	return context.WithValue(ctx, callKey{}, &v.tools)
}

func (h *hub) OnStart(ctx context.Context, info *callbacks.RunInfo, in callbacks.CallbackInput) context.Context {
	if info == nil {
		return ctx
	}
	near, _ := ctx.Value(callKey{}).(*call)
	if near != nil && near.info == info {
		return ctx // the second of a callback that fires twice (see call)
	}
	if info.Component == compose.ComponentOfToolsNode || info.Component == compose.ComponentOfAgenticToolsNode {
		return toolsStarted(ctx, near)
	}
	var v *visit
	if near != nil {
		v = near.scope // a visit's context is always wrapped by its agent's call
	} else {
		v = visitIn(ctx)
	}
	if info.Component == components.ComponentOfTool && v != nil && near == &v.tools {
		// A tool its visit's tools node calls: its call id is the node's, a few contexts up,
		// and the rest of eino's address is not needed (a third of a run's callbacks).
		return startTool(ctx, newCall(info, v, compose.GetToolCallID(ctx)), in)
	}
	var known []string
	if v != nil {
		known = v.path
	}
	at := placeOf(ctx, known)
	if v != nil && at.runnable && at.agent() == v.agent && isRunnable(info) {
		// The agent's own work: no call in the context, one layer fewer for every lookup eino
		// makes inside it. Its end is told by its RunInfo (see end).
		v.outputs.wait()
		v.rec.runnableStarted(v, info)
		return ctx
	}
	c := newCall(info, v, at.toolCallID)
	c.scope = v
	switch {
	case info.Component == adk.ComponentOfAgent && v != nil && v.agent == at.agent() && v.addr == pathKey(at.path):
		// An agent directly inside a container of its own name (the prebuilt supervisor wraps
		// its supervisor so, a deterministic transfer its team): one visit, followed through the
		// container's copy of events.
		v.rec.fold(ctx, v, at, info.Type, adk.ConvAgentCallbackInput(in))
		return ctx
	case info.Component == adk.ComponentOfAgent:
		r, starts := h.runOf(ctx, at, v)
		agentIn := adk.ConvAgentCallbackInput(in)
		if starts {
			r.start(ctx, at.agent(), agentIn)
		}
		c.v = r.agentStarted(ctx, info, at, v, agentIn)
		r.holdHandover(ctx, c.v)
		c.scope = c.v // what the agent runs finds its visit in this call: no context of its own
	case v == nil:
		return ctx // work outside any agent of a recorded run
	case info.Component == components.ComponentOfChatModel:
		v.outputs.wait()
		v.rec.holdQueued(ctx, v, true)
		mi := model.ConvCallbackInput(in)
		var fed []*schema.Message
		if mi != nil {
			fed = mi.Messages
		}
		if s := v.rec.handOff(ctx, v, at, fed, false); s != nil {
			c.v = s // a host multi-agent's specialist: a visit of its own
		}
		c.modelID, c.started = v.rec.modelStarted(ctx, c.v, mi)
	case isSpecialist(info):
		// A host specialist given as an Invokable or a Streamable: its lambda is its visit, and
		// what it runs inside (a model, say) belongs to it.
		v.outputs.wait() // the host's streamed reply, which picked it
		fed, _ := in.([]*schema.Message)
		s := v.rec.handOff(ctx, v, at, fed, true)
		if s == nil {
			return ctx
		}
		c.v = s
		c.scope = s
	case info.Component == components.ComponentOfTool:
		return startTool(ctx, c, in)
	default:
		return ctx
	}
	c.Context = ctx
	if info.Component == adk.ComponentOfAgent {
		// Held as a plain context value, which eino's lookups from everything the agent runs
		// pass in their loop, where a call as a context of its own has each of them call its
		// Value (twenty thousand lookups of eino's resume info and checkpoints a run of 1,000 tool
		// calls, none of them for the call): one allocation more for an agent's start, which is rare.
		return context.WithValue(ctx, callKey{}, c)
	}
	return c
}

// startTool records the start of tool call c, inside its visit c.v, and returns its context.
func startTool(ctx context.Context, c *call, in callbacks.CallbackInput) context.Context {
	v := c.v
	c.scope = v
	v.outputs.wait()
	v.rec.holdQueued(ctx, v, true)
	ti := tool.ConvCallbackInput(in)
	v.rec.toolStarted(c, c.info, c.toolCallID, ti)
	c.Context = ctx
	if v.rec.holding() && ti != nil {
		v.rec.holdTool(c, c.info.Name, ti.ArgumentsInJSON)
	}
	return c
}

// isRunnable reports whether info is a compose runnable's (not an agent's, a model's, a tool's
// or a host specialist's), as an agent's own work is.
func isRunnable(info *callbacks.RunInfo) bool {
	switch info.Component {
	case adk.ComponentOfAgent, components.ComponentOfChatModel, components.ComponentOfTool:
		return false
	}
	return !isSpecialist(info)
}

// OnStartWithStreamInput handles a component started on a stream: in streaming runs, that is how
// an agent's runnable starts. Nothing of the input is needed.
func (h *hub) OnStartWithStreamInput(ctx context.Context, info *callbacks.RunInfo, in *schema.StreamReader[callbacks.CallbackInput]) context.Context {
	if info != nil && isSpecialist(info) {
		// A host specialist's input is the messages host kept for it, whole before it starts.
		return h.OnStart(ctx, info, readMessages(in))
	}
	in.Close()
	return h.OnStart(ctx, info, nil)
}

// readMessages joins a stream of message lists and closes it.
func readMessages(in *schema.StreamReader[callbacks.CallbackInput]) []*schema.Message {
	defer in.Close()
	var msgs []*schema.Message
	for {
		chunk, err := in.Recv()
		if err != nil {
			return msgs
		}
		if m, ok := chunk.([]*schema.Message); ok {
			msgs = append(msgs, m...)
		}
	}
}

func (h *hub) OnEnd(ctx context.Context, info *callbacks.RunInfo, out callbacks.CallbackOutput) context.Context {
	c, first := end(ctx, info)
	if !first {
		return ctx
	}
	r := c.v.rec
	switch {
	case isSpecialist(info):
		msg, _ := out.(*schema.Message)
		r.specialistAnswered(c.v, msg, nil)
		return ctx
	case info.Component == adk.ComponentOfAgent:
		// An agent's end fires as its work begins, with a copy of the events it will send.
		var events *adk.AsyncIterator[*adk.AgentEvent]
		if o := adk.ConvAgentCallbackOutput(out); o != nil {
			events = o.Events
		}
		r.follow(c.v, events)
		return ctx
	case info.Component == components.ComponentOfChatModel:
		var msg *schema.Message
		var usage *model.TokenUsage
		var cfg *model.Config
		if o := model.ConvCallbackOutput(out); o != nil {
			msg, usage, cfg = o.Message, o.TokenUsage, o.Config
		}
		r.modelFinished(c, msg, nil, usage, cfg, nil)
	case info.Component == components.ComponentOfTool:
		result := ""
		if o := tool.ConvCallbackOutput(out); o != nil {
			result = o.Response
		}
		r.toolFinished(ctx, info, c, result, nil, true)
		r.holdQueued(ctx, c.v, false)
		return ctx
	default:
		r.noticeSession(ctx, c.v, setsInRunnable(c.v))
		r.runnableEnded(c.v, nil)
		r.ending(c.v)
		return ctx
	}
	r.noticeSession(ctx, c.v, false)
	r.holdQueued(ctx, c.v, false)
	return ctx
}

func (h *hub) OnError(ctx context.Context, info *callbacks.RunInfo, err error) context.Context {
	c, first := end(ctx, info)
	if !first || info.Component == adk.ComponentOfAgent {
		return ctx // eino never fails an agent through callbacks: errors are events
	}
	r := c.v.rec
	if isSpecialist(info) {
		r.specialistAnswered(c.v, nil, err)
		return ctx
	}
	switch info.Component {
	case components.ComponentOfChatModel:
		r.modelFinished(c, nil, nil, nil, nil, err)
	case components.ComponentOfTool:
		r.toolFinished(ctx, info, c, "", err, false)
		r.holdQueued(ctx, c.v, false)
		return ctx
	default:
		r.noticeSession(ctx, c.v, setsInRunnable(c.v))
		r.runnableEnded(c.v, err)
		r.ending(c.v)
		return ctx
	}
	r.noticeSession(ctx, c.v, false)
	r.holdQueued(ctx, c.v, false)
	return ctx
}

// OnEndWithStreamOutput handles an output that is a stream: a model's streamed reply, a tool's
// streamed result, or an agent's runnable whose output streams until the agent's work ends. It is
// read on one of the run's reader goroutines (or by what waits for it first, see inflight.wait) and
// recorded when complete; what follows it waits for it.
func (h *hub) OnEndWithStreamOutput(ctx context.Context, info *callbacks.RunInfo, out *schema.StreamReader[callbacks.CallbackOutput]) context.Context {
	c, first := end(ctx, info)
	if !first || info.Component == adk.ComponentOfAgent {
		out.Close()
		return ctx
	}
	r, v := c.v.rec, c.v
	j := r.reads.next()
	j.ctx, j.info, j.c, j.out = ctx, info, c, out
	switch {
	case isSpecialist(info):
		j.of = specialistAnswer
	case info.Component == components.ComponentOfChatModel:
		j.of = modelReply
	case info.Component == components.ComponentOfTool:
		j.of = toolResult
	default:
		j.of = agentWork
		j.read = make(chan struct{})
	}
	r.mu.Lock()
	j.work = &v.closing
	if j.of == toolResult {
		v.echoes.expectResult(c.toolCallID) // the echo may reach the event copy before we finish reading
	}
	if j.of == modelReply || j.of == toolResult {
		j.work = &v.outputs
	}
	if v.handedTo {
		j.work = &v.parent.outputs // the specialist's reply streams on as its host's answer
	}
	if j.of == modelReply || j.of == toolResult {
		j.work.addRead(j) // what waits for it may read it first (see inflight.wait)
	} else {
		j.work.add()
	}
	r.streams.add()
	// The reply of a chat model agent's own model call is echoed at once in the agent's copy of
	// events, whose reader waits for it (see observe) and so reads it as it streams, as a reader
	// would; and what the agent does next (its tool calls, its work's end) waits for it too. No
	// reader is woken for it, only to find it read.
	echoed := j.of == modelReply && v.chat && !v.handedTo && c.toolCallID == "" && v.following
	r.mu.Unlock()
	if !echoed {
		r.readStreamed(j)
	}
	if j.of == agentWork {
		// The stream is the agent's output, and its end the end of the agent's work: eino waits
		// for this callback before it goes on to close the agent's events, so this is the last
		// moment before the app can see them end (see Recorder.ending). The app reads its own
		// copy meanwhile, unhindered.
		select {
		case <-j.read:
			r.ending(v)
		case <-ctx.Done():
		}
	}
	return ctx
}

// streamRead is the reading of a streamed output, run once: by a reader or by one who waits for
// it (see inflight.wait). It is taken from the run's slabs of reads (Recorder.reads), where a
// closure over the same would be an allocation per streamed reply; once run, it lets go of what it
// read.
type streamRead struct {
	claimed atomic.Bool
	of      streamed
	ctx     context.Context
	info    *callbacks.RunInfo
	c       *call
	out     *schema.StreamReader[callbacks.CallbackOutput]
	work    *inflight     // counts it in
	read    chan struct{} // closed once read: an agent's work only
}

// streamed is what a streamed output is.
type streamed uint8

const (
	modelReply       streamed = iota
	toolResult                // a tool's streamed result
	specialistAnswer          // a lambda specialist's answer
	agentWork                 // the output of an agent's own work
)

// run reads the stream and records it, unless someone did already.
func (j *streamRead) run() {
	if j.claimed.CompareAndSwap(false, true) {
		j.readAndRecord()
	}
}

func (j *streamRead) readAndRecord() {
	c, out := j.c, j.out
	v := c.v
	r := v.rec
	if j.read != nil {
		defer close(j.read)
	}
	defer r.streams.done()
	defer j.work.done()
	// What it read is let go of (its slab outlives it); a stale waiter only finds it claimed.
	defer func() { j.ctx, j.info, j.c, j.out = nil, nil, nil, nil }()
	switch j.of {
	case specialistAnswer:
		answer, err := readAnswerStream(out)
		r.specialistAnswered(v, answer, err)
	case modelReply:
		reply := streamedMessage{traceCalls: true}
		usage, cfg, err := readModelStream(out, &reply)
		msg := reply.joined()
		r.modelFinished(c, &msg, reply.specs, usage, cfg, err)
	case toolResult:
		result, err := readToolStream(out)
		r.toolFinished(j.ctx, j.info, c, result, err, false) // its echo is counted
	default:
		_, err := readToolStream(out) // nothing in it is needed but its end
		// The agent's work ends after the replies and results it streamed on the way.
		v.outputs.wait()
		if setsInRunnable(v) {
			// It set what it set as the stream was read; nothing else runs until the visit
			// ends, which waits for this.
			r.noticeSession(j.ctx, v, true)
		}
		r.runnableEnded(v, err)
	}
}

// readModelStream joins a model's streamed reply, from the callback's copy of its chunks, into
// reply (its tool calls in trace form, see streamedMessage.traceCalls), and returns the last usage
// and config its chunks carried. The usage the chunks' messages carried is left out when the
// callback's carried one: modelFinished takes the callback's.
func readModelStream(out *schema.StreamReader[callbacks.CallbackOutput], reply *streamedMessage) (*model.TokenUsage, *model.Config, error) {
	defer out.Close()
	var usage *model.TokenUsage
	var cfg *model.Config
	for {
		chunk, err := out.Recv()
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			reply.hasUsage = reply.hasUsage && usage == nil
			return usage, cfg, err
		}
		if o := model.ConvCallbackOutput(chunk); o != nil {
			reply.add(o.Message)
			if o.TokenUsage != nil {
				usage = o.TokenUsage
			}
			if o.Config != nil {
				cfg = o.Config
			}
		}
	}
}

// readAnswerStream joins a lambda specialist's streamed answer from the callback's copy of its
// chunks.
func readAnswerStream(out *schema.StreamReader[callbacks.CallbackOutput]) (*schema.Message, error) {
	defer out.Close()
	answer := streamedMessage{role: schema.Assistant}
	for {
		chunk, err := out.Recv()
		if err == io.EOF {
			return answer.message(), nil
		}
		if err != nil {
			return answer.message(), err
		}
		if m, ok := chunk.(*schema.Message); ok {
			answer.add(m)
		}
	}
}

// readToolStream joins a tool's streamed result from the callback's copy of its chunks.
func readToolStream(out *schema.StreamReader[callbacks.CallbackOutput]) (string, error) {
	defer out.Close()
	var result []byte
	for {
		chunk, err := out.Recv()
		if err == io.EOF {
			return string(result), nil
		}
		if err != nil {
			return string(result), err
		}
		if o := tool.ConvCallbackOutput(chunk); o != nil {
			result = append(result, o.Response...)
		}
	}
}

// setsInRunnable reports whether v's runnable sets the session values v sets outside tool calls.
// A custom agent's does (plan-execute's planner its plan); a chat model agent's does not: eino
// stores its answer under OutputKey once the runnable has returned, while a streamed output may
// still be read, so only a later callback sees it at a fixed place.
func setsInRunnable(v *visit) bool { return v.kind != "ChatModel" }
