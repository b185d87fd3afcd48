package webtest

import (
	"fmt"

	"github.com/baton-dev/baton/traces"
)

// SupervisorAgents is the supervisor flow's tree.
func SupervisorAgents() []traces.Agent {
	return []traces.Agent{
		{Name: "supervisor", Description: "routes work to specialists", Kind: traces.AgentSupervisor, Tools: []string{"transfer_to_agent"}},
		{Name: "research_agent", Description: "looks facts up", Kind: traces.AgentChatModel, Parent: "supervisor", Relation: traces.RelationSubAgent, Tools: []string{"search"}},
		{Name: "math_agent", Description: "does arithmetic", Kind: traces.AgentChatModel, Parent: "supervisor", Relation: traces.RelationSubAgent, Tools: []string{"add", "multiply", "divide"}},
	}
}

const supInput = "What was US GDP in 2024, doubled?"

// SupervisorUntil builds the supervisor flow and stops after n events (0: the whole run).
func SupervisorUntil(n int) traces.Trace {
	tr := Supervisor()
	if n > 0 && n < len(tr.Events) {
		tr.Events = tr.Events[:n]
		tr.Run.Status, tr.Run.EndedAt = traces.StatusRunning, nil
	}
	return tr
}

// Supervisor builds a completed run of the supervisor flow: supervisor transfers to
// research_agent (llm), which goes back by deterministic transfer and sets session key "gdp";
// then the same with math_agent; then supervisor answers.
func Supervisor() traces.Trace {
	b := New("r-sup1", "supervisor", supInput, SupervisorAgents()...)
	user := Msg("user", supInput)
	sys := Msg("system", "You are a supervisor. Available other agents: research_agent, math_agent.")
	b.supervisorTurn([]traces.Message{user}, []traces.Message{sys, user}, "research_agent", "call_1")

	b.Start("research_agent", "transfer", user, CalledTool("supervisor", "transfer_to_agent", `{"agent_name":"research_agent"}`),
		ToolReturned("supervisor", "transfer_to_agent", "successfully transferred to agent [research_agent]"))
	rIn := []traces.Message{Msg("system", "You research facts."), user}
	b.Model("research_agent", rIn, []string{"search", "transfer_to_agent"}, Call("call_2", "search", `{"query":"US GDP 2024"}`), 310)
	b.Tool("research_agent", "search", "call_2", `{"query":"US GDP 2024"}`, "US GDP 2024: 29.18T")
	b.Set("research_agent", "gdp", map[string]any{"year": 2024, "usd_trillions": 29.18})
	b.Model("research_agent", rIn, []string{"search"}, Msg("assistant", "US GDP in 2024 was $29.18T."), 280)
	b.Add(traces.Event{Kind: traces.KindMessage, Agent: "research_agent", Message: ptr(Call("f3a9", "transfer_to_agent", "supervisor"))})
	b.Transfer("research_agent", "supervisor", traces.TransferDeterministic, "f3a9")

	back := []traces.Message{user, Said("research_agent", "US GDP in 2024 was $29.18T")}
	b.supervisorTurn(back, append([]traces.Message{sys}, back...), "math_agent", "call_4")

	b.Start("math_agent", "transfer", append(back, CalledTool("supervisor", "transfer_to_agent", `{"agent_name":"math_agent"}`))...)
	mIn := []traces.Message{Msg("system", "You do arithmetic."), user}
	b.Model("math_agent", mIn, []string{"multiply"}, Call("call_5", "multiply", `{"a":29.18,"b":2}`), 260)
	b.Tool("math_agent", "multiply", "call_5", `{"a":29.18,"b":2}`, "58.36")
	b.Model("math_agent", mIn, []string{"multiply"}, Msg("assistant", "29.18T doubled is 58.36T."), 200)
	b.Transfer("math_agent", "supervisor", traces.TransferDeterministic, "c81e")

	final := append(back, Said("math_agent", "29.18T doubled is 58.36T"))
	b.Start("supervisor", "transfer", final...)
	b.Model("supervisor", append([]traces.Message{sys}, final...), []string{"transfer_to_agent"},
		Msg("assistant", "US GDP in 2024 was $29.18T; doubled, $58.36T."), 400)
	b.Finish("supervisor")
	return b.End(traces.StatusCompleted, "")
}

// supervisorTurn starts the supervisor on fed and has it transfer to target.
func (b *Builder) supervisorTurn(fed, modelIn []traces.Message, target, callID string) {
	via := "run"
	if len(b.Trace.Events) > 2 {
		via = "transfer"
	}
	b.Start("supervisor", via, fed...)
	b.Model("supervisor", modelIn, []string{"transfer_to_agent"},
		Call(callID, "transfer_to_agent", fmt.Sprintf(`{"agent_name":%q}`, target)), 150)
	b.Transfer("supervisor", target, traces.TransferLLM, callID)
}

// TransferAgents is the transfer flow's tree.
func TransferAgents() []traces.Agent {
	return []traces.Agent{
		{Name: "router", Kind: traces.AgentChatModel, Tools: []string{"transfer_to_agent"}},
		{Name: "weather_agent", Kind: traces.AgentChatModel, Parent: "router", Relation: traces.RelationSubAgent, Tools: []string{"get_weather"}},
		{Name: "chat_agent", Kind: traces.AgentChatModel, Parent: "router", Relation: traces.RelationSubAgent},
	}
}

// Transfer builds a completed run of the transfer flow: router hands the question to
// weather_agent, which answers.
func Transfer() traces.Trace {
	b := New("r-tr1", "transfer", "Weather in Paris?", TransferAgents()...)
	user := Msg("user", "Weather in Paris?")
	b.Start("router", "run", user)
	b.Model("router", []traces.Message{user}, []string{"transfer_to_agent"}, Call("call_1", "transfer_to_agent", `{"agent_name":"weather_agent"}`), 90)
	b.Transfer("router", "weather_agent", traces.TransferLLM, "call_1")
	b.Start("weather_agent", "transfer", user, CalledTool("router", "transfer_to_agent", `{"agent_name":"weather_agent"}`))
	b.Model("weather_agent", []traces.Message{user}, []string{"get_weather"}, Call("call_2", "get_weather", `{"city":"Paris"}`), 120)
	b.Tool("weather_agent", "get_weather", "call_2", `{"city":"Paris"}`, `{"sky":"clear","celsius":18}`)
	b.Model("weather_agent", []traces.Message{user}, []string{"get_weather"}, Msg("assistant", "Clear, 18°C."), 80)
	b.Finish("weather_agent")
	return b.End(traces.StatusCompleted, "")
}

// FailedTransfer builds a failed run of the transfer flow: router transfers to billing_agent,
// which does not exist; eino reports it in an unattributed error event.
func FailedTransfer() traces.Trace {
	b := New("r-tr2", "transfer", "Refund my order", TransferAgents()...)
	user := Msg("user", "Refund my order")
	b.Start("router", "run", user)
	b.Model("router", []traces.Message{user}, []string{"transfer_to_agent"}, Call("call_1", "transfer_to_agent", `{"agent_name":"billing_agent"}`), 90)
	b.Transfer("router", "billing_agent", traces.TransferLLM, "call_1")
	msg := "transfer failed: agent 'billing_agent' not found when transferring from 'router'"
	b.Error("", msg)
	return b.End(traces.StatusFailed, msg)
}

// RefusedTransfer is FailedTransfer as the recorder writes it now: the transfer itself says it
// failed, in the recorder's words (eino's stream was not read), then the run's error follows.
func RefusedTransfer() traces.Trace {
	b := New("r-tr3", "transfer", "Refund my order", TransferAgents()...)
	user := Msg("user", "Refund my order")
	b.Start("router", "run", user)
	b.Model("router", []traces.Message{user}, []string{"transfer_to_agent"}, Call("call_1", "transfer_to_agent", `{"agent_name":"billing_agent"}`), 90)
	msg := `transfer to "billing_agent" failed: the agent never started`
	b.Add(traces.Event{Kind: traces.KindTransfer, Agent: "router", Transfer: &traces.Transfer{From: "router", To: "billing_agent",
		Mode: traces.TransferLLM, CallID: "call_1", Outcome: traces.TransferFailed, Error: msg}})
	b.Add(traces.Event{Kind: traces.KindError, Agent: "router", Error: &traces.ErrorDetail{Message: msg}})
	b.Finish("router")
	return b.End(traces.StatusFailed, msg)
}

func ptr[T any](v T) *T { return &v }

// Specialists builds a completed run shaped like eino's prebuilt supervisor, hub, with n
// specialists (specialist_01 ...): hub hands work to them in turn, handoffs times, and each
// does one model call and one tool call and hands back deterministically: 2 × handoffs
// transfers. Specialists(8, 11) is 8 specialists and 22 transfers.
func Specialists(n, handoffs int) traces.Trace {
	agents := []traces.Agent{{Name: "hub", Kind: traces.AgentSupervisor, Tools: []string{"transfer_to_agent"}}}
	for i := range n {
		agents = append(agents, traces.Agent{Name: fmt.Sprintf("specialist_%02d", i+1), Kind: traces.AgentChatModel,
			Parent: "hub", Relation: traces.RelationSubAgent, Tools: []string{"lookup"}})
	}
	b := New("r-specialists", "specialists", "go", agents...)
	user := Msg("user", "go")
	for i := range handoffs {
		target := fmt.Sprintf("specialist_%02d", i%n+1)
		via := "transfer"
		if i == 0 {
			via = "run"
		}
		b.Start("hub", via, user)
		b.Model("hub", []traces.Message{user}, []string{"transfer_to_agent"},
			Call(fmt.Sprintf("h%d", i), "transfer_to_agent", fmt.Sprintf(`{"agent_name":%q}`, target)), 120)
		b.Transfer("hub", target, traces.TransferLLM, fmt.Sprintf("h%d", i))
		b.Finish("hub")
		b.Start(target, "transfer", user)
		b.Model(target, []traces.Message{user}, []string{"lookup"}, Call(fmt.Sprintf("l%d", i), "lookup", `{}`), 80)
		b.Tool(target, "lookup", fmt.Sprintf("l%d", i), `{}`, "found")
		b.Transfer(target, "hub", traces.TransferDeterministic, fmt.Sprintf("d%d", i))
		b.Finish(target)
	}
	b.Start("hub", "transfer", user)
	b.Model("hub", []traces.Message{user}, nil, Msg("assistant", "done"), 50)
	b.Finish("hub")
	return b.End(traces.StatusCompleted, "")
}
