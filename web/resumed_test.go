package web_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/schema"

	"github.com/baton-dev/baton/internal/attachtest"
	"github.com/baton-dev/baton/internal/record"
	"github.com/baton-dev/baton/traces"
	"github.com/baton-dev/baton/web"
)

// resumedSupervisor records attachtest.SupervisedRefunds, whose approval is asked inside the
// supervisor's sub-agent, stopped at it and resumed at once, into one recording: one story.
func resumedSupervisor(t *testing.T) traces.Trace {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	runner, err := attachtest.SupervisedRefunds(ctx, attachtest.NewStore(), false)
	if err != nil {
		t.Fatal(err)
	}
	rec := traces.NewRecording(traces.Run{ID: "r-resumed", Flow: "manager", Input: attachtest.SupervisedRefundsInput}, nil)
	first := record.NewRecorder(rec, "", nil)
	interrupt := attachtest.DrainInterrupted(t, first.Run(ctx, runner, []adk.Message{schema.UserMessage(attachtest.SupervisedRefundsInput)}, adk.WithCheckPointID("cp")))
	<-first.Done()
	rec.Finish(first.Outcome())
	if err := rec.Resume(); err != nil {
		t.Fatal(err)
	}
	second := record.NewRecorder(rec, "", nil)
	events, err := second.Resume(ctx, runner, "cp", &adk.ResumeParams{Targets: map[string]any{interrupt: "approved"}})
	if err != nil {
		t.Fatal(err)
	}
	attachtest.Drain(t, events)
	<-second.Done()
	rec.Finish(second.Outcome())
	return rec.Snapshot()
}

// TestResumedSupervisorRun: the page tells a resumed supervisor run as one story. The agent eino
// passes through on its way back to the interrupt is shown re-entered, not transferred to; the
// tree stays right side up with its transfers numbered on; the sub-agent's summary counts all its
// model calls, each paired with its own end; its history is what it went on with.
func TestResumedSupervisorRun(t *testing.T) {
	tr := resumedSupervisor(t)
	if tr.Run.Status != traces.StatusCompleted {
		t.Fatalf("run %s", tr.Run.Status)
	}
	resumedAt := slices.IndexFunc(tr.Events, func(e traces.Event) bool { return e.Kind == traces.KindResumed })
	reentry := tr.Events[resumedAt+2]
	if reentry.Kind != traces.KindAgentStarted || reentry.Agent != "clerk" {
		t.Fatalf("event after the resumed root: %s %s", reentry.Kind, reentry.Agent)
	}
	if got := web.Summary(reentry); got != "resumed on the way back to the interrupt" {
		t.Errorf("the re-entry's row reads %q", got)
	}

	g := web.NewGraph(tr)
	var orders []int
	for _, e := range g.Transfers {
		orders = append(orders, e.Order)
	}
	if g.TransferCount != 2 || !slices.Equal(orders, []int{1, 2}) {
		t.Errorf("%d transfers numbered %v, want manager's to clerk and clerk's back, 1 and 2", g.TransferCount, orders)
	}
	for _, n := range g.Nodes {
		if want := map[string]string{"manager": "", "clerk": "manager", "auditor": "manager"}[n.Name]; n.Parent != want {
			t.Errorf("node %s below %q, want below %q", n.Name, n.Parent, want)
		}
	}

	s, err := web.NewAgentSummary(tr, "clerk")
	if err != nil {
		t.Fatal(err)
	}
	var starts []string
	for _, r := range s.Starts {
		starts = append(starts, r.Label)
	}
	if want := []string{"started via transfer", "resumed on the way back to the interrupt"}; !slices.Equal(starts, want) {
		t.Errorf("clerk's starts %q, want %q", starts, want)
	}
	if s.ModelCalls != 3 || len(s.Calls) != 3 {
		t.Fatalf("clerk: %d model calls counted, %d listed, want 3", s.ModelCalls, len(s.Calls))
	}
	for k, c := range s.Calls {
		started, finished := event(t, tr, c.Seq), event(t, tr, c.Finished)
		if finished.Model.ID != started.Model.ID || c.Reported != finished.Model.Usage.PromptTokens {
			t.Errorf("clerk's call %d (%s) is paired with %s's end, %d tokens", k+1, started.Model.ID, finished.Model.ID, c.Reported)
		}
	}

	for _, h := range web.NewSession(tr).Histories {
		if h.Agent == "clerk" && (h.Seq != reentry.Seq || !h.Resumed || len(h.Messages) == 0) {
			t.Errorf("clerk's history: start #%d resumed=%v, %d messages; want its re-entry #%d, with the history it goes on with",
				h.Seq, h.Resumed, len(h.Messages), reentry.Seq)
		}
	}
}
