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
	}
	echo := own && v.echoes.result(ev)
	var returned []*visit
	if own && !out {
		returned = v.returnedRuns()
	}
	if echo && !out && len(returned) == 0 && ev.Action == nil && !v.outputs.busy() {
		// A tool result's echo with nothing to wait for (nearly a third of a run's events): counted
		// off without letting the lock go. Outputs start under it, so none is being read.
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
	defer v.echoes.observedOwn()
	if echo {
		r.decideCall(v, ev)
	} else if v.echoes.reply(msg) {
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
func (v *visit) ownEvent(ev *adk.AgentEvent) (own, out bool) {
	if ev.AgentName != v.agent {
		return false, false
	}
	out = v.outer != "" && pathIs(ev.RunPath, v.outer)
	return out || pathIs(ev.RunPath, v.local), out
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
