package web

import (
	"cmp"

	"github.com/baton-dev/baton/traces"
)

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
		// An exit's final result states the answer outright; without one, the newest words-only
		// assistant message of the shallowest agent.
		if a.exit.AnswerSeq != 0 {
			return a.exit
		}
		return a.words
	case traces.StatusInterrupted:
		return Outcome{Error: runError, ErrorSeq: cmp.Or(a.errorSeq, a.finishedSeq), Paused: a.paused}
	case traces.StatusFailed, traces.StatusCanceled:
		// The event to jump to: the last error event, else run.finished.
		return Outcome{Error: runError, ErrorSeq: cmp.Or(a.errorSeq, a.finishedSeq)}
	}
	return Outcome{}
}

// notePause keeps where the run waits: the first interrupted event since it (last) started or
// resumed, and the interrupted tool call just before it.
func (a *analysis) notePause(e *traces.Event) {
	switch {
	case e.Kind == traces.KindResumed:
		a.paused, a.pausedTool = nil, ""
	case e.Kind == traces.KindToolFinished && e.Tool != nil && e.Tool.Interrupted && a.paused == nil:
		a.pausedTool = e.Tool.Name
	case e.Kind == traces.KindInterrupted && a.paused == nil:
		a.paused = &Paused{Seq: e.Seq, Agent: e.Agent, Tool: a.pausedTool}
		if e.Interrupt != nil {
			a.paused.ID, a.paused.Info = e.Interrupt.ID, e.Interrupt.Info
		}
	}
}
