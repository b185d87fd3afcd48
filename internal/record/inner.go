package record

import (
	"strings"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/schema"

	"github.com/baton-dev/baton/traces"
)

// Whether the caller's event stream carries the events inside an AgentTool call (eino's
// ToolsConfig.EmitInternalEvents, which no callback reveals) is learnt from the caller's copy of
// its events: eino forwards them there, on a goroutine of its own, before the call's tool result.
// So the end of an AgentTool call (agenttool.exited first) is parked until that result reaches the
// copy, and everything recorded after it waits behind it, in order, to reach the sink: the story
// keeps its order, agenttool.exited says which it was, and the app never waits for the recorder.
//
// The copy may carry the result late, or never: a ReturnDirectly tool's result comes once its
// whole turn has ended, and a custom agent that runs tools itself may send none. The caller's
// copy ends with its visit, which decides what is left.

// parkedCall is the end of visit v's AgentTool call callID, whose inner events are not decided
// yet, with every event recorded after it until the next parked call.
type parkedCall struct {
	v              *visit
	callID, callee string
	decided        bool
	events         []traces.Event // agenttool.exited first
}

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

// park parks the end of v's AgentTool call callID, recorded next, unless v's copy already
// carried its result; it reports whether it did. Callers hold r.mu.
func (r *Recorder) park(v *visit, callID, callee string) bool {
	if _, seen := v.echoedCalls[callID]; seen {
		delete(v.echoedCalls, callID)
		return false
	}
	r.parked = append(r.parked, &parkedCall{v: v, callID: callID, callee: callee})
	return true
}

// decideCall decides v's parked call whose tool result ev carries, now that every event forwarded
// from inside it came before. Callers hold r.mu.
func (r *Recorder) decideCall(v *visit, ev *adk.AgentEvent) {
	mo := messageOf(ev)
	if mo == nil || mo.Role != schema.Tool || mo.Message == nil || mo.Message.ToolCallID == "" {
		return
	}
	callID := mo.Message.ToolCallID
	for _, p := range r.parked {
		if p.v == v && p.callID == callID && !p.decided {
			p.decided = true
			r.releaseDecided()
			return
		}
	}
	if _, open := r.agentTools[callID]; !open {
		return // an ordinary tool's result: nothing waits for it (noting it would keep every one)
	}
	if v.echoedCalls == nil {
		v.echoedCalls = make(map[string]struct{})
	}
	v.echoedCalls[callID] = struct{}{} // its end is not recorded yet: it will be decided then
}

// decideAll decides the parked calls of v (of every visit when v is nil) by what the copies
// carried so far: v's copy has ended, or the run has. Callers hold r.mu.
func (r *Recorder) decideAll(v *visit) {
	for _, p := range r.parked {
		if v == nil || p.v == v {
			p.decided = true
		}
	}
	r.releaseDecided()
}

// releaseDecided hands the sink the parked calls, and what waited behind them, up to the first
// undecided one. Callers hold r.mu.
func (r *Recorder) releaseDecided() {
	for len(r.parked) > 0 && r.parked[0].decided {
		p := r.parked[0]
		r.parked = r.parked[1:]
		p.events[0].AgentTool.InnerEvents = p.v.innerEvents(p.callee)
		for _, e := range p.events {
			r.deliver(e)
		}
	}
}
