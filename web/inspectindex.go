package web

import (
	"maps"

	"github.com/baton-dev/baton/traces"
)

// inspectIndex is the inspector's piece of the analysis: what an inspection reads beyond its
// event and the other pieces. echoedBy links a model or tool call to the message event that
// repeats it (the timeline folds that message into the call's row); counts is a memo of the
// prompts' token counts, which inspections fill as they ask.
type inspectIndex struct {
	echoedBy map[int64]int64
	counts   tokenCache
}

func newInspectIndex() *inspectIndex {
	return &inspectIndex{echoedBy: make(map[int64]int64), counts: tokenCache{}}
}

// add takes in e, which repeats call echoes (0 when it repeats none).
func (x *inspectIndex) add(e *traces.Event, echoes int64) {
	if echoes > 0 {
		x.echoedBy[echoes] = e.Seq
	}
}

// clone copies x's links and starts its memo anew: a copy counts what it is asked again.
func (x *inspectIndex) clone() *inspectIndex {
	return &inspectIndex{echoedBy: maps.Clone(x.echoedBy), counts: tokenCache{}}
}
