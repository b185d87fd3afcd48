package web_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/schema"

	"github.com/baton-dev/baton/internal/attachtest"
	"github.com/baton-dev/baton/internal/record"
	"github.com/baton-dev/baton/internal/webtest"
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

// TestReusedModelIDAfterResume: a run whose resumed part used its model call ids again (a trace
// written before the recording numbered a resumed part's calls on, or a recorder with ids of its
// own form, which the recording leaves alone) made two calls, not one: the header, the agent's
// node and its summary count both, with the tokens each reported, each paired with its own end;
// a call whose trace holds only its start, or only its end, counts once.
func TestReusedModelIDAfterResume(t *testing.T) {
	b := webtest.New("r-reuse", "approval", "pay", traces.Agent{Name: "payer", Kind: traces.AgentChatModel})
	model := func(id string, tokens int, finished bool) {
		b.Add(traces.Event{Kind: traces.KindModelStarted, Agent: "payer", Model: &traces.ModelCall{ID: id, Input: []traces.Message{webtest.Msg("user", "pay")}}})
		if finished {
			b.Add(traces.Event{Kind: traces.KindModelFinished, Agent: "payer", Model: &traces.ModelCall{ID: id, Usage: &traces.Usage{PromptTokens: tokens, TotalTokens: tokens}}})
		}
	}
	b.Start("payer", "run", webtest.Msg("user", "pay"))
	model("m1", 10, true)
	b.Add(traces.Event{Kind: traces.KindToolStarted, Agent: "payer", Tool: &traces.ToolCall{Name: "approve", CallID: "c1"}})
	b.Add(traces.Event{Kind: traces.KindToolFinished, Agent: "payer", Tool: &traces.ToolCall{Name: "approve", CallID: "c1", Interrupted: true}})
	b.Add(traces.Event{Kind: traces.KindInterrupted, Agent: "payer", Interrupt: &traces.Interrupt{ID: "i1"}})
	b.Add(traces.Event{Kind: traces.KindRunFinished, Run: &traces.RunMark{Status: traces.StatusInterrupted}})
	b.Add(traces.Event{Kind: traces.KindResumed, Agent: "payer", Interrupt: &traces.Interrupt{ID: "i1"}})
	b.Start("payer", "resume")
	model("m1", 20, true)
	tr := b.End(traces.StatusCompleted, "")

	v := web.NewView(tr)
	if v.Stats.ModelCalls != 2 {
		t.Errorf("the header counts %d model calls, want 2", v.Stats.ModelCalls)
	}
	s, err := web.NewAgentSummary(tr, "payer")
	if err != nil {
		t.Fatal(err)
	}
	if s.ModelCalls != 2 || s.Tokens != 30 || len(s.Calls) != 2 {
		t.Fatalf("payer: %d model calls, %d tokens, %d listed; want 2, 30, 2", s.ModelCalls, s.Tokens, len(s.Calls))
	}
	for k, want := range []int{10, 20} {
		if c := s.Calls[k]; c.Reported != want || c.Finished != c.Seq+1 {
			t.Errorf("call %d (#%d) paired with #%d reporting %d, want its own end reporting %d", k+1, c.Seq, c.Finished, c.Reported, want)
		}
	}
	for _, n := range v.Graph.Nodes {
		if n.Name == "payer" && !strings.Contains(n.Detail, "2 calls") {
			t.Errorf("payer's node reads %q, want its 2 calls", n.Detail)
		}
	}

	// Cut mid-call: its start alone; a trace that begins at a call's end: its end alone.
	cut := web.Prefix(tr, tr.Events[len(tr.Events)-3].Seq)
	if got := web.NewView(cut).Stats.ModelCalls; got != 2 {
		t.Errorf("cut after the second call's start: %d model calls, want 2", got)
	}
	ends := tr
	ends.Events = slices.DeleteFunc(slices.Clone(tr.Events), func(e traces.Event) bool { return e.Kind == traces.KindModelStarted })
	if got := web.NewView(ends).Stats.ModelCalls; got != 2 {
		t.Errorf("with the calls' ends alone: %d model calls, want 2", got)
	}
}
