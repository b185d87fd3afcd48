package record

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"

	"github.com/cloudwego/eino/callbacks"
	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"

	"github.com/baton-dev/baton/traces"
)

// transferToolName is the tool eino gives a model that may transfer to other agents.
const transferToolName = "transfer_to_agent"

// calls are a run's model, tool and AgentTool calls: counted, for their ids and order, and the
// tool and AgentTool calls in progress. Their callers hold the recorder's lock.
type calls struct {
	models, tools int // calls started so far
	// open are the tool calls in progress, in no order (abandon sorts them by start). A call is
	// found at the index its callbacks' call keeps (call.openAt): a third of a run's callbacks
	// are tool calls' starts and ends, where a map by call id hashed the id three times a call.
	open       []openTool
	agentTools map[string]*agentToolCall // AgentTool calls in progress, by call id
}

func newCalls() calls {
	return calls{agentTools: make(map[string]*agentToolCall)}
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

// nextModel returns the id of the model call starting.
func (c *calls) nextModel() string {
	c.models++
	return "m" + strconv.Itoa(c.models)
}

// startTool notes tool call t in progress, started after all the others.
func (c *calls) startTool(t openTool) {
	c.tools++
	t.order = c.tools
	c.place(len(c.open), t.call)
	c.open = append(c.open, t)
}

// place notes that the tool call of cl (nil for none) is at index i of open.
func (c *calls) place(i int, cl *call) {
	if cl != nil {
		cl.openAt = int32(i)
	}
}

// tool returns the tool call callID in progress (the latest started of that id), or the zero
// openTool.
func (c *calls) tool(callID string) openTool {
	var t openTool
	for _, o := range c.open {
		if o.callID == callID && o.order > t.order {
			t = o
		}
	}
	return t
}

// endTool notes that the tool call of cl (when cl is nil, the latest started of id callID) ended
// and returns its arguments ("" when it was not in progress).
func (c *calls) endTool(cl *call, callID string) (args string) {
	i := -1
	switch {
	case cl != nil && int(cl.openAt) < len(c.open) && c.open[cl.openAt].call == cl:
		i = int(cl.openAt)
	case cl != nil:
		i = slices.IndexFunc(c.open, func(t openTool) bool { return t.call == cl })
	default:
		for j, t := range c.open {
			if t.callID == callID && (i < 0 || t.order > c.open[i].order) {
				i = j
			}
		}
	}
	if i < 0 {
		return ""
	}
	args = c.open[i].args
	last := len(c.open) - 1
	if i != last { // else the latest started ended, as every call of tools run one after another
		c.open[i] = c.open[last]
		c.place(i, c.open[i].call)
	}
	c.open[last] = openTool{} // lets go of what it held
	c.open = c.open[:last]
	return args
}

// abandon ends and returns, in the order they started, the tool calls of v (of every visit when
// v is nil) in progress, but those whose end eino has begun to report: that end is theirs.
func (c *calls) abandon(v *visit) []openTool {
	var open []openTool
	kept := c.open[:0]
	for _, t := range c.open {
		if (v == nil || t.v == v) && (t.call == nil || t.call.ended.CompareAndSwap(false, true)) {
			open = append(open, t)
			continue
		}
		c.place(len(kept), t.call)
		kept = append(kept, t)
	}
	clear(c.open[len(kept):])
	c.open = kept
	slices.SortFunc(open, func(a, b openTool) int { return a.order - b.order })
	return open
}

// enter notes AgentTool call callID in progress: what agenttool.entered says, and its callee.
func (c *calls) enter(callID string, call traces.AgentToolCall, callee *visit) {
	c.agentTools[callID] = &agentToolCall{AgentToolCall: call, callee: callee}
}

// agentTool returns the AgentTool call callID in progress, or nil when it is none (most tool
// calls are ordinary ones, asked about at each end: a pointer spares them copying a call).
func (c *calls) agentTool(callID string) *agentToolCall { return c.agentTools[callID] }

// returned notes that eino ended AgentTool call callID, and reports whether it is one in
// progress.
func (c *calls) returned(callID string) bool {
	call := c.agentTools[callID]
	if call != nil {
		call.returned = true
	}
	return call != nil
}

// exit returns the AgentTool call callID, or nil when it is none in progress, and notes it ended.
func (c *calls) exit(callID string) *agentToolCall {
	call := c.agentTools[callID]
	if call != nil {
		delete(c.agentTools, callID)
	}
	return call
}

// anyOpen reports whether a tool or AgentTool call is in progress.
func (c *calls) anyOpen() bool { return len(c.open) > 0 || len(c.agentTools) > 0 }

// anyAgentTool reports whether an AgentTool call is in progress: most tool calls' ends then ask
// nothing about AgentTool calls.
func (c *calls) anyAgentTool() bool { return len(c.agentTools) > 0 }

// modelStarted records a model call and returns its id and start. What v changed in the session
// before it (a custom agent's preparation, such as plan-execute's replanner recording the steps
// done) is recorded first.
func (r *Recorder) modelStarted(ctx context.Context, v *visit, in *model.CallbackInput) (string, clock) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.out.stampNow()
	defer r.out.unstamp()
	r.commit(v)
	if len(v.answers) > 0 && in != nil {
		r.answerFromInput(v, in.Messages)
	}
	r.diffSession(ctx, v, false)
	id := r.calls.nextModel()
	mc := &traces.ModelCall{ID: id}
	if in != nil && in.Config != nil {
		v.model = in.Config.Model
	}
	mc.Name = v.model
	if in != nil {
		if len(in.Tools) > 0 {
			mc.Tools = v.toolNames(in.Tools)
		}
		r.tree.modelCall(v.agent, in.Messages, mc.Tools)
		r.putAgents()
		keep := v.inputs.extends(in.Messages)
		if keep > 0 && v.inputs.seq > 0 {
			// The common case: the conversation so far and what the agent added to it.
			mc.Input = v.inputs.added(in.Messages[keep:])
			e := traces.Event{Kind: traces.KindModelStarted, Agent: v.agent, RunPath: v.path, Model: mc}
			if r.out.emitExtending(&e, v.inputs.seq, keep, v.inputs.results) {
				v.inputs.recorded(in.Messages, e.Seq)
				return id, now
			}
		}
		mc.Input = v.inputs.convert(in.Messages, keep)
	}
	r.out.emit(&traces.Event{Kind: traces.KindModelStarted, Agent: v.agent, RunPath: v.path, Model: mc})
	if in != nil && r.out.rec != nil {
		v.inputs.seq = r.out.lastSeq // 0 when it waits parked
	}
	return id, now
}

// toolNames returns the names of the tools a model call of v is given (not empty), as the
// latest call's list when they are the same: a model is given the same tools call after call, and
// a list, never changed once made, is shared by the events that carry it. Callers hold r.mu.
func (v *visit) toolNames(tools []*schema.ToolInfo) []string {
	n := 0
	for _, t := range tools {
		if t == nil {
			continue
		}
		if n == len(v.toolList) || v.toolList[n] != t.Name {
			n = -1
			break
		}
		n++
	}
	if n > 0 && n == len(v.toolList) {
		return v.toolList
	}
	names := make([]string, 0, len(tools))
	for _, t := range tools {
		if t != nil {
			names = append(names, t.Name)
		}
	}
	v.toolList = names
	return names
}

// modelFinished records a model's reply (or failure) and the reply as the agent's message, which
// the visit's copy of events will echo (see echoes). calls, when not nil, are the reply's tool
// calls, joined in trace form (a streamed reply's, see readModelStream), msg carrying none. cfg is
// the config the reply came with; when it names no model, the name its start reported stands.
func (r *Recorder) modelFinished(c *call, msg *schema.Message, calls []traces.ToolCallSpec, usage *model.TokenUsage, cfg *model.Config, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.out.stampNow()
	defer r.out.unstamp()
	// The call, its reply and its usage, allocated together.
	ended := &struct {
		mc    traces.ModelCall
		out   traces.Message
		usage traces.Usage
	}{mc: traces.ModelCall{ID: c.modelID, DurationMS: millis(c.started.until(now)), Error: errText(err)}}
	mc := &ended.mc
	if cfg != nil && cfg.Model != "" {
		c.v.model = cfg.Model
	}
	mc.Name = c.v.model
	if msg != nil {
		ended.out = traceMessage(msg)
		if calls != nil {
			ended.out.ToolCalls = calls
		}
		mc.Output = &ended.out
		if u := traceUsage(msg); u != nil {
			ended.usage, mc.Usage = *u, &ended.usage
		}
		c.v.lastReply = msg.Content
		if c.v.repliesAreEvents() {
			c.v.echoes.expectReply(mc.Output)
		}
		c.v.calls, c.v.handedOff = ended.out.ToolCalls, false
	}
	if usage != nil {
		ended.usage = traces.Usage{PromptTokens: usage.PromptTokens, CompletionTokens: usage.CompletionTokens, TotalTokens: usage.TotalTokens}
		mc.Usage = &ended.usage
	}
	r.out.emit(&traces.Event{Kind: traces.KindModelFinished, Agent: c.v.agent, RunPath: c.v.path, Model: mc})
	c.v.finishedAt = r.out.lastSeq
	if err != nil {
		r.queueStop(Stop{Break: traces.BreakError, Agent: c.v.agent, Target: c.v.agent, Detail: c.v.agent + "'s model call failed: " + mc.Error})
	}
	if msg != nil && c.v.repliesAreEvents() {
		r.out.emit(&traces.Event{Kind: traces.KindMessage, Agent: c.v.agent, RunPath: c.v.path, Message: mc.Output})
	}
	if c.v.handedTo && !c.v.lambda {
		c.v.ownDone = true // a specialist's work is its one model call
		r.finishVisit(c.v)
	}
}

// toolStarted records tool call c (callID) and notes its start. Its payload is the call's own
// (see toolEvents), or the delivery's (see delivery.reuses).
func (r *Recorder) toolStarted(c *call, info *callbacks.RunInfo, callID string, in *tool.CallbackInput) {
	args := ""
	if in != nil {
		args = in.ArgumentsInJSON
	}
	v := c.v
	r.mu.Lock()
	defer r.mu.Unlock()
	c.started = r.out.stampNow()
	r.commit(v)
	v.calls = nil // its model's calls run as tools, not as a host's handoffs
	r.calls.startTool(openTool{name: info.Name, args: args, v: v, callID: callID, call: c})
	// Field by field, as no other field of a start is ever set: a struct assigned whole is built
	// aside and copied.
	tc := &r.out.payloads(c).started
	tc.Name, tc.CallID, tc.Arguments = info.Name, callID, args
	r.out.emitTool(false, v.agent, v.path, tc, nil, nil)
	r.out.unstamp() // not deferred, as the session's look in toolFinished: a third of a run's callbacks
}

// Why a tool call is recorded ended though eino never ended it. eino fires no end or error
// callback for a tool that panics: its graph recovers the panic and fails the agent.
const (
	toolAbandoned = "the tool never returned: its agent's work failed while it ran (eino ends a tool that panics with no callback)"
	toolLeftOpen  = "the tool never returned: it panicked or the run was stopped"
)

// abandonTools records as ended, never returned for why, the tool calls of v (of every visit when
// v is nil) that eino has not ended, in the order they started: v's work is over. An end eino
// reports for one of them later is ignored; one whose end eino has begun to report is left to it.
// Callers hold r.mu.
func (r *Recorder) abandonTools(v *visit, why string) {
	for _, t := range r.calls.abandon(v) {
		r.out.emit(&traces.Event{Kind: traces.KindToolFinished, Agent: t.v.agent, RunPath: t.v.path,
			Tool: &traces.ToolCall{Name: t.name, CallID: t.callID, Error: why}})
	}
}

// toolFinished records a tool's result, and what it meant: the end of an AgentTool call, or a
// transfer chosen by the model; then the session values the call set (ctx is the tool's). A
// tool that interrupts the run is not a failure. The end of an AgentTool call that returned is
// parked until v's copy of events tells how its inner events were seen (see inner.go). echo says
// the result's echo in v's copy of events is still to be counted (see echoes).
//
// An ordinary tool's end takes the recorder's lock once: it is a third of a run's callbacks.
func (r *Recorder) toolFinished(ctx context.Context, info *callbacks.RunInfo, c *call, result string, err error, echo bool) {
	r.mu.Lock()
	if echo {
		c.v.echoes.expectResult(c.toolCallID)
	}
	if r.calls.anyAgentTool() {
		r.agentToolEnding(c.toolCallID, err)
	}
	defer r.mu.Unlock()
	now := r.out.stampNow()
	v, callID := c.v, c.toolCallID
	args := r.calls.endTool(c, callID)
	if r.calls.anyAgentTool() {
		if open := r.calls.exit(callID); open != nil {
			r.agentToolExited(v, callID, open, result, err)
		}
	}
	// The end and the result's message, allocated with the call (see toolEvents) or the
	// delivery's; the message filled only where it is built (see delivery.emitTool). A chat
	// model agent's message is the agent's, recorded as it sends it (see answers.go).
	ended := r.out.payloads(c)
	tc := &ended.ended // field by field, as a start's (no end has arguments)
	tc.Name, tc.CallID, tc.Result, tc.Error = info.Name, callID, result, ""
	tc.DurationMS, tc.Interrupted = millis(c.started.until(now)), false
	// The end, then its result's message, recorded at once (see delivery.emitTool), with no
	// Event on the small stack of a goroutine eino starts for the tool call (see
	// delivery.parkBehind): their time is the callback's, their seqs the sink's.
	if err != nil {
		interrupted := isInterrupt(err)
		if interrupted {
			tc.Interrupted = true
		} else {
			tc.Error = err.Error()
		}
		r.out.emitTool(true, v.agent, v.path, tc, nil, nil)
		r.toolFailed(v, info.Name, interrupted, tc.Error)
		if v.chat && !interrupted {
			v.awaitAnswer(tc, nil, true)
		}
	} else {
		result, res := &ended.result, v.inputs.nextResult()
		if v.chat {
			result = nil // the agent's message, which may say another result (see answers.go)
			v.awaitAnswer(tc, res, false)
		}
		r.out.emitTool(true, v.agent, v.path, tc, result, res)
		if info.Name == transferToolName {
			r.toolTransferred(v, args, callID)
		}
	}
	// Then the session values the call set, of its time; later events are stamped by the sink.
	r.diffSession(ctx, v, true)
	r.out.unstamp()
}

// agentToolEnding notes that the tool call callID returned, and, for an AgentTool call, waits
// until its callee's visits, which finished in eino before the tool returned, are recorded as
// finished. Callers hold r.mu, which it releases while it waits.
func (r *Recorder) agentToolEnding(callID string, err error) {
	r.agentToolReturned(callID, err)
	if inside := r.insideCallee(callID); len(inside) > 0 {
		r.mu.Unlock()
		for _, v := range inside {
			v.await()
		}
		r.mu.Lock()
	}
}

// agentToolExited records the end of v's AgentTool call open (callID), which returned result or
// err. Callers hold r.mu.
func (r *Recorder) agentToolExited(v *visit, callID string, open *agentToolCall, result string, err error) {
	call := open.AgentToolCall
	call.Result = result
	if err == nil {
		if v.inner.echoedCall(callID) {
			call.InnerEvents = v.inner.innerEvents(call.Callee)
		} else {
			r.out.park(v, callID, call.Callee)
		}
	}
	r.out.emit(&traces.Event{Kind: traces.KindAgentToolExit, Agent: v.agent, RunPath: v.path, AgentTool: &call})
}

// toolFailed queues the stop of v's tool name, which interrupted the run or failed with errMsg.
// Callers hold r.mu.
func (r *Recorder) toolFailed(v *visit, name string, interrupted bool, errMsg string) {
	if interrupted {
		r.queueStop(Stop{Break: traces.BreakInterrupt, Agent: v.agent, Target: name, Detail: "the tool " + name + " of " + v.agent + " interrupts the run"})
	} else {
		r.queueStop(Stop{Break: traces.BreakError, Agent: v.agent, Target: name, Detail: "the tool " + name + " of " + v.agent + " failed: " + errMsg})
	}
}

// toolTransferred holds the transfer of v's transfer_to_agent call callID, given args.
// Callers hold r.mu.
func (r *Recorder) toolTransferred(v *visit, args, callID string) {
	var target struct {
		AgentName string `json:"agent_name"`
	}
	if json.Unmarshal([]byte(args), &target) == nil && target.AgentName != "" {
		r.holdTransfer(v, traces.Transfer{From: v.agent, To: target.AgentName, Mode: traces.TransferLLM, CallID: callID}, false)
	}
}

// insideCallee returns, when callID is an AgentTool call, the callee's visit and the visits it
// handed work to (transfer targets inside the tool). Callers hold r.mu.
func (r *Recorder) insideCallee(callID string) []*visit {
	if call := r.calls.agentTool(callID); call != nil && call.callee != nil {
		return r.visits.under(call.callee.path)
	}
	return nil
}

// requestOf extracts the request an AgentTool received from its JSON arguments.
func requestOf(args string) string {
	var in struct {
		Request string `json:"request"`
	}
	if json.Unmarshal([]byte(args), &in) == nil && in.Request != "" {
		return in.Request
	}
	return args
}

// errText is err's message, or "" for nil and for an interrupt, which is not a failure.
func errText(err error) string {
	if err == nil || isInterrupt(err) {
		return ""
	}
	return err.Error()
}

// isInterrupt reports whether err is eino's interrupt signal (a tool or agent asking to stop and
// be resumed) rather than a failure.
func isInterrupt(err error) bool {
	if err == nil {
		return false
	}
	_, graph := compose.ExtractInterruptInfo(err)
	_, signal := compose.IsInterruptRerunError(err)
	return graph || signal
}

// repliesAreEvents reports whether each model reply in v is also one of the Runner's events, so
// recorded as a message from the model's callbacks (and its echo in v's events dropped): a chat
// model agent's, and a host specialist's. A custom agent sends what it sends (plan-execute's
// planner the arguments of its model's call, not the reply): its events are its messages.
func (v *visit) repliesAreEvents() bool { return v.chat || v.handedTo }
