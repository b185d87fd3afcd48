package attach_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/adk/prebuilt/planexecute"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/internal/attachtest"
	"github.com/baton-dev/baton/traces"
)

// The plan-execute app's scripted plan and answer, as eino's planner and replanner send them: the
// arguments of their models' plan and respond calls.
const (
	tripPlan     = `{"steps":["Find the cheapest flight Berlin-Lisbon."]}`
	tripResponse = `{"response":"The cheapest flight Berlin-Lisbon costs 186 EUR."}`
)

// TestPlanAndResponseAreTheirAgentsMessages runs eino's prebuilt plan-execute. Its planner and
// replanner send, as their own messages, the arguments of their models' tool calls: the plan and,
// at last, the response. Those are not echoes of the model's reply (which called a tool): each is
// recorded as its agent's message, and the run's last message is the replanner's response, not
// the executor's step. Their models' replies are recorded as model calls, not as messages: the
// Runner's stream never carries them.
func TestPlanAndResponseAreTheirAgentsMessages(t *testing.T) {
	recordEachWay(t, planExecute, "How much is the cheapest flight Berlin-Lisbon?", func(t *testing.T, tr traces.Trace, _ []string) {
		if tr.Run.Status != traces.StatusCompleted {
			t.Fatalf("run %s (%s)", tr.Run.Status, tr.Run.Error)
		}
		said := map[string][]string{} // each agent's assistant messages: "calls" for a tool call
		var last *traces.Event
		for i, e := range tr.Events {
			if e.Kind != traces.KindMessage || e.Message.Role != "assistant" {
				continue
			}
			last = &tr.Events[i]
			text := e.Message.Content
			if len(e.Message.ToolCalls) > 0 {
				text = "calls " + e.Message.ToolCalls[0].Name
			}
			said[e.Agent] = append(said[e.Agent], text)
		}
		want := map[string][]string{
			"planner":   {tripPlan},
			"executor":  {"186 EUR, on 14 March."},
			"replanner": {tripResponse},
		}
		for agent, w := range want {
			if !slices.Equal(said[agent], w) {
				t.Errorf("%s's messages %q, want %q (what it sent: for planner and replanner not their models' replies, which called tools, but their own messages)", agent, said[agent], w)
			}
		}
		if last == nil || last.Agent != "replanner" || last.Message.Content != tripResponse {
			t.Errorf("the run's last assistant message is not the replanner's response:\n%s", attachtest.Story(tr))
		}
		visitPaths(t, tr)
	})
}

// planExecute builds eino's prebuilt plan-execute with scripted models: a plan of one step, the
// executor's answer, then the replanner's response.
func planExecute(t *testing.T) adk.Agent {
	ctx := context.Background()
	model := func(agent string, steps ...agents.Step) agents.ModelFor {
		return attachtest.Scripted(agent, nil, steps...)
	}
	planModel, _ := model("planner", agents.Do(agents.Call("plan", map[string][]string{"steps": {"Find the cheapest flight Berlin-Lisbon."}})))("")
	execModel, _ := model("executor", agents.Say("186 EUR, on 14 March."))("")
	replanModel, _ := model("replanner", agents.Do(agents.Call("respond", map[string]string{"response": "The cheapest flight Berlin-Lisbon costs 186 EUR."})))("")
	planner, err1 := planexecute.NewPlanner(ctx, &planexecute.PlannerConfig{ToolCallingChatModel: planModel})
	executor, err2 := planexecute.NewExecutor(ctx, &planexecute.ExecutorConfig{Model: execModel})
	replanner, err3 := planexecute.NewReplanner(ctx, &planexecute.ReplannerConfig{ChatModel: replanModel})
	if err := errors.Join(err1, err2, err3); err != nil {
		t.Fatal(err)
	}
	root, err := planexecute.New(ctx, &planexecute.Config{Planner: planner, Executor: executor, Replanner: replanner, MaxIterations: 3})
	if err != nil {
		t.Fatal(err)
	}
	return root
}
