// Package batontest keeps an eino ADK app's handoffs fixed in its own `go test`: it records a run
// of the app's Runner in the test, as Baton would (no server, no network), and checks its handoff
// story: the route, each transfer's mode, what each agent was fed, the tools called, the session,
// the final answer and its author, and the handoff bugs Baton's linter names.
//
//	run := batontest.Record(t, runner, "Where is my parcel?")
//	run.MatchGolden("testdata/parcel") // testdata/parcel.story; go test -baton.update writes it
//
// A run recorded once with a live model (-baton.update also writes testdata/parcel.trace.json)
// is replayed offline from then on by building the app's agents on Replay's models.
//
// Supported API; examples/golden is a complete, runnable use of it.
package batontest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/schema"

	"github.com/baton-dev/baton/internal/lint"
	"github.com/baton-dev/baton/internal/record"
	"github.com/baton-dev/baton/internal/story"
	"github.com/baton-dev/baton/traces"
)

// Run is one recorded run of an app.
type Run struct {
	tb testing.TB
	// Trace is the run as Baton records it: `baton open` shows it (Run.Save writes it).
	Trace traces.Trace
}

// Record runs runner on input, recorded, until the run ends (at most a minute), and returns it.
// The run failing is no test failure: its story says how it ended. opts go to runner.Run.
func Record(tb testing.TB, runner *adk.Runner, input string, opts ...adk.AgentRunOption) *Run {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rec := traces.NewRecording(traces.Run{ID: traces.NewRunID(), Input: input, Status: traces.StatusRunning, StartedAt: time.Now()}, nil)
	recorder := record.NewRecorder(rec, "", nil)
	events := recorder.Run(ctx, runner, []adk.Message{schema.UserMessage(input)}, opts...)
	for _, ok := events.Next(); ok; _, ok = events.Next() {
	}
	select {
	case <-recorder.Done():
	case <-ctx.Done():
		tb.Fatalf("batontest: the run of %q did not end within a minute", input)
	}
	rec.Finish(recorder.Outcome())
	return &Run{tb: tb, Trace: rec.Snapshot()}
}

// Status is how the run ended, and its error when it failed.
func (r *Run) Status() (traces.Status, string) { return r.Trace.Run.Status, r.Trace.Run.Error }

// Route is the agents control went through, in order, by transfer or as the root:
// "supervisor>research_agent>supervisor". Agents run as tools, or by a workflow, are not handoffs.
func (r *Run) Route() string { return strings.Join(story.Of(r.Trace).Route, ">") }

// Transfers are the run's transfers, in order, refused ones included (Outcome "failed").
func (r *Run) Transfers() []traces.Transfer {
	var out []traces.Transfer
	for _, e := range r.Trace.Events {
		if e.Kind == traces.KindTransfer && e.Transfer != nil {
			out = append(out, *e.Transfer)
		}
	}
	return out
}

// Fed is what agent was fed when it first started: its history after eino rewrote other agents'
// messages ("For context: ..."); nil when it never ran.
func (r *Run) Fed(agent string) []traces.Message {
	for _, e := range r.Trace.Events {
		if e.Kind == traces.KindAgentStarted && e.Agent == agent && e.AgentRun != nil {
			return e.AgentRun.Input
		}
	}
	return nil
}

// ToolCalls are the names of the tools agent called, in order, transfers included.
func (r *Run) ToolCalls(agent string) []string {
	var out []string
	for _, e := range r.Trace.Events {
		if e.Kind == traces.KindToolStarted && e.Agent == agent && e.Tool != nil {
			out = append(out, e.Tool.Name)
		}
	}
	return out
}

// Session is the run's session values as they ended, each as JSON.
func (r *Run) Session() map[string]string { return story.Of(r.Trace).Session }

// Answer is the run's final answer and the agent that gave it: an exit's final result, else the
// last reply with text and no tool call; empty when there is none.
func (r *Run) Answer() (author, text string) {
	s := story.Of(r.Trace)
	return s.AnswerBy, s.Answer
}

// Findings are the handoff bugs Baton's linter names in the run at or above the severity
// atLeast ("info", "warning" or "error"; `baton lint` documents the rules), a line each.
func (r *Run) Findings(atLeast string) []string {
	r.tb.Helper()
	threshold, err := lint.ParseSeverity(atLeast)
	if err != nil {
		r.tb.Fatalf("batontest: %v", err)
	}
	var found []string
	for _, f := range lint.Check(r.Trace, lint.Config{}) {
		if f.Severity >= threshold {
			found = append(found, fmt.Sprintf("#%d %s %s: %s", f.Seqs[0], f.Severity, f.Rule, f.Message))
		}
	}
	return found
}

// NoFindings fails the test, listing them, when the linter names handoff bugs at or above
// atLeast.
func (r *Run) NoFindings(atLeast string) {
	r.tb.Helper()
	if found := r.Findings(atLeast); len(found) > 0 {
		r.tb.Errorf("batontest: the run has %d handoff findings at or above %s:\n  %s%s", len(found), atLeast, strings.Join(found, "\n  "), r.saved("run"))
	}
}
