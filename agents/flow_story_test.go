package agents_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/schema"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/traces"
)

// storyEvent is one Runner event, reduced to what a test asserts on.
type storyEvent struct {
	Agent    string
	Path     string // RunPath joined with ">"
	Role     schema.RoleType
	Text     string
	Calls    []schema.ToolCall
	ToolName string // tool result events
	Transfer string // Action.TransferToAgent's destination
	Exit     bool
	Break    int // a BreakLoop action's iterations (eino's CurrentIterations+1); 0 without one
	Err      error
	Stream   bool
}

// line is a compact form of e, as in a story: "agent: calls a(...), b(...)", "agent: tool t ->
// result", "agent: says ...".
func (e storyEvent) line() string {
	switch {
	case e.Err != nil:
		return fmt.Sprintf("%s: error %v", e.Agent, e.Err)
	case e.Role == schema.Tool && e.Transfer != "":
		return fmt.Sprintf("%s: tool %s => %s", e.Agent, e.ToolName, e.Transfer)
	case e.Role == schema.Tool:
		return fmt.Sprintf("%s: tool %s", e.Agent, e.ToolName)
	case len(e.Calls) > 0:
		names := make([]string, len(e.Calls))
		for i, c := range e.Calls {
			names[i] = c.Function.Name
		}
		return fmt.Sprintf("%s: calls %s", e.Agent, strings.Join(names, ", "))
	default:
		return fmt.Sprintf("%s: says", e.Agent)
	}
}

// story is a run's events in order.
type story []storyEvent

func (s story) lines() []string {
	out := make([]string, len(s))
	for i, e := range s {
		out[i] = e.line()
	}
	return out
}

// final is the last event's text.
func (s story) final() string {
	if len(s) == 0 {
		return ""
	}
	return s[len(s)-1].Text
}

// toolResult returns the content of the first result of tool name, and whether there is one.
func (s story) toolResult(name string) (string, bool) {
	for _, e := range s {
		if e.Role == schema.Tool && e.ToolName == name {
			return e.Text, true
		}
	}
	return "", false
}

// modelSpy wraps each scripted model of a run to record, per agent, the tools the model was
// offered and the messages it got: the outside view of what eino handed each agent.
type modelSpy struct {
	mu     sync.Mutex
	tools  map[string][]string
	inputs map[string][][]*schema.Message
}

func (s *modelSpy) wrap(models agents.ModelFor) agents.ModelFor {
	return func(agent string) (model.ToolCallingChatModel, error) {
		m, err := models(agent)
		if err != nil {
			return nil, err
		}
		return &spiedModel{ToolCallingChatModel: m, agent: agent, spy: s}, nil
	}
}

func (s *modelSpy) record(agent string, tools []*schema.ToolInfo, input []*schema.Message) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tools == nil {
		s.tools, s.inputs = map[string][]string{}, map[string][][]*schema.Message{}
	}
	var names []string
	for _, t := range tools {
		names = append(names, t.Name)
	}
	s.tools[agent] = names
	s.inputs[agent] = append(s.inputs[agent], input)
}

// spiedModel records each call, then delegates (callbacks included) to the scripted model.
type spiedModel struct {
	model.ToolCallingChatModel
	agent string
	tools []*schema.ToolInfo
	spy   *modelSpy
}

func (m *spiedModel) IsCallbacksEnabled() bool { return true }

func (m *spiedModel) WithTools(tools []*schema.ToolInfo) (model.ToolCallingChatModel, error) {
	inner, err := m.ToolCallingChatModel.WithTools(tools)
	if err != nil {
		return nil, err
	}
	return &spiedModel{ToolCallingChatModel: inner, agent: m.agent, tools: tools, spy: m.spy}, nil
}

func (m *spiedModel) Generate(ctx context.Context, in []*schema.Message, opts ...model.Option) (*schema.Message, error) {
	m.spy.record(m.agent, model.GetCommonOptions(&model.Options{Tools: m.tools}, opts...).Tools, in)
	return m.ToolCallingChatModel.Generate(ctx, in, opts...)
}

func (m *spiedModel) Stream(ctx context.Context, in []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	m.spy.record(m.agent, model.GetCommonOptions(&model.Options{Tools: m.tools}, opts...).Tools, in)
	return m.ToolCallingChatModel.Stream(ctx, in, opts...)
}

// runStory builds flow with its scripts (seen through spy when not nil), runs input on a real
// adk.Runner and returns the events. The run must end within a minute.
func runStory(t *testing.T, flow agents.Flow, input string, streaming bool, spy *modelSpy, opts ...adk.AgentRunOption) story {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	models := flow.ScriptedModels(nil)
	if spy != nil {
		models = spy.wrap(models)
	}
	root, err := flow.Build(ctx, models)
	if err != nil {
		t.Fatalf("build %s: %v", flow.Name, err)
	}
	runner := adk.NewRunner(ctx, adk.RunnerConfig{Agent: root, EnableStreaming: streaming})
	iter := runner.Query(ctx, input, append(slices.Clone(flow.RunOptions), opts...)...)
	var s story
	for {
		ev, ok := iter.Next()
		if !ok {
			break
		}
		s = append(s, storyEventOf(t, ev))
	}
	if ctx.Err() != nil {
		t.Fatalf("run of %s did not end: %v", flow.Name, ctx.Err())
	}
	return s
}

// storyEventOf reduces ev, reading its message stream to the end.
func storyEventOf(t *testing.T, ev *adk.AgentEvent) storyEvent {
	t.Helper()
	var steps []string
	for _, st := range ev.RunPath {
		steps = append(steps, st.String())
	}
	e := storyEvent{Agent: ev.AgentName, Path: strings.Join(steps, ">"), Err: ev.Err}
	if ev.Action != nil {
		if ev.Action.TransferToAgent != nil {
			e.Transfer = ev.Action.TransferToAgent.DestAgentName
		}
		e.Exit = ev.Action.Exit
		if ev.Action.BreakLoop != nil {
			e.Break = ev.Action.BreakLoop.CurrentIterations + 1
		}
	}
	if ev.Output == nil || ev.Output.MessageOutput == nil {
		return e
	}
	mo := ev.Output.MessageOutput
	msg, err := mo.GetMessage()
	if err != nil {
		t.Fatalf("read the message of %s's event: %v", ev.AgentName, err)
	}
	e.Role, e.ToolName, e.Stream = mo.Role, mo.ToolName, mo.IsStreaming
	e.Text, e.Calls = msg.Content, msg.ToolCalls
	return e
}

// mustFlow looks a catalogue flow up.
func mustFlow(t *testing.T, name string) agents.Flow {
	t.Helper()
	f, err := agents.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// assertStory fails unless s's lines are want.
func assertStory(t *testing.T, s story, want ...string) {
	t.Helper()
	if got := s.lines(); !slices.Equal(got, want) {
		t.Fatalf("story:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// assertToolsMatchTree fails unless the tree is true to the run (assertTreeIsTrue) and every agent
// of it but the workflow agents (which have no model) had its model called.
func assertToolsMatchTree(t *testing.T, flow agents.Flow, spy *modelSpy) {
	t.Helper()
	assertTreeIsTrue(t, flow, spy)
	spy.mu.Lock()
	defer spy.mu.Unlock()
	for _, a := range flow.Agents {
		if _, ok := spy.tools[a.Name]; !ok && !isWorkflow(a.Kind) {
			t.Errorf("%s: model never called", a.Name)
		}
	}
}

// assertTreeIsTrue fails unless every agent whose model the spy saw called is in flow's tree and
// was offered the tools the tree lists.
func assertTreeIsTrue(t *testing.T, flow agents.Flow, spy *modelSpy) {
	t.Helper()
	spy.mu.Lock()
	defer spy.mu.Unlock()
	for name, tools := range spy.tools {
		i := slices.IndexFunc(flow.Agents, func(a traces.Agent) bool { return a.Name == name })
		if i < 0 {
			t.Errorf("agent %s is not in the tree", name)
		} else if !slices.Equal(tools, flow.Agents[i].Tools) {
			t.Errorf("%s: offered tools %q, tree says %q", name, tools, flow.Agents[i].Tools)
		}
	}
}

// isWorkflow reports whether an agent of kind runs sub-agents itself, with no model of its own.
func isWorkflow(kind traces.AgentKind) bool {
	return kind == traces.AgentSequential || kind == traces.AgentParallel || kind == traces.AgentLoop
}
