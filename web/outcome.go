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
	case traces.StatusFailed, traces.StatusInterrupted, traces.StatusCanceled:
		// The event to jump to: the last error event, else run.finished.
		return Outcome{Error: runError, ErrorSeq: cmp.Or(a.errorSeq, a.finishedSeq)}
	}
	return Outcome{}
}
