package web

import (
	"cmp"
	"slices"

	"github.com/baton-dev/baton/traces"
)

// The few things every piece of the analysis asks of a trace's events.

// hasPayload reports whether e carries the payload its kind requires.
func hasPayload(e *traces.Event) bool {
	switch e.Kind {
	case traces.KindRunStarted, traces.KindRunFinished:
		return e.Run != nil
	case traces.KindAgentStarted, traces.KindAgentFinished:
		return e.AgentRun != nil
	case traces.KindModelStarted, traces.KindModelFinished:
		return e.Model != nil
	case traces.KindToolStarted, traces.KindToolFinished:
		return e.Tool != nil
	case traces.KindMessage:
		return e.Message != nil
	case traces.KindTransfer:
		return e.Transfer != nil
	case traces.KindAgentToolEnter, traces.KindAgentToolExit:
		return e.AgentTool != nil
	case traces.KindSessionSet:
		return e.Session != nil
	case traces.KindInterrupted, traces.KindResumed:
		return e.Interrupt != nil
	case traces.KindExit:
		return e.Exit != nil
	case traces.KindBreakLoop:
		return e.BreakLoop != nil
	case traces.KindError:
		return e.Error != nil
	case traces.KindLost:
		return e.Lost != nil
	case traces.KindPaused, traces.KindContinued:
		return e.Pause != nil
	}
	return true
}

// firstAfter returns the index of the first event of ev (in seq order) with a seq above after
// (len when none).
func firstAfter(ev []traces.Event, after int64) int {
	i, _ := slices.BinarySearchFunc(ev, after+1, func(e traces.Event, s int64) int { return cmp.Compare(e.Seq, s) })
	return i
}

// indexOf returns the index of event seq in ev (in seq order), or -1.
func indexOf(ev []traces.Event, seq int64) int {
	i, ok := slices.BinarySearchFunc(ev, seq, func(e traces.Event, s int64) int { return cmp.Compare(e.Seq, s) })
	if !ok {
		return -1
	}
	return i
}

// eventIndex returns the index of event seq in tr.Events, or -1.
func eventIndex(tr traces.Trace, seq int64) int {
	if i := seq - 1; i >= 0 && i < int64(len(tr.Events)) && tr.Events[i].Seq == seq {
		return int(i)
	}
	for i := range tr.Events {
		if tr.Events[i].Seq == seq {
			return i
		}
	}
	return -1
}

// capped returns s with no room to grow: an append to it copies rather than writes into what
// another holder of s may append to.
func capped[T any](s []T) []T { return s[:len(s):len(s)] }
