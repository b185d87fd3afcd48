package web_test

import (
	"testing"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/traces"
	"github.com/baton-dev/baton/web"
	"github.com/baton-dev/baton/web/webtest"
)

func TestOutcome(t *testing.T) {
	exited := webtest.New("r-exit", "x", "go", webtest.SupervisorAgents()...)
	exited.Start("supervisor", "run")
	exited.Model("supervisor", nil, nil, webtest.Msg("assistant", "thinking aloud"), 10)
	exit := exited.Add(traces.Event{Kind: traces.KindExit, Agent: "research_agent", Exit: &traces.Exit{FinalResult: "42"}})

	failed := webtest.FailedTransfer()
	failedErr := failed.Events[len(failed.Events)-2]

	for _, tc := range []struct {
		name string
		tr   traces.Trace
		want web.Outcome
	}{
		// math_agent answered later than the supervisor's transfer, but the supervisor, nearer the
		// root, had the last word.
		{"the root agent's last words", webtest.Supervisor(), web.Outcome{Answer: "US GDP in 2024 was $29.18T; doubled, $58.36T.", AnswerSeq: 43, AnswerBy: "supervisor"}},
		// The router only calls transfer_to_agent: the answer is its sub-agent's.
		{"the shallowest agent that answered in words", webtest.Transfer(), web.Outcome{Answer: "Clear, 18°C.", AnswerSeq: 17, AnswerBy: "weather_agent"}},
		{"an exit's final result wins", exited.End(traces.StatusCompleted, ""), web.Outcome{Answer: "42", AnswerSeq: exit, AnswerBy: "research_agent"}},
		{"a failure points at its error event", failed, web.Outcome{Error: failedErr.Error.Message, ErrorSeq: failedErr.Seq}},
		{"nothing while running", webtest.SupervisorUntil(30), web.Outcome{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := web.NewStats(tc.tr).Outcome; got != tc.want {
				t.Errorf("outcome = %+v\nwant      %+v", got, tc.want)
			}
		})
	}
}

// TestRunStartedDescribesTheRunNow: run.started was recorded "running"; its inspector tells what
// became of the run.
func TestRunStartedDescribesTheRunNow(t *testing.T) {
	for _, tc := range []struct {
		name, status, err string
		tr                traces.Trace
	}{
		{"completed", "completed", "", webtest.Supervisor()},
		{"failed", "failed", "transfer failed: agent 'billing_agent' not found when transferring from 'router'", webtest.FailedTransfer()},
		{"still running", "running", "", webtest.SupervisorUntil(12)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, err := web.NewInspection(tc.tr, 1)
			if err != nil {
				t.Fatal(err)
			}
			facts := map[string]string{}
			for _, f := range in.Facts {
				facts[f.Label] = f.Value
			}
			if facts["status"] != tc.status {
				t.Errorf("status %q, want %q (facts %v)", facts["status"], tc.status, facts)
			}
			blocks := map[string]string{}
			for _, b := range in.Blocks {
				blocks[b.Label] = b.Text
			}
			if blocks["error"] != tc.err {
				t.Errorf("error block %q, want %q", blocks["error"], tc.err)
			}
		})
	}
}

// TestPausedAt: an interrupted run waits at its newest interrupt: the first interrupted event
// (eino's root cause, the deepest agent) after the last resumed one, at the tool call that
// interrupted just before it.
func TestPausedAt(t *testing.T) {
	b := webtest.New("r-paused", "approval", "refund", webtest.SupervisorAgents()...)
	b.Start("supervisor", "run")
	interrupt := func(tool, agent, id, info string) int64 {
		b.Add(traces.Event{Kind: traces.KindToolFinished, Agent: agent, Tool: &traces.ToolCall{Name: tool, CallID: id, Interrupted: true}})
		seq := b.Add(traces.Event{Kind: traces.KindInterrupted, Agent: agent, Interrupt: &traces.Interrupt{ID: id, Info: info}})
		b.Add(traces.Event{Kind: traces.KindInterrupted, Agent: "supervisor", Interrupt: &traces.Interrupt{ID: id, Info: info}})
		return seq
	}
	first := interrupt("issue_refund", "math_agent", "int-1", "Refund €49?")
	tr := b.End(traces.StatusInterrupted, "")
	want := web.Paused{Seq: first, Agent: "math_agent", Tool: "issue_refund", ID: "int-1", Info: "Refund €49?"}
	if got := web.NewStats(tr).Outcome.Paused; got == nil || *got != want {
		t.Errorf("paused at %+v, want %+v", got, want)
	}

	b.Add(traces.Event{Kind: traces.KindResumed, Agent: "supervisor", Interrupt: &traces.Interrupt{ID: "int-1"}})
	again := interrupt("notify", "research_agent", "int-2", "Send the e-mail?")
	tr = b.End(traces.StatusInterrupted, "")
	want = web.Paused{Seq: again, Agent: "research_agent", Tool: "notify", ID: "int-2", Info: "Send the e-mail?"}
	if got := web.NewStats(tr).Outcome.Paused; got == nil || *got != want {
		t.Errorf("after a resume, paused at %+v, want %+v", got, want)
	}
	if got := web.NewStats(webtest.Supervisor()).Outcome.Paused; got != nil {
		t.Errorf("a completed run is paused at %+v", got)
	}
}

// TestInterruptedAgentsStayInterrupted: in a real run paused for approval, the agents stopped at
// the interrupt are drawn interrupted, not done, and the resumed run wakes them.
func TestInterruptedAgentsStayInterrupted(t *testing.T) {
	flow, err := agents.Lookup("approval")
	if err != nil {
		t.Fatal(err)
	}
	rec := traces.NewRecording(traces.Run{ID: "r-approval", Flow: flow.Name, Input: flow.DefaultInput}, flow.Agents)
	if status := agentsRun(flow, rec); status != traces.StatusInterrupted {
		t.Fatalf("approval ended %s, want interrupted", status)
	}
	states := map[string]web.State{}
	for _, n := range web.NewGraph(rec.Snapshot()).Nodes {
		states[n.Name] = n.State
	}
	for _, name := range []string{"support_agent", "billing_agent"} {
		if states[name] != web.StateInterrupted {
			t.Errorf("%s is drawn %q, want %q", name, states[name], web.StateInterrupted)
		}
	}
}
