package record

import (
	"slices"
	"strings"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/schema"

	"github.com/baton-dev/baton/traces"
)

// observe records what an event of v's copy says that no callback said. A copy also carries the
// events of agents v runs as tools and of the steps it runs as a workflow: those are each of their
// own visits' to record, so only v's own events count, told by the agent and run path of the
// first one.
func (r *Recorder) observe(v *visit, ev *adk.AgentEvent) {
	r.mu.Lock()
	own, out := v.ownEvent(ev)
	if !own {
		v.noteForwarded(ev)
		if ev.Err != nil && ev.AgentName == "" {
			r.transfers.keepEinoError(ev.Err, v.boundary) // a workflow passes on what eino raised in it
		}
	}
	echo := own && v.isToolEcho(ev)
	var returned []*visit
	if own && !out {
		returned = v.returnedRuns()
	}
	r.mu.Unlock()
	var msg *schema.Message
	if mo := messageOf(ev); mo != nil {
		switch {
		case !own || echo:
			if mo.IsStreaming {
				mo.MessageStream.Close() // this copy is the recorder's own: nobody else reads it
			}
		case mo.IsStreaming:
			msg = readStream(mo.MessageStream, mo.Role)
		default:
			msg = mo.Message
		}
	}
	if !own {
		return
	}
	v.outputs.wait() // what v streamed before this event is recorded before it
	if out {
		// A wrapper sends its own events once the team it wraps has ended: every visit in it.
		r.awaitInside(v)
	}
	for _, c := range returned {
		c.await()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	defer v.noteCaughtUp()
	if echo {
		r.decideCall(v, ev)
	} else if v.isReplyEcho(msg) {
		msg = nil // recorded from the model's callbacks
	}
	path := v.path
	if ev.Err != nil {
		v.pendingError, v.pendingInterrupt = false, nil
		r.ownEnd(v, out)
		if !isInterrupt(ev.Err) {
			r.abandonTools(v, toolAbandoned)
			v.errMsg = ev.Err.Error()
			r.fail(v.agent, path, ev.Err.Error())
		}
		r.finishVisit(v)
		return
	}
	if msg != nil {
		r.out.emit(traces.Event{Kind: traces.KindMessage, Agent: v.agent, RunPath: path, Message: ptr(traceMessage(msg))})
	}
	if ev.Action != nil {
		r.observeAction(v, ev, path, msg, out)
	}
}

// echoesDue returns a channel closed once v's copy of events has carried, and the recorder
// recorded, the echo of every reply and tool result callbacks recorded of v so far (see
// Recorder.ending). Callers hold r.mu.
func (v *visit) echoesDue() <-chan struct{} {
	if len(v.unechoed) == 0 && v.echoedTool >= v.toolResults {
		return alwaysClosed
	}
	if v.caughtUp == nil {
		v.caughtUp = make(chan struct{})
	}
	return v.caughtUp
}

// noteCaughtUp wakes whoever waits for v's copy of events to catch up: an event of its own is
// recorded, and maybe the last echo due. Callers hold r.mu.
func (v *visit) noteCaughtUp() {
	if v.observed != nil {
		close(v.observed)
		v.observed = nil
	}
	if v.caughtUp != nil && len(v.unechoed) == 0 && v.echoedTool >= v.toolResults {
		close(v.caughtUp)
		v.caughtUp = nil
	}
}

// returnedRuns returns the visits v's own code ran on runs of their own whose work eino has ended
// and whose end is not recorded yet: an event of v waits for them. v's code goes on, and sends
// what follows, once such a run has returned (an AgentTool's InvokableRun, say), while its copy of
// events may still be being read. A run whose work goes on is not waited for: v may have sent the
// event before it started. Callers hold r.mu.
func (v *visit) returnedRuns() []*visit {
	var ran []*visit
	for _, c := range v.ownRuns {
		if c.runnable && c.runnableEnded && !c.closed {
			ran = append(ran, c)
		}
	}
	return ran
}

// ownEnd notes that v's event was its last own one: of the whole visit, or, when v holds a team
// and the event is not the wrapper's (out), of its first agent's work. Callers hold r.mu.
func (r *Recorder) ownEnd(v *visit, out bool) {
	if v.holds && !out {
		v.teamDone = true
		return
	}
	r.endOwnEvents(v)
	v.ownDone = true
}

// endOwnEvents records what v's runnable set and was held until v's own events were read: they
// have been. Callers hold r.mu.
func (r *Recorder) endOwnEvents(v *visit) {
	v.eventsOver = true
	r.recordSets(v.heldSets)
	v.heldSets = nil
}

// ownEvent reports whether ev is v's own: eino puts v's run path on v's own events; and out,
// whether it is the own event of a wrapper v folded, which carries the wrapper's path.
// Callers hold the recorder's lock.
func (v *visit) ownEvent(ev *adk.AgentEvent) (own, out bool) {
	if ev.AgentName != v.agent {
		return false, false
	}
	out = v.outer != "" && pathIs(ev.RunPath, v.outer)
	return out || pathIs(ev.RunPath, v.local), out
}

// expectToolEcho counts a tool result of v recorded from a callback, whose copy v's events will
// also carry. Callers hold the recorder's lock.
func (v *visit) expectToolEcho() { v.toolResults++ }

// isToolEcho reports whether ev repeats a tool result callbacks already recorded, and counts it
// off: a chat model agent's events carry each result of its tools. Callers hold r.mu.
func (v *visit) isToolEcho(ev *adk.AgentEvent) bool {
	mo := messageOf(ev)
	if ev.Err != nil || mo == nil || mo.Role != schema.Tool {
		return false
	}
	echo := v.echoedTool < v.toolResults
	v.echoedTool += btoi(echo)
	return echo
}

// isReplyEcho reports whether msg, a message of v's own events, repeats one of v's model replies
// recorded from callbacks, and counts off that reply and any before it (events keep their order).
// A chat model agent's events carry each reply as it is; an agent that sends a message of its own
// (plan-execute's planner and replanner send their model's tool call arguments: the plan, the
// response) sends another message, which is the agent's. Callers hold r.mu, after v's replies
// streamed so far are recorded.
func (v *visit) isReplyEcho(msg *schema.Message) bool {
	if msg == nil || msg.Role == schema.Tool {
		return false
	}
	i := slices.IndexFunc(v.unechoed, func(reply *traces.Message) bool { return sameReply(msg, reply) })
	if i < 0 {
		return false
	}
	v.unechoed = v.unechoed[i+1:]
	return true
}

// sameReply reports whether msg says what reply, as recorded, says: the same text and tool calls.
func sameReply(msg *schema.Message, reply *traces.Message) bool {
	if msg.Content != reply.Content || len(msg.ToolCalls) != len(reply.ToolCalls) {
		return false
	}
	for i, tc := range msg.ToolCalls {
		rc := reply.ToolCalls[i]
		if tc.ID != rc.ID || tc.Function.Name != rc.Name || tc.Function.Arguments != rc.Arguments {
			return false
		}
	}
	return true
}

// observeAction records an event's action; an action that ends the agent's turn makes ev its
// last own event. Callers hold r.mu.
func (r *Recorder) observeAction(v *visit, ev *adk.AgentEvent, path []string, msg *schema.Message, out bool) {
	a := ev.Action
	switch {
	case a.TransferToAgent != nil:
		r.ownEnd(v, out)
		if msg != nil || ev.Output == nil {
			// A transfer no transfer_to_agent tool call announced: a deterministic wrapper or a
			// custom agent emitted it (a model's transfer was recorded from its tool callback).
			callID := ""
			if msg != nil {
				callID = msg.ToolCallID
			}
			r.holdTransfer(v, traces.Transfer{From: v.agent, To: a.TransferToAgent.DestAgentName, Mode: traces.TransferDeterministic, CallID: callID}, out)
		}
	case a.Exit:
		r.ownEnd(v, out)
		final := ""
		if msg != nil {
			final = msg.Content
		} else if mo := messageOf(ev); mo != nil && mo.Message != nil {
			final = mo.Message.Content
		}
		r.out.emit(traces.Event{Kind: traces.KindExit, Agent: v.agent, RunPath: path, Exit: &traces.Exit{FinalResult: final}})
	case a.BreakLoop != nil:
		// The loop fills in CurrentIterations (counted from 0) only after the breaking agent's copy
		// of the event is made; the visit knows its own iteration.
		// (Reading it here would race with the loop writing it.)
		iterations := v.iteration
		r.out.emit(traces.Event{Kind: traces.KindBreakLoop, Agent: v.agent, RunPath: path,
			BreakLoop: &traces.BreakLoop{From: a.BreakLoop.From, Iterations: iterations}})
	case a.Interrupted != nil:
		r.ownEnd(v, out)
		v.interrupted = true
		v.pendingInterrupt = nil
		r.run.interrupt = true
		if i := interruptOf(a.Interrupted); r.run.firstInterrupt(i.ID) {
			r.stoppedAt(i.ID)
			r.out.emit(traces.Event{Kind: traces.KindInterrupted, Agent: v.agent, RunPath: path, Interrupt: i})
		}
	}
	r.finishVisit(v)
}

// messageOf returns the message output an event carries, or nil.
func messageOf(ev *adk.AgentEvent) *adk.MessageVariant {
	if ev.Output == nil {
		return nil
	}
	return ev.Output.MessageOutput
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

// pathIs reports whether rp, its steps joined with ">", is key: without joining them, since
// every event of a run is asked.
func pathIs(rp []adk.RunStep, key string) bool {
	for i := range rp {
		if i > 0 {
			if !strings.HasPrefix(key, ">") {
				return false
			}
			key = key[1:]
		}
		name := rp[i].String()
		if !strings.HasPrefix(key, name) {
			return false
		}
		key = key[len(name):]
	}
	return key == ""
}
