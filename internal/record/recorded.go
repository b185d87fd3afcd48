package record

import "github.com/baton-dev/baton/traces"

// RecordedCall is one model call of a recorded run, as a replay or a fork gives it back.
type RecordedCall struct {
	N      int   // its number in the run, from 1, in the order the calls started
	Seq    int64 // its model.started
	Agent  string
	Input  []traces.Message
	Tools  []string
	Output *traces.Message
	Usage  *traces.Usage
	Err    string
	Done   bool // a model.finished was recorded
}

// RecordedCalls returns tr's model calls in the order they started. A reply edited at a
// breakpoint counts as edited (its continued event's), as the run went on with it. The one
// reading of a recording for a replay (agents.ReplayOf), a fork of Baton's own run
// (agents.ForkOf) and a fork of an app's (BATON_FORK).
func RecordedCalls(tr traces.Trace) []*RecordedCall {
	var calls []*RecordedCall
	byID := map[string]*RecordedCall{}
	finished := map[int64]*RecordedCall{} // by the seq of its model.finished
	for _, e := range tr.Events {
		if p := e.Pause; e.Kind == traces.KindContinued && p != nil && p.Reply != nil && finished[p.At] != nil {
			// A person edited the reply before the run went on: the run went on with the edit.
			finished[p.At].Output = p.Reply
			continue
		}
		if e.Model == nil {
			continue
		}
		switch e.Kind {
		case traces.KindModelStarted:
			c := &RecordedCall{N: len(calls) + 1, Seq: e.Seq, Agent: e.Agent, Input: e.Model.Input, Tools: e.Model.Tools}
			calls = append(calls, c)
			byID[e.Model.ID] = c
		case traces.KindModelFinished:
			if c := byID[e.Model.ID]; c != nil {
				c.Output, c.Usage, c.Err, c.Done = e.Model.Output, e.Model.Usage, e.Model.Error, true
				finished[e.Seq] = c
			}
		}
	}
	return calls
}
