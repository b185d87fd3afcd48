package attach

import (
	"strings"
	"time"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/schema"

	"github.com/baton-dev/baton/traces"
)

// Whether the caller's event stream carries the events inside an AgentTool call (eino's
// ToolsConfig.EmitInternalEvents, which no callback reveals) is learnt from the caller's copy of
// its events: eino forwards them there, on a goroutine of its own, before the call's tool result.
// So the end of an AgentTool call (agenttool.exited, tool.finished, the tool message and the
// session values the call set) is parked until that result reaches the copy, and recorded then,
// saying which it was. The ends of the caller's other tool calls that come meanwhile (calls of the
// same model turn, run in parallel) are parked behind it, and recorded after it; whatever the
// caller does next waits for them all, so the story keeps its order.
//
// A ReturnDirectly tool's result reaches the copy only once every call of its turn has ended:
// parking the ends of the others behind it, rather than waiting for it, is what lets them end.

// parkedCall is the recorded end of a tool call of a visit, held until it can be recorded: for an
// AgentTool call (callee set), until the caller's copy of events says whether it carried the
// call's inner events; for any other, until the calls parked before it are recorded.
type parkedCall struct {
	callID, callee string
	decided        bool           // it may be recorded once those before it are
	events         []traces.Event // agenttool.exited first, for an AgentTool call
}

// parkWait bounds how long a caller's next step waits for its parked calls to be recorded:
// normally the time the caller's copy takes to catch up; longer only if eino sent no tool result
// event for an AgentTool call (a tool run outside a chat model agent).
const parkWait = causeWait

// noteForwarded counts ev, an event of v's copy that is not v's own, when eino forwarded it from
// inside an AgentTool call v made: its run path is v's, then the callee's name, then more.
// Callers hold r.mu.
func (v *visit) noteForwarded(ev *adk.AgentEvent) {
	n := strings.Count(v.local, ">") + 1
	if v.local == "" || len(ev.RunPath) <= n || !pathIs(ev.RunPath[:n], v.local) {
		return
	}
	if v.forwarded == nil {
		v.forwarded = make(map[string]int)
	}
	v.forwarded[ev.RunPath[n].String()]++
}

// innerEvents is what v's copy said, so far, of the events inside its calls of callee.
// Callers hold r.mu.
func (v *visit) innerEvents(callee string) string {
	if v.forwarded[callee] > 0 {
		return traces.InnerEventsStream
	}
	return traces.InnerEventsCallbacks
}

// park starts holding the end of v's tool call callID, an AgentTool call of callee or, with
// callee "", any other: until unpark, what the recorder emits goes to the returned call. It
// returns nil when the end can be recorded now: nothing of v is parked before it, and it is no
// AgentTool call, or v's copy already carried its result (eino hands v's copy over on a goroutine
// of its own, which may start late; every visit's copy is read to its end, which decides what is
// left). Callers hold r.mu.
func (r *Recorder) park(v *visit, callID, callee string) *parkedCall {
	decided := callee == ""
	if _, seen := v.echoedCalls[callID]; seen && !decided {
		delete(v.echoedCalls, callID)
		decided = true
	}
	if decided && len(v.parked) == 0 {
		return nil
	}
	p := &parkedCall{callID: callID, callee: callee, decided: decided}
	r.holding = p
	return p
}

// unpark stops holding and leaves p to be recorded in its turn. Callers hold r.mu.
func (r *Recorder) unpark(v *visit, p *parkedCall) {
	r.holding = nil
	v.parked = append(v.parked, p)
	v.undecided.add()
}

// decideCall decides v's parked AgentTool call whose result ev carries, now that every event
// forwarded from inside it came before, and records what may be recorded. Callers hold r.mu.
func (r *Recorder) decideCall(v *visit, ev *adk.AgentEvent) {
	mo := messageOf(ev)
	if mo == nil || mo.Role != schema.Tool || mo.Message == nil || mo.Message.ToolCallID == "" {
		return
	}
	callID := mo.Message.ToolCallID
	for _, p := range v.parked {
		if p.callID == callID && !p.decided {
			p.decided = true
			for len(v.parked) > 0 && v.parked[0].decided {
				r.releaseFirst(v)
			}
			return
		}
	}
	if v.echoedCalls == nil {
		v.echoedCalls = make(map[string]struct{})
	}
	v.echoedCalls[callID] = struct{}{} // its end is not recorded yet: it will be decided then
}

// releaseAll records every call of v still parked, decided by what v's copy carried: its copy has
// ended, or the run has. Callers hold r.mu.
func (r *Recorder) releaseAll(v *visit) {
	for len(v.parked) > 0 {
		r.releaseFirst(v)
	}
}

// releaseFirst records v's first parked call. Callers hold r.mu.
func (r *Recorder) releaseFirst(v *visit) {
	p := v.parked[0]
	v.parked = v.parked[1:]
	if p.callee != "" {
		p.events[0].AgentTool.InnerEvents = v.innerEvents(p.callee)
	}
	for _, e := range p.events {
		r.emit(e)
	}
	v.undecided.done()
}

// awaitDecisions waits until v's parked calls are recorded, at most parkWait: what v does next
// comes after them.
func (v *visit) awaitDecisions() {
	v.undecided.waitAtMost(parkWait)
}

// waitAtMost is wait, giving up after d.
func (f *inflight) waitAtMost(d time.Duration) {
	f.mu.Lock()
	if f.n == 0 {
		f.mu.Unlock()
		return
	}
	idle := f.idle
	f.mu.Unlock()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-idle:
	case <-t.C:
	}
}
