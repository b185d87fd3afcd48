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
// saying which it was; whatever the caller does next waits for it, so the story keeps its order.

// parkedCall is the recorded end of an AgentTool call, held until the caller's copy of events
// says whether it carried the call's inner events.
type parkedCall struct {
	callID, callee string
	events         []traces.Event // agenttool.exited first
}

// parkWait bounds how long a caller's next step waits for a parked call to be decided: normally
// the time the caller's copy takes to catch up; longer only if eino sent no tool result event
// for the call (a tool run outside a chat model agent).
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

// park starts holding v's events for the AgentTool call callID: until unpark, what the recorder
// emits goes to the returned call. It returns nil when the call can be decided now: v's copy
// already carried its result. (eino hands v's copy over on a goroutine of its own, which may
// start late; every visit's copy is read to its end, which decides what is left.)
// Callers hold r.mu.
func (r *Recorder) park(v *visit, callID, callee string) *parkedCall {
	if _, seen := v.echoedCalls[callID]; seen {
		delete(v.echoedCalls, callID)
		return nil
	}
	p := &parkedCall{callID: callID, callee: callee}
	r.holding = p
	return p
}

// unpark stops holding and leaves p to be decided by v's copy. Callers hold r.mu.
func (r *Recorder) unpark(v *visit, p *parkedCall) {
	r.holding = nil
	v.parked = append(v.parked, p)
	v.undecided.add()
}

// decideCall records the parked call callID of v, now that v's copy carried its tool result:
// every event forwarded from inside it came before. Callers hold r.mu.
func (r *Recorder) decideCall(v *visit, ev *adk.AgentEvent) {
	mo := messageOf(ev)
	if mo == nil || mo.Role != schema.Tool || mo.Message == nil || mo.Message.ToolCallID == "" {
		return
	}
	callID := mo.Message.ToolCallID
	for i, p := range v.parked {
		if p.callID == callID {
			r.release(v, i)
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
		r.release(v, 0)
	}
}

// release records v's parked call i. Callers hold r.mu.
func (r *Recorder) release(v *visit, i int) {
	p := v.parked[i]
	v.parked = append(v.parked[:i], v.parked[i+1:]...)
	p.events[0].AgentTool.InnerEvents = v.innerEvents(p.callee)
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
