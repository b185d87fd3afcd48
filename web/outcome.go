package web

import "github.com/baton-dev/baton/traces"

// Outcome is how a finished run ended, for the run page's header: why it failed, with the event
// that shows it, or a completed run's final answer. It is empty while the run goes on.
type Outcome struct {
	// Error is the failure reason in full; ErrorSeq the event to jump to for it: the last error
	// event, else run.finished (0 when the trace has neither).
	Error    string
	ErrorSeq int64
	// Answer is a completed run's final answer: the exit's final result or, without one, the last
	// assistant message of the agent nearest the root that answered in words. AnswerSeq is its
	// event and AnswerBy its agent ("" for an exit without one).
	Answer    string
	AnswerSeq int64
	AnswerBy  string
}

func newOutcome(a *analysis, runError string) Outcome {
	switch a.status {
	case traces.StatusCompleted:
		return answerOf(a)
	case traces.StatusFailed, traces.StatusInterrupted, traces.StatusCanceled:
		return Outcome{Error: runError, ErrorSeq: errorSeq(a.tr)}
	}
	return Outcome{}
}

// errorSeq returns the seq of tr's last error event, else of its run.finished, else 0.
func errorSeq(tr traces.Trace) int64 {
	var finished int64
	for i := len(tr.Events) - 1; i >= 0; i-- {
		switch e := &tr.Events[i]; e.Kind {
		case traces.KindError:
			return e.Seq
		case traces.KindRunFinished:
			finished = max(finished, e.Seq)
		}
	}
	return finished
}

// answerOf finds a completed run's final answer: an exit's final result states it outright;
// without one, the latest of the words-only assistant messages of the shallowest agent.
func answerOf(a *analysis) Outcome {
	ev := a.tr.Events
	for i := len(ev) - 1; i >= 0; i-- {
		if x := ev[i].Exit; x != nil && x.FinalResult != "" {
			return Outcome{Answer: x.FinalResult, AnswerSeq: ev[i].Seq, AnswerBy: ev[i].Agent}
		}
	}
	var best Outcome
	bestDepth := 0
	for i := range ev {
		m := ev[i].Message
		if m == nil || m.Role != "assistant" || m.Content == "" || len(m.ToolCalls) > 0 {
			continue
		}
		if d := a.roster.depth(ev[i].Agent); best.AnswerSeq == 0 || d <= bestDepth {
			best, bestDepth = Outcome{Answer: m.Content, AnswerSeq: ev[i].Seq, AnswerBy: ev[i].Agent}, d
		}
	}
	return best
}
