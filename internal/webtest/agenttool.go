package webtest

import (
	"fmt"

	"github.com/baton-dev/baton/traces"
)

// AgentToolAgents is the agenttool flow's tree.
func AgentToolAgents() []traces.Agent {
	tool := func(name, desc string) traces.Agent {
		return traces.Agent{Name: name, Description: desc, Kind: traces.AgentChatModel, Parent: "project_manager", Relation: traces.RelationAgentTool}
	}
	return []traces.Agent{
		{Name: "project_manager", Kind: traces.AgentChatModel, Tools: []string{"research_agent", "code_agent", "review_agent"}},
		tool("research_agent", "finds prior art"), tool("code_agent", "writes the code"), tool("review_agent", "reviews the code"),
	}
}

// AgentTool builds a completed run of the agenttool flow: project_manager calls research_agent,
// code_agent and review_agent as AgentTools; research_agent sets session key "findings" that
// code_agent reads.
func AgentTool() traces.Trace {
	b := New("r-at1", "agenttool", "Build a rate limiter", AgentToolAgents()...)
	user := Msg("user", "Build a rate limiter")
	b.Start("project_manager", "run", user)
	steps := []struct{ callee, request, result string }{
		{"research_agent", "Find rate limiting algorithms", "token bucket fits"},
		{"code_agent", "Write a token bucket in Go", "package limiter ..."},
		{"review_agent", "Review the limiter", "LGTM"},
	}
	for i, s := range steps {
		id := fmt.Sprintf("call_%d", i+1)
		args := fmt.Sprintf(`{"request":%q}`, s.request)
		b.Model("project_manager", []traces.Message{user}, []string{"research_agent", "code_agent", "review_agent"}, Call(id, s.callee, args), 200)
		b.Add(traces.Event{Kind: traces.KindToolStarted, Agent: "project_manager", Tool: &traces.ToolCall{Name: s.callee, CallID: id, Arguments: args}})
		b.Add(traces.Event{Kind: traces.KindAgentToolEnter, Agent: "project_manager", AgentTool: &traces.AgentToolCall{Caller: "project_manager", Callee: s.callee, CallID: id, Request: s.request}})
		inner := []string{"project_manager", s.callee}
		b.Add(traces.Event{Kind: traces.KindAgentStarted, Agent: s.callee, RunPath: inner, AgentRun: &traces.AgentRun{Input: []traces.Message{Msg("user", s.request)}, Via: "agenttool"}})
		if s.callee == "code_agent" {
			b.Add(traces.Event{Kind: traces.KindMessage, Agent: s.callee, RunPath: inner, Message: ptr(Msg("assistant", "Using session findings: token bucket fits"))})
		}
		b.Add(traces.Event{Kind: traces.KindMessage, Agent: s.callee, RunPath: inner, Message: ptr(Msg("assistant", s.result))})
		if s.callee == "research_agent" {
			b.Set("research_agent", "findings", "token bucket fits")
		}
		b.Add(traces.Event{Kind: traces.KindAgentFinished, Agent: s.callee, RunPath: inner, AgentRun: &traces.AgentRun{}})
		b.Add(traces.Event{Kind: traces.KindAgentToolExit, Agent: "project_manager", AgentTool: &traces.AgentToolCall{Caller: "project_manager", Callee: s.callee, CallID: id, Result: s.result}})
		b.Add(traces.Event{Kind: traces.KindToolFinished, Agent: "project_manager", Tool: &traces.ToolCall{Name: s.callee, CallID: id, Result: s.result}})
	}
	b.Model("project_manager", []traces.Message{user}, nil, Msg("assistant", "Done: a reviewed token bucket."), 150)
	return b.End(traces.StatusCompleted, "")
}

// Wide builds a running trace whose root has n sub-agents, plus an AgentTool callee with two
// sub-agents of its own, all idle but the first.
func Wide(n int) traces.Trace {
	agents := []traces.Agent{{Name: "hub", Kind: traces.AgentSupervisor}}
	for i := range n {
		agents = append(agents, traces.Agent{Name: fmt.Sprintf("specialist_%02d", i+1), Kind: traces.AgentChatModel, Parent: "hub", Relation: traces.RelationSubAgent})
	}
	agents = append(agents,
		traces.Agent{Name: "planner", Kind: traces.AgentSequential, Parent: "hub", Relation: traces.RelationAgentTool},
		traces.Agent{Name: "step_one", Kind: traces.AgentChatModel, Parent: "planner", Relation: traces.RelationSubAgent},
		traces.Agent{Name: "step_two_with_a_really_long_name", Kind: traces.AgentChatModel, Parent: "planner", Relation: traces.RelationSubAgent},
	)
	b := New("r-wide", "wide", "go", agents...)
	b.Start("hub", "run", Msg("user", "go"))
	for i := range n {
		b.Transfer("hub", fmt.Sprintf("specialist_%02d", i+1), traces.TransferLLM, fmt.Sprintf("call_%d", i))
	}
	return b.Trace
}

// Big builds a running supervisor-shaped trace of at least n events: the supervisor hands work
// to research_agent and math_agent over and over.
func Big(n int) traces.Trace {
	return big(n, false)
}

// Large is Big whose run path starts again at each turn of the supervisor (as each turn of a
// conversation does), where Big's grows with every transfer, as one eino run's does: at a
// million events that path would name some 200,000 agents in each event. Large is the shape
// of the large-run benchmarks (BenchmarkLargeRun in server): several agents, transfers chosen by
// the model and deterministic ones, model and tool calls, session writes.
func Large(n int) traces.Trace {
	return big(n, true)
}

func big(n int, turns bool) traces.Trace {
	b := New("r-big", "supervisor", supInput, SupervisorAgents()...)
	user := Msg("user", supInput)
	for i := 0; len(b.Trace.Events) < n; i++ {
		if turns {
			b.path = b.path[:0]
		}
		target := []string{"research_agent", "math_agent"}[i%2]
		b.supervisorTurn([]traces.Message{user}, []traces.Message{user}, target, fmt.Sprintf("call_%d", i))
		b.Start(target, "transfer", user, Said("supervisor", fmt.Sprintf("turn %d", i)))
		b.Model(target, []traces.Message{user}, []string{"search"}, Call(fmt.Sprintf("t%d", i), "search", `{"q":"x"}`), 100)
		b.Tool(target, "search", fmt.Sprintf("t%d", i), `{"q":"x"}`, fmt.Sprintf("result %d", i))
		b.Set(target, fmt.Sprintf("k%d", i%20), i)
		b.Transfer(target, "supervisor", traces.TransferDeterministic, fmt.Sprintf("d%d", i))
	}
	return b.Trace
}
