package web

import (
	"maps"

	"github.com/baton-dev/baton/internal/prices"
	"github.com/baton-dev/baton/traces"
)

// inspectIndex is the inspector's piece of the analysis: what an inspection reads beyond its
// event and the other pieces. echoedBy links a model or tool call to the message event that
// repeats it (the timeline folds that message into the call's row); agents is what each agent's
// summary lists (agentlog.go); counts is a memo of the prompts' token counts, which inspections
// fill as they ask. It reads the events alone.
type inspectIndex struct {
	echoedBy map[int64]int64
	agents   *agentLogs
	counts   tokenCache
}

// newInspectIndex starts the inspector's piece of a run whose model calls cost what pricing says.
func newInspectIndex(pricing prices.Run) *inspectIndex {
	return &inspectIndex{echoedBy: make(map[int64]int64), agents: newAgentLogs(pricing), counts: tokenCache{}}
}

// add takes in event i of ev, which repeats call echoes (0 when it repeats none).
func (x *inspectIndex) add(ev []traces.Event, i int, echoes int64) {
	if echoes > 0 {
		x.echoedBy[echoes] = ev[i].Seq
	}
	x.agents.add(ev, i)
}

// clone copies x's links and logs and starts its memo anew: a copy counts what it is asked again.
func (x *inspectIndex) clone() *inspectIndex {
	return &inspectIndex{echoedBy: maps.Clone(x.echoedBy), agents: x.agents.clone(), counts: tokenCache{}}
}
