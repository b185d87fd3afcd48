package record

import (
	"context"
	"testing"

	"github.com/baton-dev/baton/traces"
)

// TestRunOutcome: a failure while the run's context is done is a cancel; a canceled context alone
// changes nothing (an app may cancel once the run is over); an interrupt is not a failure.
func TestRunOutcome(t *testing.T) {
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name string
		run  runState
		want traces.Status
		msg  string
	}{
		{"nothing went wrong", runState{ctx: context.Background()}, traces.StatusCompleted, ""},
		{"context canceled after the run", runState{ctx: canceled}, traces.StatusCompleted, ""},
		{"failed", runState{ctx: context.Background(), failure: "boom"}, traces.StatusFailed, "boom"},
		{"failed with its context canceled", runState{ctx: canceled, failure: "context canceled", interrupt: true}, traces.StatusCanceled, "run canceled"},
		{"interrupted", runState{interrupt: true, failure: "later"}, traces.StatusInterrupted, ""},
		{"failed after an abort at a breakpoint", runState{ctx: context.Background(), failure: "aborted", aborted: true}, traces.StatusCanceled, "run aborted at a breakpoint"},
		{"aborted, and nothing failed", runState{ctx: context.Background(), aborted: true}, traces.StatusCompleted, ""},
		{"failed before any agent started", runState{failure: "boom"}, traces.StatusFailed, "boom"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, msg := tc.run.outcome(); got != tc.want || msg != tc.msg {
				t.Errorf("outcome() = %s %q, want %s %q", got, msg, tc.want, tc.msg)
			}
		})
	}
}

// TestInterruptsAreRecordedOnce: an interrupt's root cause is recorded once, where it arose; one
// without an id each time.
func TestInterruptsAreRecordedOnce(t *testing.T) {
	var s runState
	for i, c := range []struct {
		id   string
		want bool
	}{{"i1", true}, {"i1", false}, {"i2", true}, {"", true}, {"", true}, {"i2", false}} {
		if got := s.firstInterrupt(c.id); got != c.want {
			t.Errorf("call %d: firstInterrupt(%q) = %v, want %v", i, c.id, got, c.want)
		}
	}
}
