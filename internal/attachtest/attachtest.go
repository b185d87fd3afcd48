// Package attachtest holds small eino apps, written as users write them and in no catalogue, for
// the tests of package attach: Helpdesk (a model-chosen transfer, a deterministic transfer back,
// an AgentTool that writes the session, an OutputKey, a sub-agent that never runs) and Refunds (a
// tool that interrupts for approval and is resumed). Scripted models drive the real eino
// machinery, so no key is needed.
package attachtest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/adk/prebuilt/supervisor"
	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/components/tool/utils"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/attach"
	"github.com/baton-dev/baton/traces"
)

// HelpdeskInput is the question Helpdesk is scripted for.
const HelpdeskInput = "Why was Alice charged twice?"

// Helpdesk builds a fresh helpdesk app: triage looks the account up through lookup_agent (an
// AgentTool whose find_account tool stores the account in the session), hands the case to
// billing_agent (a transfer chosen by its model), which answers into the session key
// billing_summary and is sent back to triage by a deterministic transfer; triage answers.
// tech_agent is a sub-agent that never runs. pace (nil for none) delays every model reply.
func Helpdesk(ctx context.Context, streaming bool, pace *agents.Pace) (*adk.Runner, error) {
	scripted := func(agent string, steps ...agents.Step) agents.ModelFor { return Scripted(agent, pace, steps...) }
	findAccount, err := utils.InferTool("find_account", "Finds a customer's account.",
		func(ctx context.Context, in struct {
			Name string `json:"name"`
		}) (string, error) {
			adk.AddSessionValue(ctx, "account", map[string]any{"name": in.Name, "id": 42})
			return in.Name + ": account 42, two charges of $12 on May 3", nil
		})
	if err != nil {
		return nil, err
	}
	lookup, err := agents.NewChatAgent(ctx, scripted("lookup_agent",
		agents.Do(agents.Call("find_account", map[string]string{"name": "alice"})),
		agents.Say("Alice has account 42 with two $12 charges on May 3."),
	), adk.ChatModelAgentConfig{
		Name: "lookup_agent", Description: "Looks customer accounts up.", Instruction: "Look the account up.",
		ToolsConfig: adk.ToolsConfig{ToolsNodeConfig: toolsOf(findAccount)},
	})
	if err != nil {
		return nil, err
	}
	billing, err := agents.NewChatAgent(ctx, scripted("billing_agent",
		agents.Say("The second $12 charge is a duplicate; it will be refunded."),
	), adk.ChatModelAgentConfig{
		Name: "billing_agent", Description: "Explains charges and refunds.", Instruction: "Explain the charges.",
		OutputKey: "billing_summary",
	})
	if err != nil {
		return nil, err
	}
	tech, err := agents.NewChatAgent(ctx, scripted("tech_agent", agents.Say("Have you tried turning it off and on?")),
		adk.ChatModelAgentConfig{Name: "tech_agent", Description: "Fixes technical problems.", Instruction: "Help."})
	if err != nil {
		return nil, err
	}
	lookupTool := adk.NewAgentTool(ctx, lookup)
	triage, err := agents.NewChatAgent(ctx, scripted("triage",
		agents.Do(agents.Ask("lookup_agent", "Find Alice's account and recent charges.")),
		agents.Do(agents.Transfer("billing_agent")),
		agents.Say("Alice was charged twice by mistake; the duplicate $12 will be refunded."),
	), adk.ChatModelAgentConfig{
		Name: "triage", Description: "Routes customer questions.", Instruction: "Route the question.",
		ToolsConfig: adk.ToolsConfig{ToolsNodeConfig: toolsOf(lookupTool)},
	})
	if err != nil {
		return nil, err
	}
	back := adk.AgentWithDeterministicTransferTo(ctx, &adk.DeterministicTransferConfig{Agent: billing, ToAgentNames: []string{"triage"}})
	root, err := adk.SetSubAgents(ctx, triage, []adk.Agent{back, tech})
	if err != nil {
		return nil, err
	}
	return adk.NewRunner(ctx, adk.RunnerConfig{Agent: root, EnableStreaming: streaming}), nil
}

// Scripted returns models that answer as agent with steps, at pace (nil for none): how the test
// apps give each agent its stand-in for an LLM.
func Scripted(agent string, pace *agents.Pace, steps ...agents.Step) agents.ModelFor {
	return func(string) (model.ToolCallingChatModel, error) {
		return agents.NewScriptedModel(agent, agents.NewScript(steps...), pace), nil
	}
}

// RefundsInput is the request Refunds is scripted for.
const RefundsInput = "Refund Alice's duplicate $12 charge."

// RefundsApproval is what the refund tool's interrupt asks.
const RefundsApproval = "Refund $12 to alice?"

// Refunds builds a refunds app on store: clerk calls refund, which interrupts for approval the
// first time; resumed with the answer as data, it refunds (or not), and clerk reports.
func Refunds(ctx context.Context, store adk.CheckPointStore) (*adk.Runner, error) {
	clerk, err := refundsClerk(ctx)
	if err != nil {
		return nil, err
	}
	return adk.NewRunner(ctx, adk.RunnerConfig{Agent: clerk, CheckPointStore: store}), nil
}

// WorkflowRefunds builds Refunds with clerk inside a workflow agent "desk" of the given kind
// (sequential, loop or parallel) as the root: eino hands such a root, on resume, the interrupt
// nested in its workflow's state.
func WorkflowRefunds(ctx context.Context, store adk.CheckPointStore, kind string) (*adk.Runner, error) {
	clerk, err := refundsClerk(ctx)
	if err != nil {
		return nil, err
	}
	var desk adk.ResumableAgent
	switch kind {
	case "sequential":
		desk, err = adk.NewSequentialAgent(ctx, &adk.SequentialAgentConfig{Name: "desk", SubAgents: []adk.Agent{clerk}})
	case "loop":
		desk, err = adk.NewLoopAgent(ctx, &adk.LoopAgentConfig{Name: "desk", SubAgents: []adk.Agent{clerk}, MaxIterations: 1})
	case "parallel":
		desk, err = adk.NewParallelAgent(ctx, &adk.ParallelAgentConfig{Name: "desk", SubAgents: []adk.Agent{clerk}})
	default:
		err = fmt.Errorf("no workflow kind %q", kind)
	}
	if err != nil {
		return nil, err
	}
	return adk.NewRunner(ctx, adk.RunnerConfig{Agent: desk, CheckPointStore: store}), nil
}

// refundsClerk is the agent of Refunds: it calls refund, then reports its result.
func refundsClerk(ctx context.Context) (*adk.ChatModelAgent, error) {
	refund, err := refundTool()
	if err != nil {
		return nil, err
	}
	return agents.NewChatAgent(ctx, func(string) (model.ToolCallingChatModel, error) {
		return agents.NewScriptedModel("clerk", agents.NewScript(
			agents.Do(agents.Call("refund", map[string]int{"amount": 12})),
			agents.QuoteToolResult("Done: %s."),
		), nil), nil
	}, adk.ChatModelAgentConfig{
		Name: "clerk", Description: "Handles refunds.", Instruction: "Refund when asked.",
		ToolsConfig: adk.ToolsConfig{ToolsNodeConfig: toolsOf(refund)},
	})
}

// SupervisedRefundsInput is the request SupervisedRefunds is scripted for.
const SupervisedRefundsInput = "Alice was charged twice: refund the duplicate $12."

// SupervisedRefunds builds a supervised refunds app on store, eino's prebuilt supervisor as users
// build it, whose models decide from what they are given (so it resumes in another process too): manager hands the case to clerk (a transfer chosen by its model); clerk finds the
// charge (its tool stores it in the session under "charge") and calls refund, which interrupts
// for approval as in Refunds; resumed, clerk reports, eino sends it back to manager by a
// deterministic transfer, and manager answers into the session key "answer". auditor is a
// sub-agent that never runs. With streaming, every agent streams its replies.
func SupervisedRefunds(ctx context.Context, store adk.CheckPointStore, streaming bool) (*adk.Runner, error) {
	refund, err := refundTool()
	if err != nil {
		return nil, err
	}
	findCharge, err := utils.InferTool("find_charge", "Finds a customer's latest charge.",
		func(ctx context.Context, in struct {
			Customer string `json:"customer"`
		}) (string, error) {
			// A string: eino saves the session in the checkpoint with gob, which knows no map[string]any.
			adk.AddSessionValue(ctx, "charge", in.Customer+": $12, charged twice")
			return in.Customer + ": $12, charged twice", nil
		})
	if err != nil {
		return nil, err
	}
	clerk, err := agents.NewChatAgent(ctx, deciding("clerk", func(in []*schema.Message) agents.Reply {
		switch lastTool(in) {
		case "refund":
			return agents.Reply{Text: "Done: " + agents.LastToolResult(in) + "."}
		case "find_charge":
			return agents.Reply{ToolCalls: []agents.ToolCall{agents.Call("refund", map[string]int{"amount": 12})}}
		}
		return agents.Reply{ToolCalls: []agents.ToolCall{agents.Call("find_charge", map[string]string{"customer": "alice"})}}
	}), adk.ChatModelAgentConfig{
		Name: "clerk", Description: "Handles refunds.", Instruction: "Refund when asked.",
		ToolsConfig: adk.ToolsConfig{ToolsNodeConfig: toolsOf(findCharge, refund)},
	})
	if err != nil {
		return nil, err
	}
	auditor, err := agents.NewChatAgent(ctx, Scripted("auditor", nil, agents.Say("All in order.")),
		adk.ChatModelAgentConfig{Name: "auditor", Description: "Audits accounts.", Instruction: "Audit."})
	if err != nil {
		return nil, err
	}
	manager, err := agents.NewChatAgent(ctx, deciding("manager", func(in []*schema.Message) agents.Reply {
		for _, m := range in {
			if strings.Contains(m.Content, "Done: ") { // clerk's report, as eino rewrites it for manager
				return agents.Reply{Text: SupervisedRefundsAnswer}
			}
		}
		return agents.Reply{ToolCalls: []agents.ToolCall{agents.Transfer("clerk")}}
	}), adk.ChatModelAgentConfig{Name: "manager", Description: "Runs the refunds desk.", Instruction: "Delegate.", OutputKey: "answer"})
	if err != nil {
		return nil, err
	}
	root, err := supervisor.New(ctx, &supervisor.Config{Supervisor: manager, SubAgents: []adk.Agent{clerk, auditor}})
	if err != nil {
		return nil, err
	}
	return adk.NewRunner(ctx, adk.RunnerConfig{Agent: root, CheckPointStore: store, EnableStreaming: streaming}), nil
}

// SupervisedRefundsAnswer is manager's final answer in SupervisedRefunds.
const SupervisedRefundsAnswer = "Alice's duplicate $12 was refunded."

// deciding returns models that answer as agent with decide, from the conversation they are given
// alone, as an LLM does: unlike a script's place, that survives a resume in another process.
func deciding(agent string, decide func([]*schema.Message) agents.Reply) agents.ModelFor {
	steps := make([]agents.Step, 16)
	for i := range steps {
		steps[i] = agents.Computed(decide)
	}
	return Scripted(agent, nil, steps...)
}

// lastTool returns the name of the tool whose result is the newest message of in, or "".
func lastTool(in []*schema.Message) string {
	if n := len(in); n > 0 && in[n-1] != nil && in[n-1].Role == schema.Tool {
		return in[n-1].ToolName
	}
	return ""
}

// refundTool returns the refund tool of the refunds apps: it interrupts for approval the first time;
// resumed with "approved" as data, it refunds, else it does not.
func refundTool() (tool.InvokableTool, error) {
	return utils.InferTool("refund", "Refunds a charge once a person approves.",
		func(ctx context.Context, in struct {
			Amount int `json:"amount"`
		}) (string, error) {
			wasTarget, hasData, answer := tool.GetResumeContext[string](ctx)
			if !wasTarget {
				return "", tool.Interrupt(ctx, RefundsApproval)
			}
			if !hasData || answer != "approved" {
				return "refund rejected", nil
			}
			return fmt.Sprintf("refunded $%d", in.Amount), nil
		})
}

// toolsOf returns the tools node config of an agent with tools, run one after another so a
// run's events come in one order.
func toolsOf(tools ...tool.BaseTool) compose.ToolsNodeConfig {
	return compose.ToolsNodeConfig{Tools: tools, ExecuteSequentially: true}
}

// Store is an in-memory checkpoint store, as apps use in examples and tests.
type Store struct {
	mu   sync.Mutex
	data map[string][]byte
}

// NewStore returns an empty store.
func NewStore() *Store { return &Store{data: make(map[string][]byte)} }

// Get returns the checkpoint saved under id.
func (s *Store) Get(_ context.Context, id string) ([]byte, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.data[id]
	return b, ok, nil
}

// Set saves a checkpoint under id.
func (s *Store) Set(_ context.Context, id string, b []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.data[id] = b
	return nil
}

// FileStore is a checkpoint store in a directory, one file per checkpoint: what lets a run stop in
// one process and resume in another.
type FileStore string

// Get returns the checkpoint saved under id.
func (s FileStore) Get(_ context.Context, id string) ([]byte, bool, error) {
	b, err := os.ReadFile(filepath.Join(string(s), id))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	return b, err == nil, err
}

// Set saves a checkpoint under id.
func (s FileStore) Set(_ context.Context, id string, b []byte) error {
	return os.WriteFile(filepath.Join(string(s), id), b, 0o600)
}

// Drain reads events to their end as an app does (streamed messages included) and describes each
// one, with the transfers the events announce ("from -> to").
func Drain(tb testing.TB, events *adk.AsyncIterator[*adk.AgentEvent]) (lines, transfers []string) {
	tb.Helper()
	for {
		ev, ok := events.Next()
		if !ok {
			return lines, transfers
		}
		line := ev.AgentName + " " + strings.Join(runPath(ev), ">")
		if ev.Output != nil && ev.Output.MessageOutput != nil {
			msg, err := ev.Output.MessageOutput.GetMessage()
			if err != nil {
				tb.Fatal(err)
			}
			line += fmt.Sprintf(" %s %q %d", msg.Role, msg.Content, len(msg.ToolCalls))
		}
		if ev.Action != nil && ev.Action.TransferToAgent != nil {
			line += " transfer " + ev.Action.TransferToAgent.DestAgentName
			transfers = append(transfers, ev.AgentName+" -> "+ev.Action.TransferToAgent.DestAgentName)
		}
		if ev.Action != nil && ev.Action.Interrupted != nil {
			line += " interrupted"
		}
		if ev.Err != nil {
			line += " error " + ev.Err.Error()
		}
		lines = append(lines, line)
	}
}

// DrainInterrupted reads events to their end as Drain does and returns the interrupt they stop at:
// the id of its root cause, which a resume targets.
func DrainInterrupted(tb testing.TB, events *adk.AsyncIterator[*adk.AgentEvent]) string {
	tb.Helper()
	id := ""
	for {
		ev, ok := events.Next()
		if !ok {
			break
		}
		if ev.Output != nil && ev.Output.MessageOutput != nil {
			if _, err := ev.Output.MessageOutput.GetMessage(); err != nil {
				tb.Fatal(err)
			}
		}
		if ev.Action != nil && ev.Action.Interrupted != nil {
			for _, c := range ev.Action.Interrupted.InterruptContexts {
				if c != nil && c.IsRootCause {
					id = c.ID
				}
			}
		}
	}
	if id == "" {
		tb.Fatal("the run did not stop at an interrupt")
	}
	return id
}

func runPath(ev *adk.AgentEvent) []string {
	out := make([]string, len(ev.RunPath))
	for i, s := range ev.RunPath {
		out[i] = s.String()
	}
	return out
}

// Story reduces a trace to what a recorder decides: each event's kind and agent, and the handoff
// facts, without times, texts or run paths.
func Story(tr traces.Trace) string {
	var b strings.Builder
	for _, e := range tr.Events {
		fmt.Fprintf(&b, "%s %s", e.Kind, e.Agent)
		switch {
		case e.Transfer != nil:
			fmt.Fprintf(&b, " %s->%s %s", e.Transfer.From, e.Transfer.To, e.Transfer.Mode)
		case e.AgentTool != nil:
			fmt.Fprintf(&b, " %s->%s", e.AgentTool.Caller, e.AgentTool.Callee)
		case e.Tool != nil:
			fmt.Fprintf(&b, " %s", e.Tool.Name)
		case e.Session != nil:
			fmt.Fprintf(&b, " %s by %s", e.Session.Key, e.Session.SetBy)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// HasContext reports whether msgs hold eino's "For context:" rewrite of a message of agent.
func HasContext(msgs []traces.Message, agent string) bool {
	for _, m := range msgs {
		if strings.HasPrefix(m.Content, "For context: ["+agent+"]") {
			return true
		}
	}
	return false
}

// CheckHelpdesk checks a recorded Helpdesk run against the transfers its stream announced and
// the facts of the app: agents and their relations inferred, boundaries, session setters and the
// history each model was fed.
func CheckHelpdesk(t testing.TB, tr traces.Trace, streamTransfers []string) {
	t.Helper()
	if tr.Run.Status != traces.StatusCompleted || tr.Run.Flow != "triage" || tr.Run.Input != HelpdeskInput {
		t.Errorf("run = %+v, want a completed run of flow triage on the helpdesk input", tr.Run)
	}
	var transfers, modes []string
	for _, e := range tr.Events {
		if e.Transfer != nil {
			transfers = append(transfers, e.Transfer.From+" -> "+e.Transfer.To)
			modes = append(modes, e.Transfer.Mode)
		}
	}
	if !slices.Equal(transfers, streamTransfers) || !slices.Equal(modes, []string{traces.TransferLLM, traces.TransferDeterministic}) {
		t.Errorf("transfers %v %v, want %v as the stream says, llm then deterministic", transfers, modes, streamTransfers)
	}
	want := map[string]traces.Agent{
		"triage":        {Name: "triage", Kind: traces.AgentChatModel},
		"lookup_agent":  {Name: "lookup_agent", Kind: traces.AgentChatModel, Parent: "triage", Relation: traces.RelationAgentTool},
		"billing_agent": {Name: "billing_agent", Parent: "triage", Relation: traces.RelationSubAgent, OutputKey: "billing_summary", Description: "Explains charges and refunds."},
		"tech_agent":    {Name: "tech_agent", Parent: "triage", Relation: traces.RelationSubAgent, Description: "Fixes technical problems."},
	}
	if len(tr.Agents) != len(want) {
		t.Errorf("agents = %+v, want %d", tr.Agents, len(want))
	}
	for _, a := range tr.Agents {
		w, ok := want[a.Name]
		if !ok || a.Parent != w.Parent || a.Relation != w.Relation || (w.OutputKey != "" && a.OutputKey != w.OutputKey) ||
			(w.Description != "" && a.Description != w.Description) || (w.Kind != "" && a.Kind != w.Kind) {
			t.Errorf("inferred agent %+v, want %+v", a, w)
		}
	}
	setBy := map[string]string{}
	for _, e := range tr.Events {
		if e.Session != nil {
			setBy[e.Session.Key] = e.Session.SetBy
			if e.Agent != e.Session.SetBy {
				t.Errorf("session.set of %s is recorded under %s, not its setter %s", e.Session.Key, e.Agent, e.Session.SetBy)
			}
		}
	}
	if setBy["account"] != "lookup_agent" || setBy["billing_summary"] != "billing_agent" {
		t.Errorf("session set by %v, want account by lookup_agent and billing_summary by billing_agent", setBy)
	}
	entered, exited := 0, 0
	for _, e := range tr.Events {
		switch {
		case e.Kind == traces.KindAgentToolEnter && e.AgentTool.Callee == "lookup_agent":
			entered++
		case e.Kind == traces.KindAgentToolExit && e.AgentTool.Callee == "lookup_agent" && strings.Contains(e.AgentTool.Result, "account 42"):
			exited++
		case e.Kind == traces.KindModelStarted && e.Agent == "billing_agent":
			if !HasContext(e.Model.Input, "triage") {
				t.Errorf("billing_agent's model input lacks triage's messages as \"For context:\": %+v", e.Model.Input)
			}
		case e.Kind == traces.KindModelStarted && e.Agent == "lookup_agent":
			if HasContext(e.Model.Input, "triage") {
				t.Errorf("lookup_agent, an AgentTool, was fed triage's history: %+v", e.Model.Input)
			}
		}
	}
	if entered != 1 || exited != 1 {
		t.Errorf("lookup_agent boundary entered %d and exited %d times, want once each", entered, exited)
	}
}

// ReadTraces waits until b has written every run it recorded, then returns the n trace files of
// dir, oldest first.
func ReadTraces(t testing.TB, b *attach.Baton, dir string, n int) []traces.Trace {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := b.Close(ctx); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.trace.json"))
	if len(files) != n {
		t.Fatalf("%d trace files in %s, want %d", len(files), dir, n)
	}
	var out []traces.Trace
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := traces.Unmarshal(data)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out = append(out, tr)
	}
	slices.SortFunc(out, func(a, b traces.Trace) int { return a.Run.StartedAt.Compare(b.Run.StartedAt) })
	return out
}
