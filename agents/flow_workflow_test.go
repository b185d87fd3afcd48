package agents_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/baton-dev/baton/traces"
)

// TestWorkflowFlow checks what the trace of the workflow flow says: both parallel branches ran
// before the loop, the loop ran the rounds it says it ran, and the sequence went on after it.
func TestWorkflowFlow(t *testing.T) {
	modes(t, func(t *testing.T, streaming bool) {
		f := recordFacts(t, "workflow", streaming)
		f.requireStatus(traces.StatusCompleted)
		starts := f.starts()
		if len(starts) > 3 {
			slices.Sort(starts[2:4]) // the branches start in either order
		}
		assertEqual(t, "agent starts", starts, []string{
			"launch via run", "scouting via workflow", "market_scout via workflow", "tech_scout via workflow",
			"drafting via workflow",
			"copywriter via workflow", "critic via workflow",
			"copywriter via workflow", "critic via workflow",
			"copywriter via workflow", "critic via workflow",
			"announcer via workflow",
		})
		drafting := f.index(traces.KindAgentStarted, "drafting", nil)
		for _, scout := range []string{"market_scout", "tech_scout"} {
			done := f.index(traces.KindAgentFinished, scout, nil)
			if done < 0 || done > drafting {
				t.Errorf("%s finished at %d, drafting started at %d: the branch did not run to its end first", scout, done, drafting)
			}
		}
		first := f.modelInputs("copywriter")[0]
		if !contextFrom(first, "market_scout") || !contextFrom(first, "tech_scout") {
			t.Errorf("the copywriter was not fed both branches:%s", joined(first))
		}
		breaks := f.of(traces.KindBreakLoop, "")
		if len(breaks) != 1 || breaks[0].BreakLoop.From != "critic" {
			t.Fatalf("breakloop events %+v, want one from critic", breaks)
		}
		if rounds := len(f.of(traces.KindAgentStarted, "critic")); rounds != 3 || len(f.of(traces.KindAgentStarted, "copywriter")) != 3 {
			t.Errorf("the loop ran %d rounds, want 3", rounds)
		}
		if breaks[0].BreakLoop.Iterations != 3 {
			t.Errorf("breakloop says %d iterations, want the 3 that ran", breaks[0].BreakLoop.Iterations)
		}
		if f.index(traces.KindAgentStarted, "announcer", nil) < f.index(traces.KindBreakLoop, "critic", nil) {
			t.Error("announcer started before the loop broke")
		}
		// approve_draft stored the copywriter's last draft; announcer's instruction read it.
		draft := f.lastReply("copywriter")
		if got := f.sessionText("approved_draft"); got != draft {
			t.Errorf("approved_draft = %q, want the last draft %q", got, draft)
		}
		if !strings.Contains(f.lastReply("announcer"), draft) {
			t.Errorf("announcer's answer %q lacks the approved draft", f.lastReply("announcer"))
		}
		// critic's approve_draft set it, although its value equals copywriter's last reply.
		if got := f.session("approved_draft").SetBy; got != "critic" {
			t.Errorf("approved_draft set by %q, want critic, whose tool set it", got)
		}
	})
}

// TestWorkflowFlowEvents checks the workflow flow on the Runner's stream, unrecorded (so it runs
// under the race detector too): the branches, the three rounds and the break, then announcer.
func TestWorkflowFlowEvents(t *testing.T) {
	f := mustFlow(t, "workflow")
	modes(t, func(t *testing.T, streaming bool) {
		var spy modelSpy
		s := runStory(t, f, f.DefaultInput, streaming, &spy)
		if len(s) < 6 {
			t.Fatalf("%d events", len(s))
		}
		branches := s[:6].lines() // two branches of three events each, interleaved as they ran
		slices.Sort(branches)
		assertEqual(t, "branch events", branches, []string{
			"market_scout: calls search_market", "market_scout: says", "market_scout: tool search_market",
			"tech_scout: calls read_specs", "tech_scout: says", "tech_scout: tool read_specs",
		})
		round := []string{"copywriter: says", "critic: calls review_draft", "critic: tool review_draft"}
		var rest []string
		for range 2 {
			rest = append(rest, append(round, "critic: says")...)
		}
		rest = append(rest, round...)
		rest = append(rest, "critic: calls approve_draft", "critic: tool approve_draft", "announcer: says")
		assertStory(t, s[6:], rest...)
		assertToolsMatchTree(t, f, &spy)
		if brk := s[len(s)-2]; brk.Break != 3 {
			t.Errorf("approve_draft's event breaks the loop after %d iterations, want 3", brk.Break)
		}
		if got := s.final(); !strings.Contains(got, "In shops on 12 May") {
			t.Errorf("announcer published %q, not the approved draft", got)
		}
	})
}

// TestPlanExecuteFlow checks what the trace of the plan-execute flow says: the planner, then two
// rounds of executor and replanner, the plan kept in the session and shrinking as steps are done.
func TestPlanExecuteFlow(t *testing.T) {
	modes(t, func(t *testing.T, streaming bool) {
		f := recordFacts(t, "plan-execute", streaming)
		f.requireStatus(traces.StatusCompleted)
		assertEqual(t, "agent starts", f.starts(), []string{
			"plan_execute_replan via run", "planner via workflow", "execute_replan via workflow",
			"executor via workflow", "replanner via workflow", "executor via workflow", "replanner via workflow",
		})
		var plans []string
		for _, e := range f.of(traces.KindSessionSet, "") {
			if e.Session.Key == "Plan" {
				plans = append(plans, string(e.Session.Value))
			}
		}
		assertEqual(t, "the session's Plan, as it changed", plans, []string{
			`{"steps":["Find the cheapest return flight Berlin-Lisbon, 14-16 March.","Convert its price from euros to US dollars."]}`,
			`{"steps":["Convert €186 from euros to US dollars."]}`,
		})
		if got := f.sessionText("ExecutedStep"); got != f.lastReply("executor") {
			t.Errorf("ExecutedStep = %q, want the executor's last answer %q", got, f.lastReply("executor"))
		}
		if steps := string(f.session("ExecutedSteps").Value); strings.Count(steps, `"Step"`) != 2 {
			t.Errorf("ExecutedSteps = %s, want the two steps done", steps)
		}
		breaks := f.of(traces.KindBreakLoop, "")
		if len(breaks) != 1 || breaks[0].BreakLoop.From != "replanner" {
			t.Fatalf("breakloop events %+v, want one from replanner", breaks)
		}
		respond := f.of(traces.KindModelFinished, "replanner")[1].Model.Output
		if len(respond.ToolCalls) != 1 || respond.ToolCalls[0].Name != "respond" || !strings.Contains(respond.ToolCalls[0].Arguments, "$200.88") {
			t.Errorf("the replanner's last reply %+v is not a respond call with the answer", respond)
		}
		// Each value is credited to who set it: the planner and replanner (custom agents) in their
		// runnables, the executor through its OutputKey.
		var setters []string
		for _, e := range f.of(traces.KindSessionSet, "") {
			setters = append(setters, e.Session.Key+" by "+e.Session.SetBy)
		}
		assertEqual(t, "session setters", setters, []string{
			"UserInput by planner", "Plan by planner", "ExecutedStep by executor",
			"ExecutedSteps by replanner", "Plan by replanner", "ExecutedStep by executor", "ExecutedSteps by replanner",
		})
	})
}

// TestPlanExecuteFlowEvents checks the plan-execute flow on the Runner's stream, unrecorded (so it
// runs under the race detector too).
func TestPlanExecuteFlowEvents(t *testing.T) {
	f := mustFlow(t, "plan-execute")
	modes(t, func(t *testing.T, streaming bool) {
		var spy modelSpy
		s := runStory(t, f, f.DefaultInput, streaming, &spy)
		round := []string{"executor: calls %s", "executor: tool %s", "executor: says", "replanner: says"}
		var want []string
		for _, tool := range []string{"search_flights", "convert_currency"} {
			for _, line := range round {
				want = append(want, strings.Replace(line, "%s", tool, 1))
			}
		}
		assertStory(t, s, append(append([]string{"planner: says"}, want...), "replanner: says")...)
		assertToolsMatchTree(t, f, &spy)
		if brk := s[len(s)-1]; brk.Break != 2 || brk.Text != "" {
			t.Errorf("the last event %+v should be the replanner's break after 2 iterations", brk)
		}
		if !strings.Contains(s[len(s)-2].Text, "$200.88") {
			t.Errorf("the replanner's response %q lacks the converted price", s[len(s)-2].Text)
		}
	})
}
