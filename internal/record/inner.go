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

// forwarding is what a visit's copy of events carried from inside its AgentTool calls: how many
// events, per callee, and the calls whose result it carried before their end was recorded.
type forwarding struct {
	byCallee map[string]int
	echoed   map[string]struct{}
}

// noteForwarded counts ev, an event of v's copy that is not v's own, when eino forwarded it from
// inside an AgentTool call v made: its run path is v's, then the callee's name, then more.
// Callers hold r.mu.
func (v *visit) noteForwarded(ev *adk.AgentEvent) {
	n := strings.Count(v.local, ">") + 1
	if v.local == "" || len(ev.RunPath) <= n || !pathIs(ev.RunPath[:n], v.local) {
		return
	}
	if v.inner.byCallee == nil {
		v.inner.byCallee = make(map[string]int)
	}
	v.inner.byCallee[ev.RunPath[n].String()]++
}

// innerEvents is what the copy said, so far, of the events inside the calls of callee.
// Callers hold r.mu.
func (f *forwarding) innerEvents(callee string) string {
	if f.byCallee[callee] > 0 {
		return traces.InnerEventsStream
	}
	return traces.InnerEventsCallbacks
}

// echo notes that the copy carried the result of AgentTool call callID before its end was
// recorded: it will be decided then.
func (f *forwarding) echo(callID string) {
	if f.echoed == nil {
		f.echoed = make(map[string]struct{})
	}
	f.echoed[callID] = struct{}{}
}

// echoedCall reports whether the copy already carried the result of AgentTool call callID, whose
// end is being recorded, and forgets it: the call is decided then (see decideCall).
// Callers hold the recorder's lock.
func (f *forwarding) echoedCall(callID string) bool {
	if _, seen := f.echoed[callID]; seen {
		delete(f.echoed, callID)
		return true
	}
	return false
}

// decideCall decides v's parked call whose tool result ev carries, now that every event forwarded
// from inside it came before. Callers hold r.mu.
func (r *Recorder) decideCall(v *visit, ev *adk.AgentEvent) {
	if len(r.out.parked) == 0 && !r.calls.anyAgentTool() {
		return // no AgentTool call in progress: no result to decide one, or to wait for (most echoes)
	}
	mo := messageOf(ev)
	if mo == nil || mo.Role != schema.Tool || mo.Message == nil || mo.Message.ToolCallID == "" {
		return
	}
	callID := mo.Message.ToolCallID
	if r.out.decide(v, callID) {
		return
	}
	if r.calls.agentTool(callID) == nil {
		return // an ordinary tool's result: nothing waits for it (noting it would keep every one)
	}
	v.inner.echo(callID) // its end is not recorded yet: it will be decided then
}
