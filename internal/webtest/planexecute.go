package webtest

import "github.com/baton-dev/baton/traces"

// PlanExecuteResponse is the message PlanExecute's replanner ends the run with: the arguments of
// eino's respond tool, which the prebuilt replanner emits as its own message.
const PlanExecuteResponse = `{"response":"The cheapest return flight Berlin-Lisbon costs €186, about $200.88."}`

// PlanExecute builds a completed run of eino's prebuilt plan-execute: the planner's plan, one
// executor step, and the replanner's response (PlanExecuteResponse) followed by its BreakLoop.
func PlanExecute() traces.Trace {
	under := func(name, parent string, kind traces.AgentKind) traces.Agent {
		return traces.Agent{Name: name, Kind: kind, Parent: parent, Relation: traces.RelationSubAgent}
	}
	input := "How much is the cheapest return flight Berlin-Lisbon, 14-16 March, in US dollars?"
	b := New("r-pe1", "plan-execute", input,
		traces.Agent{Name: "plan_execute_replan", Kind: traces.AgentSequential},
		under("planner", "plan_execute_replan", traces.AgentCustom),
		under("execute_replan", "plan_execute_replan", traces.AgentLoop),
		under("executor", "execute_replan", traces.AgentChatModel),
		under("replanner", "execute_replan", traces.AgentCustom))
	b.Start("plan_execute_replan", "run", Msg("user", input))
	b.Start("planner", "workflow")
	plan := `{"steps":["Find the cheapest flight.","Convert its price to US dollars."]}`
	b.Model("planner", nil, []string{"plan"}, Call("c1", "plan", plan), 40)
	b.Add(traces.Event{Kind: traces.KindMessage, Agent: "planner", Message: ptr(Msg("assistant", plan))})
	b.Finish("planner")
	b.Start("execute_replan", "workflow")
	b.Start("executor", "workflow")
	b.Model("executor", nil, []string{"convert_currency"}, Call("c2", "convert_currency", `{"amount":186}`), 30)
	b.Tool("executor", "convert_currency", "c2", `{"amount":186}`, "$200.88")
	b.Model("executor", nil, []string{"convert_currency"}, Msg("assistant", "€186 is $200.88."), 30)
	b.Finish("executor")
	b.Start("replanner", "workflow")
	b.Model("replanner", nil, []string{"plan", "respond"}, Call("c3", "respond", PlanExecuteResponse), 50)
	b.Add(traces.Event{Kind: traces.KindMessage, Agent: "replanner", Message: ptr(Msg("assistant", PlanExecuteResponse))})
	b.Add(traces.Event{Kind: traces.KindBreakLoop, Agent: "replanner", BreakLoop: &traces.BreakLoop{From: "replanner", Iterations: 1}})
	b.Finish("replanner")
	b.Finish("execute_replan")
	b.Finish("plan_execute_replan")
	return b.End(traces.StatusCompleted, "")
}
