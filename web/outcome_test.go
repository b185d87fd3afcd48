package web_test

import (
	"strings"
	"testing"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/internal/webtest"
	"github.com/baton-dev/baton/traces"
	"github.com/baton-dev/baton/web"
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

// TestFinalAnswerIsWhatTheStreamEndsWith: a completed run's final answer is the last answer on
// the Runner's own stream, by the agent that said it: not an intermediate output of a workflow's
// earlier agent, and nothing said inside an AgentTool call, whose exit ends only the call.
func TestFinalAnswerIsWhatTheStreamEndsWith(t *testing.T) {
	for _, tc := range []struct {
		flow, by, starts string
	}{
		// collector -> writer -> editor (-> fact_checker -> editor): the editor has the last word.
		{"pipeline", "editor", "The release notes for v2.4.0 are out"},
		// refund_agent's exit stops at the AgentTool's boundary; the concierge answers after it.
		{"agenttool-exit", "concierge", "Sorry about the double charge"},
	} {
		t.Run(tc.flow, func(t *testing.T) {
			flow, err := agents.Lookup(tc.flow)
			if err != nil {
				t.Fatal(err)
			}
			rec := traces.NewRecording(traces.Run{ID: "r-" + tc.flow, Flow: flow.Name, Input: flow.DefaultInput}, flow.Agents)
			if status := agentsRun(flow, rec); status != traces.StatusCompleted {
				t.Fatalf("%s ended %s", tc.flow, status)
			}
			tr := rec.Snapshot()
			o := web.NewStats(tr).Outcome
			last := lastWords(tr)
			if o.AnswerBy != tc.by || !strings.HasPrefix(o.Answer, tc.starts) || o.AnswerSeq != last.Seq {
				t.Errorf("final answer #%d by %s: %q\nwant the run's last words, #%d by %s: %q...", o.AnswerSeq, o.AnswerBy, o.Answer, last.Seq, tc.by, tc.starts)
			}
		})
	}
}

// lastWords returns the last assistant message of tr that has words and calls no tool.
func lastWords(tr traces.Trace) traces.Event {
	for i := len(tr.Events) - 1; i >= 0; i-- {
		if m := tr.Events[i].Message; m != nil && m.Role == "assistant" && m.Content != "" && len(m.ToolCalls) == 0 {
			return tr.Events[i]
		}
	}
	return traces.Event{}
}

// TestFinalAnswerOfPlanExecute: eino's replanner ends the loop by emitting the respond tool's
// arguments as its own message, then BreakLoop. That message, not the executor's last step, is
// the run's final answer (a hand-built trace: the recorder keeps the message from issue 18 on).
func TestFinalAnswerOfPlanExecute(t *testing.T) {
	tr := webtest.PlanExecute()
	var seq int64
	for _, e := range tr.Events {
		if e.Message != nil && e.Message.Content == webtest.PlanExecuteResponse {
			seq = e.Seq
		}
	}
	want := web.Outcome{Answer: webtest.PlanExecuteResponse, AnswerSeq: seq, AnswerBy: "replanner"}
	if got := web.NewStats(tr).Outcome; got != want {
		t.Errorf("outcome = %+v\nwant      %+v", got, want)
	}
}

// TestFinalAnswerShapes: what counts as the stream's last answer, in the shapes that end a run.
func TestFinalAnswerShapes(t *testing.T) {
	build := func(tail func(b *webtest.Builder)) traces.Trace {
		b := webtest.New("r-shape", "x", "go", webtest.SupervisorAgents()...)
		b.Start("supervisor", "run")
		b.Model("supervisor", nil, nil, webtest.Msg("assistant", "Let me ask research_agent."), 10)
		tail(b)
		return b.End(traces.StatusCompleted, "")
	}
	var directly int64
	returnsDirectly := build(func(b *webtest.Builder) {
		b.Model("supervisor", nil, []string{"lookup"}, webtest.Call("c1", "lookup", "{}"), 10)
		b.Add(traces.Event{Kind: traces.KindToolStarted, Agent: "supervisor", Tool: &traces.ToolCall{Name: "lookup", CallID: "c1"}})
		b.Add(traces.Event{Kind: traces.KindToolFinished, Agent: "supervisor", Tool: &traces.ToolCall{Name: "lookup", CallID: "c1", Result: "42"}})
		directly = b.Add(traces.Event{Kind: traces.KindMessage, Agent: "supervisor", Message: &traces.Message{Role: "tool", Content: "42", ToolCallID: "c1", ToolName: "lookup"}})
		b.Finish("supervisor")
	})
	transferredToSilence := build(func(b *webtest.Builder) {
		b.Model("supervisor", nil, nil, webtest.Call("c1", "transfer_to_agent", `{"agent_name":"research_agent"}`), 10)
		b.Transfer("supervisor", "research_agent", traces.TransferLLM, "c1")
		b.Start("research_agent", "transfer")
		b.Finish("research_agent")
	})
	for _, tc := range []struct {
		name string
		tr   traces.Trace
		want web.Outcome
	}{
		// A tool that returns directly ends its agent's turn with its result.
		{"a tool's result returned directly", returnsDirectly, web.Outcome{Answer: "42", AnswerSeq: directly, AnswerBy: "supervisor"}},
		// "successfully transferred to agent [...]" announces a transfer and answers nothing; the
		// stream ended with the transfer, so the run has no answer to show.
		{"a transfer to an agent that said nothing", transferredToSilence, web.Outcome{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := web.NewStats(tc.tr).Outcome; got != tc.want {
				t.Errorf("outcome = %+v\nwant      %+v", got, tc.want)
			}
		})
	}
}

// TestAwayKeepsTheRunsOutcome: a page put at an earlier event of a finished run stands at event
// N of the run's M, and still has the run's own status and outcome; at the newest event it is
// not away. A report's frames before the end say the same.
func TestAwayKeepsTheRunsOutcome(t *testing.T) {
	for _, tc := range []struct {
		name string
		tr   traces.Trace
	}{
		{"completed", webtest.Supervisor()},
		{"failed", webtest.FailedTransfer()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			last := tc.tr.Events[len(tc.tr.Events)-1].Seq
			whole := web.NewStats(tc.tr)
			want := web.Away{At: 3, Head: last, Status: whole.Status, Error: whole.Error, Outcome: whole.Outcome}
			vs := web.NewViewState(tc.tr.Run, tc.tr.Agents)
			vs.Add(tc.tr.Events...)
			if got := vs.AwayAt(3); got == nil || *got != want {
				t.Errorf("away at #3: %+v\nwant %+v", got, want)
			}
			if got := vs.AwayAt(last); got != nil {
				t.Errorf("at the newest event the page is away: %+v", got)
			}
			frames := web.NewReport(tc.tr).Frames
			for _, f := range frames[:len(frames)-1] {
				if a := f.Stats.Away; a == nil || a.At != f.Seq || a.Head != last || a.Status != whole.Status || a.Outcome != whole.Outcome {
					t.Fatalf("report frame #%d stands %+v, want at #%d of %d, %s", f.Seq, a, f.Seq, last, whole.Status)
				}
			}
			if a := frames[len(frames)-1].Stats.Away; a != nil {
				t.Errorf("the report's last frame is away: %+v", a)
			}
		})
	}
}
