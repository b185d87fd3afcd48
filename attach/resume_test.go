package attach_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cloudwego/eino/adk"

	"github.com/baton-dev/baton/attach"
	"github.com/baton-dev/baton/attach/attachtest"
	"github.com/baton-dev/baton/traces"
)

// TestInterruptThenResume records a run that interrupts for approval and its resumption, both
// through the option: the interrupt is recorded as such (never as a failure), and the resumed
// part starts with resumed, naming the same interrupt, and completes.
func TestInterruptThenResume(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := t.TempDir()
	b := attach.New(attach.Config{Dir: dir})
	runner, err := attachtest.Refunds(ctx, attachtest.NewStore())
	if err != nil {
		t.Fatal(err)
	}
	events, _ := attachtest.Drain(t, runner.Query(ctx, attachtest.RefundsInput, adk.WithCheckPointID("cp-1"), b.Option(attach.Conversation("case-7"))))
	if last := events[len(events)-1]; !strings.HasSuffix(last, "interrupted") {
		t.Fatalf("the app did not interrupt: %q", events)
	}
	first := attachtest.ReadTraces(t, dir, 1)[0]
	if first.Run.Status != traces.StatusInterrupted || first.Run.Error != "" || first.Run.Conversation != "case-7" {
		t.Errorf("interrupted run = %+v, want status interrupted, no error, conversation case-7", first.Run)
	}
	var interrupt *traces.Interrupt
	for _, e := range first.Events {
		switch {
		case e.Kind == traces.KindInterrupted:
			interrupt = e.Interrupt
		case e.Kind == traces.KindToolFinished && (!e.Tool.Interrupted || e.Tool.Error != ""):
			t.Errorf("the interrupting tool call is recorded as %+v, want interrupted with no error", e.Tool)
		case e.Kind == traces.KindAgentFinished && (!e.AgentRun.Interrupted || e.AgentRun.Error != ""):
			t.Errorf("the interrupted agent's end is %+v, want interrupted with no error", e.AgentRun)
		case e.Kind == traces.KindError:
			t.Errorf("an interrupt recorded an error: %s", e.Error.Message)
		}
	}
	if interrupt == nil || interrupt.Info != attachtest.RefundsApproval || !strings.Contains(interrupt.Address, "refund") || interrupt.ID == "" {
		t.Fatalf("interrupt = %+v, want eino's root cause: the approval question at the refund tool", interrupt)
	}

	resumed, err := runner.ResumeWithParams(ctx, "cp-1", &adk.ResumeParams{Targets: map[string]any{interrupt.ID: "approved"}}, b.Option())
	if err != nil {
		t.Fatal(err)
	}
	attachtest.Drain(t, resumed)
	all := attachtest.ReadTraces(t, dir, 2)
	second := all[1]
	if second.Run.Status != traces.StatusCompleted || second.Run.Conversation != interrupt.ID {
		t.Errorf("resumed run = %+v, want completed, in the conversation of the interrupt", second.Run)
	}
	if e := second.Events[0]; e.Kind != traces.KindResumed || e.Interrupt.ID != interrupt.ID {
		t.Errorf("resumed run starts with %s %+v, want resumed naming interrupt %s", e.Kind, e.Interrupt, interrupt.ID)
	}
	final := ""
	for _, e := range second.Events {
		if e.Kind == traces.KindMessage && e.Message.Role == "assistant" {
			final = e.Message.Content
		}
	}
	if final != "Done: refunded $12." {
		t.Errorf("resumed run's answer = %q, want the refund done", final)
	}
}
