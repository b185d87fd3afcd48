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
	// Paused is where an interrupted run waits for a decision; nil for other runs.
	Paused *Paused
}

// Paused is the interrupt an interrupted run stopped at: eino's root cause, the first interrupted
// event since the run (last) started or resumed.
type Paused struct {
	Seq   int64  // the interrupted event
	Agent string // the agent it stopped
	Tool  string // the tool call that interrupted, when one did
	ID    string // eino's interrupt id
	Info  string // what the interrupt asks
}

func newOutcome(a *analysis, runError string) Outcome {
	switch a.status {
	case traces.StatusCompleted:
		return answerOf(a)
	case traces.StatusInterrupted:
		return Outcome{Error: runError, ErrorSeq: errorSeq(a.tr), Paused: pausedAt(a.tr)}
	case traces.StatusFailed, traces.StatusCanceled:
		return Outcome{Error: runError, ErrorSeq: errorSeq(a.tr)}
	}
	return Outcome{}
}

// pausedAt finds where an interrupted run waits: the first interrupted event after the last
// resumed one, and the interrupted tool call just before it. Nil without an interrupted event.
func pausedAt(tr traces.Trace) *Paused {
	var p *Paused
	tool := ""
	for _, e := range tr.Events {
		switch {
		case e.Kind == traces.KindResumed:
			p, tool = nil, ""
		case e.Kind == traces.KindToolFinished && e.Tool.Interrupted && p == nil:
			tool = e.Tool.Name
		case e.Kind == traces.KindInterrupted && p == nil:
			p = &Paused{Seq: e.Seq, Agent: e.Agent, Tool: tool}
			if e.Interrupt != nil {
				p.ID, p.Info = e.Interrupt.ID, e.Interrupt.Info
			}
		}
	}
	return p
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
