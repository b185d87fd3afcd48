package attach_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/callbacks"
	"github.com/cloudwego/eino/components"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/components/tool/utils"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/attach"
	"github.com/baton-dev/baton/internal/attachtest"
	"github.com/baton-dev/baton/traces"
)

// parkHold is how long the recorder holds an AgentTool call's end at most, waiting for the
// caller's events to carry its result: a run that paid it would last at least this long.
const parkHold = 5 * time.Second

// dispatcher is a custom agent that runs an AgentTool itself, as an app's own code may: no tool
// node, so no tool callbacks and no caller stream that will ever carry the call's result.
type dispatcher struct{ helper tool.InvokableTool }

func (d *dispatcher) Name(context.Context) string        { return "dispatcher" }
func (d *dispatcher) Description(context.Context) string { return "Asks helper, then answers." }
func (d *dispatcher) Run(ctx context.Context, _ *adk.AgentInput, _ ...adk.AgentRunOption) *adk.AsyncIterator[*adk.AgentEvent] {
	iter, gen := adk.NewAsyncIteratorPair[*adk.AgentEvent]()
	go func() {
		defer gen.Close()
		answer, err := d.helper.InvokableRun(ctx, `{"request":"Where is order 7?"}`)
		if err != nil {
			gen.Send(&adk.AgentEvent{Err: err})
			return
		}
		gen.Send(adk.EventFromMessage(schema.AssistantMessage("Helper says: "+answer, nil), nil, schema.Assistant, ""))
	}()
	return iter
}

// toolRunner is a custom agent that runs an AgentTool through a tool node of its own, as a custom
// agent built on compose does: the tool's callbacks fire, but its own events never carry the
// call's result.
type toolRunner struct{ tools *compose.ToolsNode }

func (d *toolRunner) Name(context.Context) string        { return "dispatcher" }
func (d *toolRunner) Description(context.Context) string { return "Asks helper, then answers." }
func (d *toolRunner) Run(ctx context.Context, _ *adk.AgentInput, _ ...adk.AgentRunOption) *adk.AsyncIterator[*adk.AgentEvent] {
	iter, gen := adk.NewAsyncIteratorPair[*adk.AgentEvent]()
	go func() {
		defer gen.Close()
		call := schema.AssistantMessage("", []schema.ToolCall{{ID: "call_1", Type: "function",
			Function: schema.FunctionCall{Name: "helper", Arguments: `{"request":"Where is order 7?"}`}}})
		results, err := d.tools.Invoke(ctx, call)
		if err != nil || len(results) != 1 {
			gen.Send(&adk.AgentEvent{Err: fmt.Errorf("tools: %v (%d results)", err, len(results))})
			return
		}
		gen.Send(adk.EventFromMessage(schema.AssistantMessage("Helper says: "+results[0].Content, nil), nil, schema.Assistant, ""))
	}()
	return iter
}

// checkQuick checks that tr validates, completed, and took far less than the recorder's hold.
func checkQuick(t *testing.T, tr traces.Trace) {
	t.Helper()
	if err := traces.Validate(tr); err != nil {
		t.Fatal(err)
	}
	if tr.Run.Status != traces.StatusCompleted {
		t.Fatalf("run %s (%s)", tr.Run.Status, tr.Run.Error)
	}
	if took := tr.Run.EndedAt.Sub(tr.Run.StartedAt); took > parkHold/2 {
		t.Errorf("the run took %v: something waited for the recorder's hold of %v", took, parkHold)
	}
}

// TestCustomAgentRunsAnAgentToolItself: an agent a custom agent runs by calling an AgentTool's
// InvokableRun is a visit inside the custom agent's (via workflow: its code ran it), with the
// custom agent's path before its own, not a transfer target waited for in vain.
func TestCustomAgentRunsAnAgentToolItself(t *testing.T) {
	ctx := context.Background()
	helper := adk.NewAgentTool(ctx, chat(t, "helper", agents.Say("Order 7 shipped."))).(tool.InvokableTool)
	tr, _ := recordWrapped(t, &dispatcher{helper: helper}, "Where is order 7?")
	checkQuick(t, tr)
	want := "run.started \nagent.started dispatcher\nagent.started helper\nmodel.started helper\nmodel.finished helper\n" +
		"message helper\nagent.finished helper\nmessage dispatcher\nagent.finished dispatcher\nrun.finished \n"
	if got := attachtest.Story(tr); got != want {
		t.Errorf("story:\n%s\nwant:\n%s", got, want)
	}
	for _, e := range tr.Events {
		if e.Kind == traces.KindAgentStarted && e.Agent == "helper" &&
			(e.AgentRun.Via != "workflow" || strings.Join(e.RunPath, ">") != "dispatcher>helper") {
			t.Errorf("helper started via %q at [%s], want via workflow at [dispatcher>helper]", e.AgentRun.Via, strings.Join(e.RunPath, ">"))
		}
	}
	visitPaths(t, tr)
}

// TestCustomAgentRunsAnAgentToolInItsToolNode: a call whose result the caller's events never
// carry is decided when they end, seen through callbacks only, and recorded where it ended,
// before the caller's answer, without the run waiting.
func TestCustomAgentRunsAnAgentToolInItsToolNode(t *testing.T) {
	ctx := context.Background()
	tools, err := compose.NewToolNode(ctx, &compose.ToolsNodeConfig{Tools: []tool.BaseTool{
		adk.NewAgentTool(ctx, chat(t, "helper", agents.Say("Order 7 shipped.")))}})
	if err != nil {
		t.Fatal(err)
	}
	tr, _ := recordWrapped(t, &toolRunner{tools: tools}, "Where is order 7?")
	checkQuick(t, tr)
	want := "run.started \nagent.started dispatcher\ntool.started dispatcher helper\nagenttool.entered dispatcher dispatcher->helper\n" +
		"agent.started helper\nmodel.started helper\nmodel.finished helper\nmessage helper\nagent.finished helper\n" +
		"agenttool.exited dispatcher dispatcher->helper\ntool.finished dispatcher helper\nmessage dispatcher\n" +
		"message dispatcher\nagent.finished dispatcher\nrun.finished \n"
	if got := attachtest.Story(tr); got != want {
		t.Errorf("story:\n%s\nwant:\n%s", got, want)
	}
	for _, e := range tr.Events {
		if e.Kind == traces.KindAgentToolExit && e.AgentTool.InnerEvents != traces.InnerEventsCallbacks {
			t.Errorf("agenttool.exited says inner_events %q, want %s", e.AgentTool.InnerEvents, traces.InnerEventsCallbacks)
		}
	}
}

// TestReturnDirectlyAgentToolBesideAnotherCall: lead's model calls helper, an AgentTool that
// returns directly, and clock in one turn. eino sends helper's result to lead's events only once
// the whole turn has ended, so what lead records after helper's end (clock's end, or, run one
// after the other, clock's start too) waits behind it for the sink without the run waiting; and
// helper's exit says how its inner events were seen.
func TestReturnDirectlyAgentToolBesideAnotherCall(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		sequential, internal bool
		want                 string
	}{
		{"parallel", false, false, traces.InnerEventsCallbacks},
		{"parallel internal events", false, true, traces.InnerEventsStream},
		{"sequential", true, false, traces.InnerEventsCallbacks},
		{"sequential internal events", true, true, traces.InnerEventsStream},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := recordReturnDirectly(t, tc.sequential, tc.internal)
			checkQuick(t, tr)
			var order []string
			exits, clockStarted, helperFinished := 0, 0, 0
			for _, e := range tr.Events {
				switch {
				case e.Kind == traces.KindAgentToolExit:
					exits++
					if e.AgentTool.InnerEvents != tc.want || e.AgentTool.Result != "Order 7 shipped." {
						t.Errorf("agenttool.exited %+v, want inner_events %s and helper's answer", *e.AgentTool, tc.want)
					}
					order = append(order, "exited helper")
				case e.Kind == traces.KindToolStarted && e.Tool.Name == "clock":
					clockStarted = len(order)
				case e.Kind == traces.KindToolFinished:
					if e.Tool.Name == "helper" {
						helperFinished = len(order)
					}
					order = append(order, "tool.finished "+e.Tool.Name)
				case e.Kind == traces.KindAgentFinished:
					order = append(order, "agent.finished "+e.Agent)
				}
			}
			want := []string{"agent.finished helper", "exited helper", "tool.finished helper", "tool.finished clock", "agent.finished lead"}
			if exits != 1 || !slices.Equal(order, want) {
				t.Errorf("ends %q, want %q", order, want)
			}
			if tc.sequential && clockStarted <= helperFinished {
				t.Errorf("clock started before helper's call ended (%q)", order)
			}
			visitPaths(t, tr)
		})
	}
}

// recordReturnDirectly runs lead (helper, returning directly, and clock in one turn, one after the
// other or at once) with attach's run option, and returns the trace.
func recordReturnDirectly(t *testing.T, sequential, internal bool) traces.Trace {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	helperEnded := make(chan struct{})
	var once sync.Once
	// The app's handler comes after the recorder's, so it sees helper's end after the recorder did.
	gate := callbacks.NewHandlerBuilder().OnEndFn(func(ctx context.Context, info *callbacks.RunInfo, _ callbacks.CallbackOutput) context.Context {
		if info.Component == components.ComponentOfTool && info.Name == "helper" {
			once.Do(func() { close(helperEnded) })
		}
		return ctx
	}).Build()
	clock, err := utils.InferTool("clock", "Tells the time.", func(ctx context.Context, _ struct{}) (string, error) {
		select {
		case <-helperEnded:
			return "noon", nil
		case <-ctx.Done():
			return "", errors.New("helper never ended")
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	lead, err := agents.NewChatAgent(ctx, attachtest.Scripted("lead", nil,
		agents.Do(agents.Ask("helper", "Where is order 7?"), agents.Call("clock", map[string]string{})),
		agents.Say("Never said: helper's answer is the last word.")),
		adk.ChatModelAgentConfig{Name: "lead", Description: "Answers.", Instruction: "Answer.",
			ToolsConfig: adk.ToolsConfig{
				ToolsNodeConfig: compose.ToolsNodeConfig{ExecuteSequentially: sequential,
					Tools: []tool.BaseTool{clock, adk.NewAgentTool(ctx, chat(t, "helper", agents.Say("Order 7 shipped.")))}},
				ReturnDirectly:     map[string]bool{"helper": true},
				EmitInternalEvents: internal,
			}})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	b := attach.New(attach.Config{Dir: dir})
	runner := adk.NewRunner(ctx, adk.RunnerConfig{Agent: lead})
	lines, _ := attachtest.Drain(t, runner.Run(ctx, []adk.Message{schema.UserMessage("Where is order 7?")}, b.Option(), adk.WithCallbacks(gate)))
	if last := lines[len(lines)-1]; !strings.Contains(last, `"Order 7 shipped."`) {
		t.Fatalf("the run's last event is %q, not helper's answer returned directly", last)
	}
	return attachtest.ReadTraces(t, b, dir, 1)[0]
}
