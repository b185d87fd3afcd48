package record

import (
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
		if ev.Action != nil && ev.Action.Interrupted != nil && isWorkflow(v.kind) {
			v.interrupted = true // its step stopped at an interrupt, and it with its step
		}
	}
	echo := own && v.echoes.result(ev)
	var returned []*visit
	if own && !out && len(v.ownRuns) > 0 {
		returned = v.returnedRuns()
	}
	if echo && !out && len(returned) == 0 && ev.Action == nil && !v.outputs.busy() {
		// A tool result's echo with nothing to wait for (nearly a third of a run's events): counted
		// off without letting the lock go. Outputs start under it, so none is being read.
		v.heardEcho(ev)
		r.decideCall(v, ev)
		v.echoes.observedOwn()
		r.mu.Unlock()
		if mo := messageOf(ev); mo.IsStreaming {
			mo.MessageStream.Close() // this copy is the recorder's own: nobody else reads it
		}
		return
	}
	r.mu.Unlock()
	var msg *schema.Message
	var echoed bool // msg, streamed, is the echo of want (see readEcho)
	var wanted *traces.Message
	var streamedResult bool // msg is a streamed tool message, read to tell whose result it is
	if mo := messageOf(ev); mo != nil {
		switch {
		case !own || echo:
			if mo.IsStreaming {
				mo.MessageStream.Close() // this copy is the recorder's own: nobody else reads it
			}
		case mo.IsStreaming && v.repliesAreEvents() && mo.Role != schema.Tool:
			// Most likely the echo of the reply v's model is streaming: read once that reply is
			// recorded, and compared with it as it comes rather than joined.
			v.outputs.wait()
			r.mu.Lock()
			wanted = v.echoes.oldest()
			r.mu.Unlock()
			msg, echoed = readEcho(mo.MessageStream, mo.Role, wanted)
		case mo.IsStreaming:
			msg = readStream(mo.MessageStream, mo.Role)
			streamedResult = mo.Role == schema.Tool
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
	defer v.echoes.observedOwn()
	switch {
	case echo:
		v.heardEcho(ev)
		r.decideCall(v, ev)
	case echoed:
		v.echoes.countOff(wanted)
	case streamedResult && v.echoes.resultOf(msg.ToolCallID):
		v.heard(msg.ToolCallID, msg.Content)
		msg = nil // recorded from the tool's callbacks, its message where the visit goes on
	case msg != nil && msg.Role == schema.Tool && !out && v.heard(msg.ToolCallID, msg.Content):
		msg = nil // a failed call's, made a result by a middleware: the same
	case v.echoes.reply(msg):
		msg = nil // recorded from the model's callbacks
	}
	path := v.path
	if out {
		path = v.outerPath // the wrapper's own event
	}
	if len(v.answers) > 0 && (msg != nil || ev.Action != nil || ev.Err != nil) {
		r.answerAll(v) // the tool results' messages before what the agent said or did next
	}
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
		r.out.emit(&traces.Event{Kind: traces.KindMessage, Agent: v.agent, RunPath: path, Message: ptr(traceMessage(msg))})
	}
	if ev.Action != nil {
		r.observeAction(v, ev, path, msg, out)
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
//
// The run path and agent name eino puts on each event of an agent's run are its run context's,
// the very strings (each handler gets a copy of the path's steps, not of their names): an event
// that carries the very strings v's latest own event carried is v's own too, told with no byte
// compared (every event of a run is asked).
func (v *visit) ownEvent(ev *adk.AgentEvent) (own, out bool) {
	if sameRef(ev.AgentName, v.ownName) && sameSteps(ev.RunPath, v.ownSteps) {
		return true, false
	}
	if ev.AgentName != v.agent {
		return false, false
	}
	out = v.outer != "" && pathIs(ev.RunPath, v.outer)
	own = out || pathIs(ev.RunPath, v.local)
	if own && !out && len(ev.RunPath) > 0 {
		v.ownSteps, v.ownName = ev.RunPath, ev.AgentName
	}
	return own, out
}

// sameSteps reports whether a and b are the same steps, not empty, each named by the very same
// string.
func sameSteps(a, b []adk.RunStep) bool {
	if len(a) != len(b) || len(a) == 0 {
		return false
	}
	for i := range a {
		if !sameRef(a[i].String(), b[i].String()) {
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
		r.out.emit(&traces.Event{Kind: traces.KindExit, Agent: v.agent, RunPath: path, Exit: &traces.Exit{FinalResult: final}})
	case a.BreakLoop != nil:
		// The loop fills in CurrentIterations (counted from 0) only after the breaking agent's copy
		// of the event is made; the visit knows its own iteration.
		// (Reading it here would race with the loop writing it.)
		iterations := v.iteration
		r.out.emit(&traces.Event{Kind: traces.KindBreakLoop, Agent: v.agent, RunPath: path,
			BreakLoop: &traces.BreakLoop{From: a.BreakLoop.From, Iterations: iterations}})
	case a.Interrupted != nil:
		r.ownEnd(v, out)
		v.interrupted = true
		v.pendingInterrupt = nil
		r.run.interrupt = true
		if i := interruptOf(a.Interrupted); r.run.firstInterrupt(i.ID) {
			r.stoppedAt(i.ID)
			r.out.emit(&traces.Event{Kind: traces.KindInterrupted, Agent: v.agent, RunPath: path, Interrupt: i})
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

// readEcho reads a streamed message of a visit's own from its copy and closes it, comparing it
// as it comes with want, the oldest model reply recorded from callbacks that the copy has not
// echoed yet (nil for none): echoed when the message says what want says (the text and tool calls
// echoes.reply compares), else the message, joined. The copy repeats the chunks the reply was
// recorded from, read whole already: its text matched piece by piece and its tool calls, which
// nearly always come in one chunk, compared in place, an echo is neither joined nor copied.
func readEcho(sr *schema.StreamReader[*schema.Message], role schema.RoleType, want *traces.Message) (*schema.Message, bool) {
	if want == nil {
		return readStream(sr, role), false
	}
	defer sr.Close()
	acc := streamedMessage{role: role}
	matched := 0              // bytes of want's text the chunks so far repeat
	var calls *schema.Message // the one chunk so far that carried tool calls, all of want's
	var chunk *schema.Message
	var err error
	for {
		if chunk, err = sr.Recv(); err != nil {
			if matched == len(want.Content) && (calls != nil) == (len(want.ToolCalls) > 0) && acc.role != schema.Tool {
				return nil, true
			}
			break
		}
		if chunk == nil {
			continue
		}
		if chunk.Role != "" {
			acc.role = chunk.Role
		}
		if !strings.HasPrefix(want.Content[matched:], chunk.Content) ||
			len(chunk.ToolCalls) > 0 && (calls != nil || !sameCalls(chunk.ToolCalls, want.ToolCalls)) {
			break
		}
		matched += len(chunk.Content)
		if len(chunk.ToolCalls) > 0 {
			calls = chunk
		}
	}
	// Not an echo of want: joined, on what it repeated of want so far.
	acc.content = append(acc.content, want.Content[:matched]...)
	if calls != nil {
		acc.add(&schema.Message{ToolCalls: calls.ToolCalls})
	}
	for err == nil {
		acc.add(chunk)
		chunk, err = sr.Recv()
	}
	return acc.message(), false
}

// sameCalls reports whether tcs, one chunk's tool calls, are calls, joined as streamedMessage
// joins them: each whole, with its id, in its place, and the same (see sameCallsAs).
func sameCalls(tcs []schema.ToolCall, calls []traces.ToolCallSpec) bool {
	if len(tcs) != len(calls) {
		return false
	}
	for i := range tcs {
		if tc := &tcs[i]; tc.Index != nil && *tc.Index != i || tc.ID == "" {
			return false
		}
	}
	return sameCallsAs(tcs, calls)
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
