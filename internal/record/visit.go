package record

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/callbacks"
	"github.com/cloudwego/eino/schema"

	"github.com/baton-dev/baton/traces"
)

// Ways control reaches an agent, as agent.started's via says (and viaResume).
const (
	viaRun       = "run"
	viaTransfer  = "transfer"
	viaAgentTool = "agenttool"
	viaWorkflow  = "workflow"
)

// isWorkflow reports whether an eino agent type runs its sub-agents itself.
func isWorkflow(kind string) bool {
	return kind == "Sequential" || kind == "Parallel" || kind == "Loop"
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
	// transfer out of a wrapped team, carry it), and outerPath, the wrapper's path on the Runner's
	// stream, which the wrapper's own events are recorded with.
	path, outerPath []string
	local, outer    string
	// ownSteps and ownName are the run path and agent name of its latest own event (not a
	// wrapper's), as eino put them on it (see ownEvent).
	ownSteps  []adk.RunStep
	ownName   string
	addr      string // its execution address's agent path, collapsed: what an agent inside it extends
	boundary  string // the innermost AgentTool call it runs inside, if any
	via       string
	parent    *visit // the visit it runs inside: the AgentTool caller or the workflow
	iteration int    // its loop's iteration, from 1, when a loop runs it
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
	// runnables are its runnables started and not ended, by eino's RunInfo: a runnable keeps no
	// call in the context (see hub.OnStart), so its end is told by its RunInfo here.
	runnables []*callbacks.RunInfo
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
	echoes     echoes // what its copy of events repeats of what callbacks recorded
	// answers are its chat model agent's ended tool calls whose messages are not recorded yet;
	// lateEchoes, how many calls' messages were recorded before their echoes came (answers.go).
	answers    []pendingAnswer
	lateEchoes int
	lastReply  string // its latest reply's text: eino stores it under OutputKey
	finishedAt int64  // the seq of its latest model.finished, 0 when not known yet
	model      string // the name its model's latest call reported (model.Config.Model), if any
	handedBy   string // the agent whose deterministic transfer brought control here, if one did
	// calls are its latest reply's tool calls until a tool runs one; handedOff says they were
	// recorded as a host multi-agent's handoffs, handedTo that the visit is a specialist one of
	// them started (see handOff).
	calls []traces.ToolCallSpec
	// tools is the call its tools nodes hold in their contexts (see toolsStarted): its scope is
	// the visit; it is ended from the start, as eino is not asked for a tools node's end.
	tools call
	// toolList is the names of the tools its model was given at its latest call (see toolNames).
	toolList            []string
	handedOff, handedTo bool
	lambda              bool       // a specialist run as a lambda: its end is the lambda's, not a model call's
	inputs              inputCache // its model inputs, converted
	// outputs counts the visit's streamed replies and tool results still being read; closing, its
	// runnable's streamed output, whose end is the end of the agent's work.
	outputs, closing inflight
	inner            forwarding // what its copy of events carried from inside its AgentTool calls (inner.go)
	// ownRuns are the visits its own code ran on runs of their own (see agentStarted).
	ownRuns []*visit
	drained bool // its copy of events has been read to its end
	// following says its copy of events is being read (see follow): whatever of its outputs
	// started meanwhile is read by the time that reading ends, at the latest.
	following bool
	session   sessionRef // eino's session as its callbacks read it (see sessionOf)
}

// agentStarted records the start of a visit. It first waits for what caused it: the transfer that
// brought control here and the end of the agent that transferred, or the steps of a sequence or
// loop before it. parent is the visit the agent runs inside, if any.
func (r *Recorder) agentStarted(ctx context.Context, info *callbacks.RunInfo, at place, parent *visit, in *adk.AgentCallbackInput) *visit {
	resumed := in != nil && in.ResumeInfo != nil
	local := einoRunPath(ctx)
	// An agent started inside a visit on a run of its own (eino's run path starts again at it), with
	// no tool call around it: the visit's own code ran it, as a custom agent that calls an
	// AgentTool's InvokableRun itself does. Nothing transfers to it.
	ownRun := parent != nil && at.callerTool == "" && len(local) == 1 && len(collapse(at.path)) > 1
	via := viaTransfer
	var cause *traces.Transfer // the transfer that brought control here
	switch {
	case at.callerTool != "":
		via = viaAgentTool
	case ownRun:
		via = viaWorkflow
	case parent != nil && isWorkflow(parent.kind):
		via = viaWorkflow
		if parent.kind != "Parallel" {
			r.awaitInside(parent) // one step runs after another; parallel branches run as they run
		}
	case r.rootVisit() == nil:
		via = viaRun
	case parent != nil && parent.agent == at.agent() && parent.addr == pathKey(at.path):
		via = viaWorkflow // an agent of its own name run directly inside: a wrapper runs what it wraps
	case resumed:
		// eino starts again every agent on the interrupt's address: no transfer brought control
		// here, and none will be recorded.
		via = viaResume
	default:
		cause = r.awaitTransfer(ctx, at.agent())
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.commit(parent)
	if cause != nil && parent != nil && parent.agent == cause.From {
		r.answerAll(parent) // its transfer's message comes before the target's work
	}
	if r.session.ctx == nil {
		r.session.ctx = ctx
	}
	v := &visit{rec: r, agent: at.agent(), kind: info.Type, chat: info.Type == "ChatModel", via: via, parent: parent, addr: pathKey(at.path),
		resumed: resumed, startCtx: ctx, finished: make(chan struct{}), workDone: make(chan struct{}), settled: make(chan struct{})}
	v.tools.scope, v.tools.v = v, v
	v.tools.ended.Store(true)
	if cause != nil && cause.Mode == traces.TransferDeterministic {
		v.handedBy = cause.From
	}
	r.setPath(v, at, local)
	if ownRun {
		parent.ownRuns = append(parent.ownRuns, v)
		v.path = append(slices.Clone(parent.path), local...) // as the events of an AgentTool's callee
	}
	r.visits.add(v)
	if via == viaAgentTool && parent != nil {
		call := traces.AgentToolCall{Caller: parent.agent, Callee: v.agent, CallID: at.callID, Request: requestOf(r.calls.tool(at.callID).args)}
		r.calls.enter(at.callID, call, v)
		v.enter = &call
	}
	v.iteration = r.visits.iteration(v)
	if in != nil && in.Input != nil {
		v.fedInput = traceMessages(in.Input.Messages)
	}
	r.tree.visit(v)
	if via == viaResume {
		r.reenter(v, at)
	}
	r.putAgents()
	return v
}

// setPath sets v's run path from local, eino's run path in the context of its start (the
// execution address's agent path when eino's cannot be read). Inside an AgentTool eino runs the
// callee on a run of its own and prefixes its events with the caller's path on the way out, so
// the visit's path is the path of the visit that made the innermost AgentTool call, then local.
// Callers hold r.mu.
func (r *Recorder) setPath(v *visit, at place, local []string) {
	if local == nil {
		local = at.path
	}
	v.local = strings.Join(local, ">")
	v.ownSteps, v.ownName = nil, "" // judged against the path it had
	v.path = local
	v.boundary = at.boundaryCallID
	if t := r.calls.tool(at.boundaryCallID); at.boundaryCallID != "" && t.v != nil {
		v.path = append(slices.Clone(t.v.path), local...)
	}
}

// fold makes the start of an agent of v's own name, directly inside v before anything else
// happened in it, part of v: eino's prebuilt supervisor is a container around a supervisor of the
// same name, and a deterministic transfer around a team runs the team's first agent so. Their
// events carry the inner agent's run path, and its input is what that agent was fed (a wrapped
// team runs in a session of its own); the wrapper's own events keep the outer path.
func (r *Recorder) fold(ctx context.Context, v *visit, at place, kind string, in *adk.AgentCallbackInput) {
	r.mu.Lock()
	defer r.mu.Unlock()
	local := einoRunPath(ctx)
	if v.started || local == nil || strings.Join(local, ">") == v.local {
		return // already folded: inside the supervisor, every callback fires twice
	}
	v.outer, v.outerPath = v.local, v.path
	v.chat = kind == "ChatModel"
	// A deterministic transfer wrapping a team (its eino type) sends its way out after the team;
	// the prebuilt supervisor's container has no events of its own.
	v.holds = v.kind == "DeterministicTransfer"
	r.setPath(v, at, local)
	if in != nil && in.Input != nil {
		v.fedInput = traceMessages(in.Input.Messages)
	}
}

// commit records v's start, once, when something happens inside it (and its parent's before).
// Callers hold r.mu.
func (r *Recorder) commit(v *visit) {
	if v == nil || v.started {
		return
	}
	v.started = true
	r.commit(v.parent)
	if v.enter != nil {
		v.enter.Request = receivedRequest(v.enter.Request, v.fedInput)
		v.enter.InputMode = inputMode(v.enter.Request, v.fedInput)
		r.out.emit(&traces.Event{Kind: traces.KindAgentToolEnter, Agent: v.enter.Caller, RunPath: v.parent.path, AgentTool: v.enter})
	}
	r.out.emit(&traces.Event{Kind: traces.KindAgentStarted, Agent: v.agent, RunPath: v.path,
		AgentRun: &traces.AgentRun{Via: v.via, Resumed: v.resumed, Iteration: v.iteration, Input: v.fedInput}})
	r.diffSession(v.startCtx, v, false)
}

// rootVisit returns the run's first visit, or nil before any.
func (r *Recorder) rootVisit() *visit {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.visits.root
}

// awaitInside waits until the visits started inside outer so far have finished: the earlier
// steps of a sequence or loop before the next, or a wrapped team before its wrapper's own events.
// In eino they have ended; their copies of events may still be being read.
func (r *Recorder) awaitInside(outer *visit) {
	r.mu.Lock()
	inside := r.visits.inside(outer)
	r.mu.Unlock()
	for _, v := range inside {
		v.await()
	}
}

// await blocks until v has finished, or causeWait has passed: whatever waits on a visit happened
// after it in eino, so its end is already on the way.
func (v *visit) await() { awaitClosed(v.finished) }

// awaitClosed blocks until ch is closed, or causeWait has passed.
func awaitClosed(ch <-chan struct{}) {
	t := time.NewTimer(causeWait)
	defer t.Stop()
	select {
	case <-ch:
	case <-t.C:
	}
}

// isFinished reports whether the run has been recorded to its end.
func (r *Recorder) isFinished() bool {
	select {
	case <-r.ended:
		return true
	default:
		return false
	}
}

// runnableStarted notes that v's work runs in a compose runnable, info's, whose end is the end
// of it, and reports false when that runnable is already running: the second firing of a
// callback that fires twice (see call).
func (r *Recorder) runnableStarted(v *visit, info *callbacks.RunInfo) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if slices.Contains(v.runnables, info) {
		return false
	}
	r.commit(v)
	v.runnable = true
	v.runnables = append(v.runnables, info)
	return true
}

// endRunnable reports whether info is one of v's runnables running, and notes that it ended.
func (v *visit) endRunnable(info *callbacks.RunInfo) bool {
	v.rec.mu.Lock()
	defer v.rec.mu.Unlock()
	i := slices.Index(v.runnables, info)
	if i < 0 {
		return false
	}
	v.runnables = slices.Delete(v.runnables, i, i+1)
	return true
}

// runnableEnded records the end of v's own work, failed when err is not an interrupt.
func (r *Recorder) runnableEnded(v *visit, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case isInterrupt(err):
		v.interrupted = true
		v.pendingInterrupt = interruptFromError(err)
		r.stopped(err)
	case err != nil:
		v.errMsg = err.Error()
		v.pendingError = true
		r.answerAll(v) // those that returned, before those that never will
		r.abandonTools(v, toolAbandoned)
	}
	v.runnableEnded = true
	r.finishVisit(v)
}

// finishVisit records agent.finished once v's own work and its own events are both over, and
// the visits it ran (workflow steps, AgentTool callees) have finished: the events eino counts as
// the agent's (a deterministic transfer, an exit, an interrupt, an error) belong before its end.
// Callers hold r.mu.
func (r *Recorder) finishVisit(v *visit) {
	if v.closed || !(v.ownDone || v.teamDone) || (v.runnable && !v.runnableEnded) {
		return
	}
	if !v.workSignal {
		v.workSignal = true
		close(v.workDone)
	}
	if !v.ownDone {
		return
	}
	if r.visits.openInside(v) {
		return // finished by the last of them
	}
	if !v.settleSignal {
		v.settleSignal = true
		close(v.settled)
	}
	if v.held > 0 {
		return // finished when its transfers are recorded
	}
	v.closed = true
	r.answerAll(v)
	r.out.emit(ptr(v.finishedEvent()))
	close(v.finished)
	if v.parent != nil {
		r.finishVisit(v.parent)
	}
}

// finishedEvent is v's agent.finished.
func (v *visit) finishedEvent() traces.Event {
	return traces.Event{Kind: traces.KindAgentFinished, Agent: v.agent, RunPath: v.path,
		AgentRun: &traces.AgentRun{Error: v.errMsg, Interrupted: v.interrupted}}
}

// follow reads v's copy of its events on a goroutine of its own. The root's copy closes when the
// whole run has ended, and then the run is finished.
func (r *Recorder) follow(v *visit, events *adk.AsyncIterator[*adk.AgentEvent]) {
	r.mu.Lock()
	r.commit(v)
	v.following = true
	r.mu.Unlock()
	r.drains.add()
	go func() {
		for events != nil {
			ev, ok := events.Next()
			if !ok {
				break
			}
			r.observe(v, ev)
		}
		r.mu.Lock()
		v.following = false // an output that starts from now on is handed to a reader
		r.mu.Unlock()
		v.outputs.wait() // its last reply, which eino stores under its OutputKey
		r.mu.Lock()
		r.endOwnEvents(v)
		r.noticeOutput(v)
		r.mu.Unlock()
		r.refuseTransfers(v)
		r.mu.Lock()
		r.out.decideAll(v)
		v.ownDone = true
		v.drained = true
		if isWorkflow(v.kind) {
			r.transfers.wakeRefusals() // its copy passed on eino's errors raised in it: no more will come
		}
		r.finishVisit(v)
		root := v == r.visits.root
		r.mu.Unlock()
		r.drains.done()
		if root {
			r.maybeFinish()
		}
	}()
}

// noticeSession records the session values changed since the last look, from a callback that
// runs where the work happens; byWork says it ends work of v's that may set values (a tool call,
// its runnable), which then set what changed. Goroutines reading copies of events never look: eino may be
// writing the session at that very moment, and the trace would then depend on timing.
//
// What v's runnable set is held until v's own events have been read (see endOwnEvents): an agent
// may send an event and then store a value (plan-execute's planner sends its plan, then stores
// it), and its copy of events is read behind its callbacks.
func (r *Recorder) noticeSession(ctx context.Context, v *visit, byWork bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	sets := r.sessionChanges(ctx, v, byWork)
	if byWork && !v.eventsOver {
		v.heldSets = append(v.heldSets, sets...)
		return
	}
	r.recordSets(sets)
}

// inputMode tells what eino fed an AgentTool's callee: the request alone, as one user message, or
// (adk.WithFullChatHistoryAsInput) the caller's history without it; "" on resume.
// receivedRequest is the request an AgentTool's callee received. requestOf reads the "request"
// argument of adk.NewAgentTool; a typed AgentTool (the deep agent's task tool, say) takes other
// JSON arguments and hands the callee one of them as its only user message: when the callee was
// fed exactly one user message that is a string argument of the call, that message is the request.
func receivedRequest(request string, fed []traces.Message) string {
	if len(fed) != 1 || fed[0].Role != string(schema.User) || fed[0].Content == request {
		return request
	}
	var args map[string]any
	if json.Unmarshal([]byte(request), &args) != nil {
		return request
	}
	for _, a := range args {
		if s, ok := a.(string); ok && s == fed[0].Content {
			return s
		}
	}
	return request
}

func inputMode(request string, fed []traces.Message) string {
	if len(fed) == 0 {
		return "" // resumed: eino hands it its interrupt, not an input
	}
	if len(fed) == 1 && fed[0].Role == string(schema.User) && fed[0].Content == request {
		return traces.AgentToolInputRequest
	}
	return traces.AgentToolInputFullHistory
}
