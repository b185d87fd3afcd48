package lint_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/internal/agentstest"
	"github.com/baton-dev/baton/internal/lint"
	"github.com/baton-dev/baton/internal/webtest"
	"github.com/baton-dev/baton/traces"
)

// TestMatchesReference: Check finds exactly what the rules found before they shared one index
// of the run (lint.ReferenceCheck), finding for finding, on the generated runs the benchmarks
// and pages use, on real recorded runs, and on random traces that give every rule something to
// find (and many near misses), under several configs.
func TestMatchesReference(t *testing.T) {
	ended := func(tr traces.Trace) traces.Trace { tr, _ = traces.EndImported(tr); return tr }
	named := map[string]traces.Trace{
		"large":       ended(webtest.Large(20_000)),
		"big":         webtest.Big(3_000),
		"wide":        webtest.Wide(12),
		"agenttool":   webtest.AgentTool(),
		"longturns":   agentstest.Record(t, agentstest.LongTurns(200, 10), "go", agents.Options{}),
		"specialists": agentstest.Record(t, agentstest.Specialists(20, 60), "go", agents.Options{}),
	}
	configs := []lint.Config{
		{},
		{PingPongHops: 2, ContextGrowth: 1.2, ContextMinTokens: 1},
		{PingPongHops: 1, Disable: []string{"lost-request", "repeated-call"}, Severity: map[string]lint.Severity{"said-not-done": lint.Error}},
	}
	for name, tr := range named {
		for _, cfg := range configs {
			same(t, name, tr, cfg)
		}
	}
	found := map[string]int{}
	for seed := range uint64(400) {
		tr := randomTrace(seed)
		for _, cfg := range configs {
			for _, f := range same(t, fmt.Sprintf("random %d", seed), tr, cfg) {
				found[f.Rule]++
			}
		}
	}
	t.Logf("findings on the random traces, by rule: %v", found)
	for _, r := range lint.Rules() {
		if found[r.ID] < 5 {
			t.Errorf("random traces gave %d %s findings: too few to hold Check to the reference", found[r.ID], r.ID)
		}
	}
}

func same(t *testing.T, name string, tr traces.Trace, cfg lint.Config) []lint.Finding {
	t.Helper()
	got, want := lint.Check(tr, cfg), lint.ReferenceCheck(tr, cfg)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s, config %+v: findings differ from the reference's:\n got %s\nwant %s", name, cfg, describe(got), describe(want))
	}
	return got
}

// randomTrace is a run of a few hundred events of every kind the rules read, drawn from small
// pools of agents, ids, texts and values so that the rules' conditions meet often: repeated
// call ids, model calls that finish twice or never, transfers to agents that never start,
// AgentTool calls left open, seqs that are not the events' places.
func randomTrace(seed uint64) traces.Trace {
	rnd := rand.New(rand.NewPCG(seed, 23))
	pick := func(s ...string) string { return s[rnd.IntN(len(s))] }
	chance := func(p float64) bool { return rnd.Float64() < p }
	request := "Please refund order 42 twice."
	manual := strings.Repeat("Read every clause of the policy handbook first. ", 60)
	agentNames := []string{"supervisor", "billing_agent", "research_agent", "math", "planner", "step_one", "critic", "ghost"}
	agentList := []traces.Agent{
		{Name: "supervisor", Kind: traces.AgentSupervisor},
		{Name: "billing_agent", Kind: traces.AgentChatModel, Parent: "supervisor", Relation: traces.RelationSubAgent},
		{Name: "research_agent", Kind: traces.AgentChatModel, Parent: "supervisor", Relation: traces.RelationSubAgent},
		{Name: "math", Kind: traces.AgentChatModel, Parent: "supervisor", Relation: traces.RelationSubAgent},
		{Name: "planner", Kind: traces.AgentSequential, Parent: "supervisor", Relation: traces.RelationAgentTool},
		{Name: "step_one", Kind: traces.AgentChatModel, Parent: "planner", Relation: traces.RelationSubAgent},
		{Name: "critic", Kind: traces.AgentChatModel, Parent: "research_agent", Relation: traces.RelationAgentTool},
	}
	texts := []string{
		request, "For context: " + request, "hello", "ok", manual,
		"I'll hand this over to billing_agent right away.", "Routing you to research now.",
		"transferring the case to math", "paſsing it over to billing_agent", "Let me connect you with the planner.",
		"the customer was charged twice", "draft pending", "done",
	}
	system := []string{
		"Send invoices to billing_agent.\n" + "Available other agents:\n- Agent name: research_agent\n- Agent name: math\n",
		"Ask the critic and math.\nAvailable other agents:\n- Agent name: billing_agent\n",
		"Answer the user.",
		"Route to research first.\nAvailable other agents:\n",
	}
	msgs := func(n int) []traces.Message {
		var out []traces.Message
		for range n {
			switch rnd.IntN(4) {
			case 0:
				out = append(out, traces.Message{Role: "system", Content: pick(system...)})
			case 1:
				out = append(out, traces.Message{Role: "user", Content: pick(texts...)})
			case 2:
				out = append(out, traces.Message{Role: "assistant", Content: pick(texts...)})
			default:
				out = append(out, traces.Message{Role: "tool", Content: pick(texts...), ToolCallID: "c1", ToolName: "search"})
			}
		}
		return out
	}
	ids := func(prefix string, n int) string { return fmt.Sprintf("%s%d", prefix, rnd.IntN(n)) }
	values := []string{`"the customer was charged twice"`, `"draft pending"`, `123456`, `null`, ` "spaced value" `, `{"a":"bbbbb"}`, `"x"`, `"caf\u00e9 au lait"`}
	kindsPool := []traces.Kind{
		traces.KindAgentStarted, traces.KindAgentFinished, traces.KindModelStarted, traces.KindModelFinished,
		traces.KindModelStarted, traces.KindModelFinished, traces.KindToolStarted, traces.KindToolFinished,
		traces.KindToolStarted, traces.KindToolFinished, traces.KindMessage, traces.KindTransfer, traces.KindTransfer,
		traces.KindTransfer, traces.KindAgentToolEnter, traces.KindAgentToolExit, traces.KindSessionSet,
		traces.KindSessionSet, traces.KindInterrupted, traces.KindResumed, traces.KindExit, traces.KindBreakLoop,
		traces.KindError,
	}
	tr := traces.Trace{Run: traces.Run{ID: fmt.Sprintf("r%d", seed), Flow: "random", Input: pick(request, "", "  "+request+" ")}, Agents: agentList}
	add := func(e traces.Event) {
		e.Seq = int64(len(tr.Events) + 1)
		if e.Agent == "" {
			e.Agent = pick(agentNames...)
		}
		tr.Events = append(tr.Events, e)
	}
	// In half the runs each model call id finishes at most once, as the recorder writes them
	// (some started twice, some never finished, some finished unstarted); in the others ids
	// are drawn from a pool.
	unique, made := chance(0.5), 0
	var running []string
	startID := func() string {
		if !unique {
			return ids("m", 30)
		}
		if len(running) > 0 && chance(0.1) {
			return running[rnd.IntN(len(running))]
		}
		made++
		running = append(running, fmt.Sprintf("u%d", made))
		return running[len(running)-1]
	}
	finishID := func() string {
		if !unique {
			return ids("m", 30)
		}
		if len(running) == 0 || chance(0.1) {
			made++
			return fmt.Sprintf("u%d", made)
		}
		i := rnd.IntN(len(running))
		id := running[i]
		running = slices.Delete(running, i, i+1)
		return id
	}
	add(traces.Event{Kind: traces.KindRunStarted, Agent: "-", Run: &traces.RunMark{Input: pick(request, "")}})
	n := 50 + rnd.IntN(300)
	for len(tr.Events) < n {
		e := traces.Event{Kind: kindsPool[rnd.IntN(len(kindsPool))]}
		switch e.Kind {
		case traces.KindAgentStarted:
			if !chance(0.05) {
				e.AgentRun = &traces.AgentRun{Input: msgs(rnd.IntN(4)), Resumed: chance(0.1)}
			}
		case traces.KindAgentFinished:
			e.AgentRun = &traces.AgentRun{}
		case traces.KindModelStarted:
			if !chance(0.03) {
				e.Model = &traces.ModelCall{ID: startID(), Input: msgs(rnd.IntN(5))}
				if chance(0.6) {
					e.Model.Tools = []string{"search", "transfer_to_agent"}
				}
			}
		case traces.KindModelFinished:
			if !chance(0.03) {
				e.Model = &traces.ModelCall{ID: finishID()}
				if chance(0.9) {
					e.Model.Output = &traces.Message{Role: "assistant", Content: pick(append(texts, "", "")...)}
					if chance(0.3) {
						e.Model.Output.ToolCalls = []traces.ToolCallSpec{{ID: ids("c", 6), Name: pick("transfer_to_agent", "search")}}
					}
				}
				if chance(0.7) {
					e.Model.Usage = &traces.Usage{PromptTokens: rnd.IntN(3000), TotalTokens: rnd.IntN(4000)}
				}
			}
		case traces.KindToolStarted, traces.KindToolFinished:
			if !chance(0.03) {
				e.Tool = &traces.ToolCall{Name: pick("search", "lookup", "transfer_to_agent", "exit"), CallID: ids("c", 6), Arguments: pick(`{"q":"x"}`, `{"q":"y"}`)}
				if e.Kind == traces.KindToolFinished {
					e.Tool.Result = pick("r1", "r2")
					e.Tool.Error = pick("", "", "", "boom")
					e.Tool.Interrupted = chance(0.05)
				}
			}
		case traces.KindMessage:
			e.Message = &traces.Message{Role: "assistant", Content: pick(texts...)}
		case traces.KindTransfer:
			if !chance(0.03) {
				e.Transfer = &traces.Transfer{From: pick(agentNames...), To: pick(agentNames...), Mode: traces.TransferLLM}
				e.Agent = e.Transfer.From
				if chance(0.15) {
					e.Transfer.Outcome, e.Transfer.Error = traces.TransferFailed, pick("no agent named ghost", strings.Repeat("refused ", 40))
				}
			}
		case traces.KindAgentToolEnter, traces.KindAgentToolExit:
			if !chance(0.03) {
				e.AgentTool = &traces.AgentToolCall{Caller: pick("supervisor", "research_agent"), Callee: pick("planner", "critic"), CallID: ids("a", 3),
					Request: pick(" Check the refund. ", "", request), InputMode: pick(traces.AgentToolInputRequest, traces.AgentToolInputFullHistory, "")}
			}
		case traces.KindSessionSet:
			if !chance(0.03) {
				e.Session = &traces.SessionSet{Key: ids("k", 3), Value: json.RawMessage(pick(values...)), SetBy: pick("", "", "writer", "researcher")}
			}
		case traces.KindInterrupted:
			e.Interrupt = &traces.Interrupt{Info: pick("", "Approve the refund?")}
		case traces.KindExit:
			e.Exit = &traces.Exit{}
		case traces.KindBreakLoop:
			e.BreakLoop = &traces.BreakLoop{From: e.Agent, Iterations: 2}
		}
		add(e)
	}
	if chance(0.7) {
		add(traces.Event{Kind: traces.KindRunFinished, Agent: "-", Run: &traces.RunMark{Status: traces.Status(pick(string(traces.StatusInterrupted), "success"))}})
	}
	if chance(0.15) { // seqs that are not places: what a rule counts between seqs is counted by seq
		shuffled := chance(0.5)
		for i := range tr.Events {
			tr.Events[i].Seq = int64(i/2 + 1)
			if shuffled {
				tr.Events[i].Seq = int64((i*37)%len(tr.Events) + 1)
			}
		}
	}
	return tr
}
