package agents_test

import (
	"strings"
	"testing"

	"github.com/baton-dev/baton/traces"
)

// frame returns the positions of the agenttool.entered and agenttool.exited events of callee's
// first call.
func (f facts) frame(callee string) (entered, exited int) {
	f.t.Helper()
	isCallee := func(e traces.Event) bool { return e.AgentTool.Callee == callee }
	caller := ""
	for _, e := range f.of(traces.KindAgentToolEnter, "") {
		if isCallee(e) {
			caller = e.AgentTool.Caller
			break
		}
	}
	entered, exited = f.index(traces.KindAgentToolEnter, caller, isCallee), f.index(traces.KindAgentToolExit, caller, isCallee)
	if entered < 0 || exited < entered {
		f.t.Fatalf("no AgentTool frame around %s: entered at %d, exited at %d", callee, entered, exited)
	}
	return entered, exited
}

// TestAgentToolExitFlow: an exit and a transfer inside agents called as tools end there; the caller
// goes on and answers last.
func TestAgentToolExitFlow(t *testing.T) {
	modes(t, func(t *testing.T, streaming bool) {
		f := recordFacts(t, "agenttool-exit", streaming)
		f.requireStatus(traces.StatusCompleted)
		exits := f.of(traces.KindExit, "")
		if len(exits) != 1 || exits[0].Agent != "refund_agent" {
			t.Fatalf("exit events %+v, want one of refund_agent", exits)
		}
		entered, exited := f.frame("refund_agent")
		if at := f.index(traces.KindExit, "refund_agent", nil); at < entered || at > exited {
			t.Errorf("the exit (%d) is outside refund_agent's AgentTool frame (%d-%d)", at, entered, exited)
		}
		if got := f.tr.Events[exited].AgentTool.Result; got != exits[0].Exit.FinalResult || got == "" {
			t.Errorf("the tool result %q is not the exit's final_result %q", got, exits[0].Exit.FinalResult)
		}
		// The transfer inside orders_desk's run stays there.
		assertEqual(t, "transfers", f.transfers(), []string{"orders_desk -> shipping_agent (llm)"})
		entered, exited = f.frame("orders_desk")
		if at := f.index(traces.KindTransfer, "orders_desk", nil); at < entered || at > exited {
			t.Errorf("the transfer (%d) is outside orders_desk's AgentTool frame (%d-%d)", at, entered, exited)
		}
		if got := f.tr.Events[exited].AgentTool.Result; got != f.lastReply("shipping_agent") {
			t.Errorf("orders_desk's tool result %q is not shipping_agent's answer", got)
		}
		shipping := f.modelInputs("shipping_agent")[0]
		if !contextFrom(shipping, "orders_desk") || contextFrom(shipping, "concierge") {
			t.Errorf("shipping_agent should see orders_desk's turn and nothing of the caller's:%s", joined(shipping))
		}
		// The caller carries on after both and answers last.
		afterExit := func(e traces.Event) bool { return e.Seq > exits[0].Seq }
		if f.index(traces.KindModelStarted, "concierge", afterExit) < 0 || !strings.Contains(f.lastReply("concierge"), exits[0].Exit.FinalResult) {
			t.Errorf("the concierge did not go on after the exit to answer with its result")
		}
		if ends := f.of(traces.KindAgentFinished, ""); ends[len(ends)-1].Agent != "concierge" {
			t.Errorf("the run's last agent to finish is %s, want concierge", ends[len(ends)-1].Agent)
		}
	})
}

// TestAgentToolHistoryFlow: a callee built WithFullChatHistoryAsInput is fed the caller's history,
// rewritten, instead of its request.
func TestAgentToolHistoryFlow(t *testing.T) {
	modes(t, func(t *testing.T, streaming bool) {
		f := recordFacts(t, "agenttool-history", streaming)
		f.requireStatus(traces.StatusCompleted)
		entered, _ := f.frame("escalation_agent")
		request := f.tr.Events[entered].AgentTool.Request
		if request != "Please take over." {
			t.Errorf("the frame's request is %q, want the model's argument", request)
		}
		if mode := f.tr.Events[entered].AgentTool.InputMode; mode != traces.AgentToolInputFullHistory {
			t.Errorf("the frame's input mode is %q, want %s: the callee never saw the request", mode, traces.AgentToolInputFullHistory)
		}
		in := f.modelInputs("escalation_agent")[0]
		for _, want := range []string{
			"For context: [support_lead] `lookup_customer` tool returned result: Customer 7781",
			"For context: [support_lead] called tool: `transfer_to_agent` with arguments: escalation_agent.",
		} {
			if !hasContent(in, want) {
				t.Errorf("the callee's input lacks %q:%s", want, joined(in))
			}
		}
		if hasContent(in, request) || hasContent(in, "You handle support requests") {
			t.Errorf("the callee's input holds the dropped request or the caller's system prompt:%s", joined(in))
		}
		start := f.of(traces.KindAgentStarted, "escalation_agent")[0]
		if !hasContent(start.AgentRun.Input, "For context: [support_lead]") || hasContent(start.AgentRun.Input, request) {
			t.Errorf("agent.started does not show the history the callee was fed:%s", joined(start.AgentRun.Input))
		}
		if got := f.toolResult("credit_invoice"); !strings.Contains(got, "INV-0331") {
			t.Errorf("the callee did not act on the caller's history: credit_invoice returned %q", got)
		}
	})
}

// TestAgentToolSilentFlow: with EmitInternalEvents off the Runner's stream shows only the caller,
// and the trace still shows the callees' work inside their frames.
func TestAgentToolSilentFlow(t *testing.T) {
	flow := mustFlow(t, "agenttool-silent")
	modes(t, func(t *testing.T, streaming bool) {
		var spy modelSpy
		s := runStory(t, flow, flow.DefaultInput, streaming, &spy)
		assertStory(t, s,
			"trip_planner: calls flight_agent",
			"trip_planner: tool flight_agent",
			"trip_planner: calls hotel_agent",
			"trip_planner: tool hotel_agent",
			"trip_planner: says",
		)
		assertToolsMatchTree(t, flow, &spy)

		f := recordFacts(t, "agenttool-silent", streaming)
		f.requireStatus(traces.StatusCompleted)
		assertEqual(t, "agent starts", f.starts(), []string{"trip_planner via run", "flight_agent via agenttool", "hotel_agent via agenttool"})
		for callee, tool := range map[string]string{"flight_agent": "search_flights", "hotel_agent": "search_hotels"} {
			entered, exited := f.frame(callee)
			at := f.index(traces.KindToolFinished, callee, func(e traces.Event) bool { return e.Tool.Name == tool })
			if at < entered || at > exited {
				t.Errorf("%s's %s call (%d) is not recorded inside its frame (%d-%d)", callee, tool, at, entered, exited)
			}
			if got := f.tr.Events[exited].AgentTool.Result; got != f.lastReply(callee) {
				t.Errorf("%s's frame result %q is not its answer %q", callee, got, f.lastReply(callee))
			}
		}
	})
}

// promptTokens sums the prompt tokens of agent's model calls.
func (f facts) promptTokens(agent string) int {
	n := 0
	for _, e := range f.of(traces.KindModelFinished, agent) {
		n += e.Model.Usage.PromptTokens
	}
	return n
}

// TestSupervisorAgentToolFlow compares the supervisor-agenttool flow with the supervisor flow:
// the same job and answer, by AgentTool calls instead of transfers.
func TestSupervisorAgentToolFlow(t *testing.T) {
	if a, b := mustFlow(t, "supervisor"), mustFlow(t, "supervisor-agenttool"); a.DefaultInput != b.DefaultInput {
		t.Fatalf("the two flows have different jobs: %q and %q", a.DefaultInput, b.DefaultInput)
	}
	modes(t, func(t *testing.T, streaming bool) {
		byTransfer := recordFacts(t, "supervisor", streaming)
		f := recordFacts(t, "supervisor-agenttool", streaming)
		f.requireStatus(traces.StatusCompleted)
		if got := f.transfers(); len(got) != 0 || len(byTransfer.transfers()) != 4 {
			t.Errorf("transfers %v here, %v in the supervisor flow; want none and 4", got, byTransfer.transfers())
		}
		assertEqual(t, "agent starts", f.starts(), []string{"supervisor via run", "research_agent via agenttool", "math_agent via agenttool"})
		for _, tool := range []string{"divide", "multiply"} {
			if got, want := f.toolResult(tool), byTransfer.toolResult(tool); got != want {
				t.Errorf("%s returned %q, %q in the supervisor flow", tool, got, want)
			}
		}
		if got := f.lastReply("supervisor"); !strings.Contains(got, "7.87%") || got != byTransfer.lastReply("supervisor") {
			t.Errorf("final answer %q differs from the supervisor flow's %q", got, byTransfer.lastReply("supervisor"))
		}
		// math_agent is fed only its request here, research_agent's work as context there.
		entered, _ := f.frame("math_agent")
		in := f.modelInputs("math_agent")[0]
		if mode := f.tr.Events[entered].AgentTool.InputMode; mode != traces.AgentToolInputRequest {
			t.Errorf("math_agent's frame says input mode %q, want %s", mode, traces.AgentToolInputRequest)
		}
		if contextFrom(in, "research_agent") || !hasContent(in, f.tr.Events[entered].AgentTool.Request) {
			t.Errorf("math_agent should see its request and nothing of research_agent's:%s", joined(in))
		}
		if !contextFrom(byTransfer.modelInputs("math_agent")[0], "research_agent") {
			t.Error("in the supervisor flow math_agent should see research_agent's work")
		}
		if here, there := f.promptTokens("math_agent"), byTransfer.promptTokens("math_agent"); here >= there {
			t.Errorf("math_agent read %d prompt tokens here, %d in the supervisor flow: want fewer here", here, there)
		}
	})
}

// TestAgentToolInnerEvents: each AgentTool call's agenttool.exited says whether the Runner's
// stream carried the callee's events (EmitInternalEvents on) or only callbacks showed them, and
// the Runner's stream of the same flow, read here on its own, agrees call by call.
func TestAgentToolInnerEvents(t *testing.T) {
	want := map[string]string{ // what each flow is built with
		"agenttool": traces.InnerEventsStream, "agenttool-silent": traces.InnerEventsCallbacks,
		"supervisor-agenttool": traces.InnerEventsStream, "deep": traces.InnerEventsCallbacks,
	}
	for name, mark := range want {
		t.Run(name, func(t *testing.T) {
			flow := mustFlow(t, name)
			modes(t, func(t *testing.T, streaming bool) {
				seen := map[string]bool{} // run paths the Runner's stream carried
				for _, e := range runStory(t, flow, flow.DefaultInput, streaming, nil) {
					seen[e.Path] = true
				}
				f := recordFacts(t, name, streaming)
				calls := 0
				for _, e := range f.tr.Events {
					if e.Kind != traces.KindAgentToolExit {
						continue
					}
					calls++
					inside := strings.Join(e.RunPath, ">") + ">" + e.AgentTool.Callee
					onStream := false
					for p := range seen {
						onStream = onStream || p == inside || strings.HasPrefix(p, inside+">")
					}
					if got := e.AgentTool.InnerEvents; got != mark || (got == traces.InnerEventsStream) != onStream {
						t.Errorf("#%d %s: inner events %q, want %q (the Runner's stream carried %s: %v)", e.Seq, e.AgentTool.CallID, got, mark, inside, onStream)
					}
				}
				if calls == 0 {
					t.Fatal("no AgentTool call recorded")
				}
			})
		})
	}
}
