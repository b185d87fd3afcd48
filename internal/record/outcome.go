package record

import (
	"context"
	"slices"

	"github.com/baton-dev/baton/traces"
)

// runState is how the run stands: whether it started, whether the Runner's stream is still read,
// what stopped or failed it, and, once it is finished, its status. Its callers hold the
// recorder's lock.
type runState struct {
	started    bool
	ctx        context.Context // the root agent's context: its Err tells a cancel
	streamDone bool            // the Runner's stream has ended, or nobody reads it
	failure    string
	interrupt  bool
	aborted    bool          // aborted at a breakpoint: a failure after it is a cancel
	stopped    bool          // held at a breakpoint when Baton stopped: a failure after it an interruption
	interrupts []string      // the root-cause ids of the interrupts recorded
	status     traces.Status // the final status, once the run is finished
}

// outcome decides the final status. eino reports a cancel as an ordinary error, so a failure
// while the run's context is done is a cancel. (The context alone says nothing: an app may well
// cancel it once the run is over, before the recorder has finished.)
func (s *runState) outcome() (traces.Status, string) {
	switch {
	case s.failure != "" && (s.aborted || s.stopped):
		return s.failed(s.failure)
	case s.failure != "" && s.ctx != nil && s.ctx.Err() != nil:
		return traces.StatusCanceled, "run canceled"
	case s.interrupt:
		return traces.StatusInterrupted, ""
	case s.failure != "":
		return traces.StatusFailed, s.failure
	}
	return traces.StatusCompleted, ""
}

// failed is how a run that failed with msg ends: interrupted when Baton stopped while it was
// held at a breakpoint, canceled when it was aborted at one (the failure is theirs), else failed.
func (s *runState) failed(msg string) (traces.Status, string) {
	if s.stopped {
		return traces.StatusInterrupted, "Baton stopped while the run was held at a breakpoint"
	}
	if s.aborted {
		return traces.StatusCanceled, "run aborted at a breakpoint"
	}
	return traces.StatusFailed, msg
}

// firstInterrupt reports whether the interrupt of eino's root-cause id has not been recorded yet,
// and notes it. An interrupt raised inside an AgentTool crosses it: the copies of events of every
// agent on its way out carry it, with the same root cause, while the Runner's stream carries it
// once. It is recorded once, where it arose: the innermost agent's copy carries it first (the
// caller's AgentTool call ends only once the callee's visit has). An interrupt without an id is
// recorded each time.
func (s *runState) firstInterrupt(id string) bool {
	if id == "" {
		return true
	}
	if slices.Contains(s.interrupts, id) {
		return false
	}
	s.interrupts = append(s.interrupts, id)
	return true
}
