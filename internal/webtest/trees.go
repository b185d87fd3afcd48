package webtest

import (
	"fmt"

	"github.com/baton-dev/baton/traces"
)

// desks name generated agents the way real flows do: long enough that a 17-character cut shows.
var desks = []string{"network", "billing", "shipping", "returns", "warranty", "fraud_review", "loyalty", "accessibility", "payments", "onboarding"}

// LongName is the name of one agent of every Tree: longer than the widest agent box holds.
const LongName = "customer_escalation_and_refund_coordination_specialist"

// Tree builds a completed run of n agents (n >= depth) whose deepest agent is depth levels
// below the root: a spine of depth agents, the others fanned out under the spine's upper agents,
// every fourth of those called as an AgentTool, one named LongName. Control goes down to each
// sub-agent by a model's transfer and comes back by a deterministic one; callees are entered
// and exited.
func Tree(n, depth int) traces.Trace {
	agents := []traces.Agent{{Name: "orchestrator", Kind: traces.AgentSupervisor}}
	for i := 1; i < n; i++ {
		parent, rel := i-1, traces.RelationSubAgent
		if i > depth {
			parent = (i - depth - 1) % (depth - 1)
			if (i-depth)%4 == 0 {
				rel = traces.RelationAgentTool
			}
		}
		name := fmt.Sprintf("%s_specialist_%02d", desks[i%len(desks)], i)
		if i == n-2 {
			name = LongName
		}
		agents = append(agents, traces.Agent{Name: name, Kind: traces.AgentChatModel, Parent: agents[parent].Name, Relation: rel})
	}
	b := New(fmt.Sprintf("r-tree-%d-%d", n, depth), "tree", "route it", agents...)
	b.Start("orchestrator", "run", Msg("user", "route it"))
	var visit func(name string)
	visit = func(name string) {
		for _, a := range agents {
			if a.Parent != name {
				continue
			}
			if a.Relation == traces.RelationAgentTool {
				id := "at_" + a.Name
				b.Add(traces.Event{Kind: traces.KindAgentToolEnter, Agent: name, AgentTool: &traces.AgentToolCall{Caller: name, Callee: a.Name, CallID: id, Request: "help"}})
				b.Add(traces.Event{Kind: traces.KindAgentStarted, Agent: a.Name, RunPath: []string{name, a.Name}, AgentRun: &traces.AgentRun{Input: []traces.Message{Msg("user", "help")}, Via: "agenttool"}})
				b.Add(traces.Event{Kind: traces.KindAgentFinished, Agent: a.Name, RunPath: []string{name, a.Name}, AgentRun: &traces.AgentRun{}})
				b.Add(traces.Event{Kind: traces.KindAgentToolExit, Agent: name, AgentTool: &traces.AgentToolCall{Caller: name, Callee: a.Name, CallID: id, Result: "done"}})
				continue
			}
			b.Transfer(name, a.Name, traces.TransferLLM, "call_"+a.Name)
			b.Start(a.Name, "transfer", Msg("user", "route it"))
			visit(a.Name)
			b.Transfer(a.Name, name, traces.TransferDeterministic, "back_"+a.Name)
			b.Start(name, "transfer", Msg("user", "route it"))
		}
	}
	visit("orchestrator")
	b.Finish("orchestrator")
	return b.End(traces.StatusCompleted, "")
}

// Fan builds a completed supervisor run with n specialists and the given number of transfers
// (even): round trips, the supervisor choosing by model and each specialist coming back
// deterministically, to every specialist in turn and then again and again to the first, so
// that its two directions repeat.
func Fan(n, transfers int) traces.Trace {
	agents := []traces.Agent{{Name: "supervisor", Kind: traces.AgentSupervisor}}
	for i := range n {
		agents = append(agents, traces.Agent{
			Name: fmt.Sprintf("%s_specialist", desks[i%len(desks)]), Kind: traces.AgentChatModel,
			Parent: "supervisor", Relation: traces.RelationSubAgent,
		})
	}
	user := Msg("user", "sort out my account")
	b := New(fmt.Sprintf("r-fan-%d-%d", n, transfers), "fan", user.Content, agents...)
	for k := range transfers / 2 {
		target := agents[1+k%n].Name
		if k >= n {
			target = agents[1].Name
		}
		b.supervisorTurn([]traces.Message{user}, []traces.Message{user}, target, fmt.Sprintf("call_%d", k))
		b.Start(target, "transfer", user)
		b.Model(target, []traces.Message{user}, nil, Msg("assistant", "handled"), 80)
		b.Transfer(target, "supervisor", traces.TransferDeterministic, fmt.Sprintf("back_%d", k))
	}
	b.Start("supervisor", "transfer", user)
	b.Model("supervisor", []traces.Message{user}, nil, Msg("assistant", "All sorted."), 60)
	b.Finish("supervisor")
	return b.End(traces.StatusCompleted, "")
}

// Teams builds a completed run of a supervisor over teams: len(sizes) team leads under it
// (billing_lead, shipping_lead, ...), lead i over sizes[i] specialists. Control goes round
// trips of four transfers, supervisor -> lead -> specialist and back, each lead and each of its
// specialists in turn, until transfers (a multiple of 4) have been made. Teams([]int{4, 4, 4, 3},
// 40) is the 20-agent, 40-transfer tree of issue 23.
func Teams(sizes []int, transfers int) traces.Trace {
	agents := []traces.Agent{{Name: "supervisor", Kind: traces.AgentSupervisor}}
	members := make([][]string, len(sizes))
	for i, n := range sizes {
		lead := desks[(i+1)%len(desks)] + "_lead"
		agents = append(agents, traces.Agent{Name: lead, Kind: traces.AgentSupervisor, Parent: "supervisor", Relation: traces.RelationSubAgent})
		for j := range n {
			name := fmt.Sprintf("%s_agent_%d", desks[(i+1)%len(desks)], j+1)
			members[i] = append(members[i], name)
			agents = append(agents, traces.Agent{Name: name, Kind: traces.AgentChatModel, Parent: lead, Relation: traces.RelationSubAgent})
		}
	}
	user := Msg("user", "sort out my order")
	b := New(fmt.Sprintf("r-teams-%d-%d", len(agents), transfers), "teams", user.Content, agents...)
	b.Start("supervisor", "run", user)
	for k := range transfers / 4 {
		i := k % len(sizes)
		lead, member := agents[1+i+sumTo(sizes, i)].Name, members[i][(k/len(sizes))%sizes[i]]
		b.Model("supervisor", []traces.Message{user}, []string{"transfer_to_agent"}, Call(fmt.Sprintf("s%d", k), "transfer_to_agent", fmt.Sprintf(`{"agent_name":%q}`, lead)), 90)
		b.Transfer("supervisor", lead, traces.TransferLLM, fmt.Sprintf("s%d", k))
		b.Start(lead, "transfer", user)
		b.Model(lead, []traces.Message{user}, []string{"transfer_to_agent"}, Call(fmt.Sprintf("l%d", k), "transfer_to_agent", fmt.Sprintf(`{"agent_name":%q}`, member)), 70)
		b.Transfer(lead, member, traces.TransferLLM, fmt.Sprintf("l%d", k))
		b.Start(member, "transfer", user)
		b.Model(member, []traces.Message{user}, nil, Msg("assistant", "handled"), 60)
		b.Transfer(member, lead, traces.TransferDeterministic, fmt.Sprintf("m%d", k))
		b.Start(lead, "transfer", user)
		b.Transfer(lead, "supervisor", traces.TransferDeterministic, fmt.Sprintf("b%d", k))
		b.Start("supervisor", "transfer", user)
	}
	b.Model("supervisor", []traces.Message{user}, nil, Msg("assistant", "All sorted."), 50)
	b.Finish("supervisor")
	return b.End(traces.StatusCompleted, "")
}

// sumTo is the sum of the first i sizes.
func sumTo(sizes []int, i int) int {
	n := 0
	for _, s := range sizes[:i] {
		n += s
	}
	return n
}
