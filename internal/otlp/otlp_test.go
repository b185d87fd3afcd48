package otlp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cloudwego/eino/adk"
	"go.uber.org/goleak"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/internal/agentstest"
	"github.com/baton-dev/baton/internal/otlp"
	"github.com/baton-dev/baton/internal/otlp/otlptest"
	"github.com/baton-dev/baton/traces"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// exported runs a catalogue flow with an exporter watching it, shuts the exporter down (which
// sends everything), and returns the spans a receiver got and the run's trace.
func exported(t *testing.T, name string, content bool) ([]otlptest.Span, traces.Trace) {
	t.Helper()
	flow, err := agents.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return exportedFlow(t, flow, content)
}

func exportedFlow(t *testing.T, flow agents.Flow, content bool) ([]otlptest.Span, traces.Trace) {
	t.Helper()
	rcv := otlptest.NewReceiver(t)
	exp, err := otlp.New(otlp.Config{Endpoint: rcv.URL, Content: content})
	if err != nil {
		t.Fatal(err)
	}
	rec := runFlow(t, exp, flow)
	shutdown(t, exp)
	return rcv.Spans(), rec.Snapshot()
}

// runFlow runs a flow at full speed with exp watching it.
func runFlow(t *testing.T, exp *otlp.Exporter, flow agents.Flow) *traces.Recording {
	t.Helper()
	rec := traces.NewRecording(traces.Run{ID: traces.NewRunID(), Flow: flow.Name, Input: flow.DefaultInput, Model: "scripted"}, flow.Agents)
	exp.Watch(rec)
	agents.RunFlow(context.Background(), flow, flow.DefaultInput, agents.Options{}, rec)
	return rec
}

// shutdown ends exp, failing t if it has not exported every run by a deadline far past what a
// loaded machine needs (a run of thousands of spans with content takes seconds under -race).
func shutdown(t *testing.T, exp *otlp.Exporter) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := exp.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
}

// tree indexes spans by id.
type tree map[string]otlptest.Span

func index(spans []otlptest.Span) tree {
	t := tree{}
	for _, s := range spans {
		t[s.ID] = s
	}
	return t
}

func (tr tree) parent(s otlptest.Span) otlptest.Span { return tr[s.Parent] }

// named returns the spans called name, in order of start.
func named(spans []otlptest.Span, name string) []otlptest.Span {
	var out []otlptest.Span
	for _, s := range spans {
		if s.Name == name {
			out = append(out, s)
		}
	}
	slices.SortStableFunc(out, func(a, b otlptest.Span) int { return a.Start.Compare(b.Start) })
	return out
}

func root(t *testing.T, spans []otlptest.Span) otlptest.Span {
	t.Helper()
	var roots []otlptest.Span
	for _, s := range spans {
		if s.Parent == "" {
			roots = append(roots, s)
		}
	}
	if len(roots) != 1 {
		t.Fatalf("%d root spans, want 1", len(roots))
	}
	return roots[0]
}

func TestSupervisorRunIsOneTraceOfAgentVisitsAndTransfers(t *testing.T) {
	spans, tr := exported(t, "supervisor", false)
	ix := index(spans)
	run := root(t, spans)
	if run.Name != "invoke_agent supervisor" || run.Attrs["baton.run.id"] != tr.Run.ID ||
		run.Attrs["baton.run.status"] != "completed" || run.Attrs["gen_ai.operation.name"] != "invoke_agent" || run.StatusError {
		t.Errorf("run span %s %v, want invoke_agent supervisor for run %s, completed", run.Name, run.Attrs, tr.Run.ID)
	}
	if first, last := tr.Events[0], tr.Events[len(tr.Events)-1]; !run.Start.Equal(first.Time) || !run.End.Equal(last.Time) {
		t.Errorf("run span %s..%s, want the run's own times %s..%s", run.Start, run.End, first.Time, last.Time)
	}
	if run.Resource["service.name"] != "baton" {
		t.Errorf("resource %v, want service.name baton", run.Resource)
	}
	for _, s := range spans {
		if s.TraceID != run.TraceID {
			t.Fatalf("span %s is in trace %s, not the run's %s", s.Name, s.TraceID, run.TraceID)
		}
		if s.Parent != "" && ix[s.Parent].ID == "" {
			t.Errorf("span %s has a parent that was not sent", s.Name)
		}
	}

	// Transferred agents are visits of their own beside each other, under the run, in order.
	var order []string
	for _, s := range sortByStart(spans) {
		if strings.HasPrefix(s.Name, "invoke_agent ") && s.Parent != "" {
			if s.Parent != run.ID {
				t.Errorf("visit %s is under %s, want the run", s.Name, ix.parent(s).Name)
			}
			order = append(order, s.Attrs["gen_ai.agent.name"].(string))
		}
	}
	if got, want := strings.Join(order, " "), "supervisor research_agent supervisor math_agent supervisor"; got != want {
		t.Errorf("agent visits %q, want %q", got, want)
	}

	// Each transfer is an execute_tool transfer_to_agent span of the agent that transferred,
	// with its mode; the target's visit links to it.
	transfers := named(spans, "execute_tool transfer_to_agent")
	var modes []string
	for _, s := range transfers {
		from := ix.parent(s)
		modes = append(modes, from.Attrs["gen_ai.agent.name"].(string)+">"+s.Attrs["baton.transfer.to"].(string)+":"+s.Attrs["baton.transfer.mode"].(string))
		if s.Attrs["gen_ai.tool.name"] != "transfer_to_agent" || s.Attrs["gen_ai.operation.name"] != "execute_tool" {
			t.Errorf("transfer span attributes %v", s.Attrs)
		}
		// OpenTelemetry's own transfer attributes: the source agent, control passed to the target.
		if s.Attrs["gen_ai.transfer.mode"] != "pass_control" || s.Attrs["gen_ai.transfer.target.type"] != "agent" ||
			s.Attrs["gen_ai.transfer.target.name"] != s.Attrs["baton.transfer.to"] || s.Attrs["gen_ai.agent.name"] != from.Attrs["gen_ai.agent.name"] {
			t.Errorf("transfer span %v, want gen_ai.transfer.* saying control passed from %v to %v", s.Attrs, from.Attrs["gen_ai.agent.name"], s.Attrs["baton.transfer.to"])
		}
		if id, _ := s.Attrs["gen_ai.tool.call.id"].(string); s.Attrs["baton.transfer.mode"] == "llm" && !strings.HasPrefix(id, "supervisor_call_") {
			t.Errorf("transfer %v: an llm transfer is the model's tool call", s.Attrs)
		}
	}
	want := "supervisor>research_agent:llm research_agent>supervisor:deterministic supervisor>math_agent:llm math_agent>supervisor:deterministic"
	if got := strings.Join(modes, " "); got != want {
		t.Errorf("transfers %q, want %q", got, want)
	}
	for _, s := range sortByStart(spans) {
		if s.Attrs["baton.agent.via"] != "transfer" {
			continue
		}
		if len(s.Links) != 1 || ix[s.Links[0].SpanID].Name != "execute_tool transfer_to_agent" ||
			ix[s.Links[0].SpanID].Attrs["baton.transfer.to"] != s.Attrs["gen_ai.agent.name"] {
			t.Errorf("visit %s links %v, want the transfer to it", s.Name, s.Links)
		}
	}

	// Model calls: chat spans under the agent's visit, with the model and token usage.
	chats := named(spans, "chat scripted")
	if len(chats) != countKind(tr, traces.KindModelStarted) {
		t.Errorf("%d chat spans for %d model calls", len(chats), countKind(tr, traces.KindModelStarted))
	}
	for _, c := range chats {
		p := ix.parent(c)
		if !strings.HasPrefix(p.Name, "invoke_agent ") || p.Attrs["gen_ai.agent.name"] != c.Attrs["gen_ai.agent.name"] {
			t.Errorf("chat span of %v is under %s", c.Attrs["gen_ai.agent.name"], p.Name)
		}
		in, _ := c.Attrs["gen_ai.usage.input_tokens"].(int64)
		out, _ := c.Attrs["gen_ai.usage.output_tokens"].(int64)
		if c.Attrs["gen_ai.request.model"] != "scripted" || in <= 0 || out <= 0 {
			t.Errorf("chat span attributes %v, want the model and token usage", c.Attrs)
		}
	}
	if search := named(spans, "execute_tool search"); len(search) == 0 || ix.parent(search[0]).Name != "invoke_agent research_agent" {
		t.Errorf("execute_tool search spans %v, want them under research_agent", search)
	} else if _, ok := search[0].Attrs["gen_ai.transfer.mode"]; ok || search[0].Attrs["gen_ai.agent.name"] != "research_agent" {
		t.Errorf("an ordinary tool's span %v: want its agent and no transfer attributes", search[0].Attrs)
	}

	// Without --otlp-content, no words of the run leave Baton.
	for _, s := range spans {
		for k := range s.Attrs {
			if contentKey(k) {
				t.Errorf("span %s carries %s without content export", s.Name, k)
			}
		}
	}
}

func TestAgentToolVisitNestsUnderCallersToolSpan(t *testing.T) {
	spans, _ := exported(t, "agenttool", false)
	ix := index(spans)
	run := root(t, spans)
	for _, callee := range []string{"research_agent", "code_agent", "review_agent"} {
		visits := named(spans, "invoke_agent "+callee)
		if len(visits) != 1 {
			t.Fatalf("%d visits of %s, want 1", len(visits), callee)
		}
		call := ix.parent(visits[0])
		caller := ix.parent(call)
		if call.Name != "execute_tool "+callee || caller.Name != "invoke_agent project_manager" || caller.Parent != run.ID {
			t.Errorf("%s's visit is under %q under %q, want execute_tool %s under project_manager's visit", callee, call.Name, caller.Name, callee)
		}
		if visits[0].Attrs["baton.agent.via"] != "agenttool" || visits[0].Start.Before(call.Start) || visits[0].End.After(call.End) {
			t.Errorf("%s's visit %v %s..%s is not inside its call %s..%s", callee, visits[0].Attrs, visits[0].Start, visits[0].End, call.Start, call.End)
		}
		if call.Attrs["gen_ai.transfer.mode"] != "return_to_caller" || call.Attrs["gen_ai.transfer.target.type"] != "agent" ||
			call.Attrs["gen_ai.transfer.target.name"] != callee || call.Attrs["gen_ai.agent.name"] != "project_manager" {
			t.Errorf("%s's call %v, want gen_ai.transfer.* saying project_manager called it and it returns to its caller", callee, call.Attrs)
		}
		if got := call.Attrs["baton.agenttool.inner_events"]; got != traces.InnerEventsStream {
			t.Errorf("%s's call says inner_events %v, want %s: the flow emits internal events", callee, got, traces.InnerEventsStream)
		}
		if tools := named(spans, "execute_tool web_search"); callee == "research_agent" && (len(tools) != 1 || tools[0].Parent != visits[0].ID) {
			t.Errorf("research_agent's own tool call is not under its visit")
		}
	}
	// Session changes are events of the visit of the agent that made them, or, when they come in
	// after it ended, of the agent still at work.
	var keys []string
	for _, s := range spans {
		for _, e := range s.Events {
			if e.Name == "session.set" {
				keys = append(keys, e.Attrs["baton.session.key"].(string))
				if _, ok := e.Attrs["baton.session.value"]; ok {
					t.Errorf("session value exported without content export")
				}
			}
		}
	}
	if !slices.Contains(keys, "research_notes") {
		t.Errorf("session events %v, want research_notes", keys)
	}
}

// TestAgentToolCallSaysItsInnerEventsWereCallbacksOnly: with internal events off, each AgentTool
// call's span says its inner work was seen through callbacks only.
func TestAgentToolCallSaysItsInnerEventsWereCallbacksOnly(t *testing.T) {
	spans, tr := exported(t, "agenttool-silent", false)
	calls := 0
	for _, e := range tr.Events {
		if e.Kind != traces.KindAgentToolExit {
			continue
		}
		calls++
		call := named(spans, "execute_tool "+e.AgentTool.Callee)
		if len(call) != 1 || call[0].Attrs["baton.agenttool.inner_events"] != traces.InnerEventsCallbacks {
			t.Errorf("the span of %s's call: %+v, want one with baton.agenttool.inner_events callbacks", e.AgentTool.Callee, call)
		}
	}
	if calls == 0 {
		t.Fatal("the flow made no AgentTool call")
	}
}

func TestContentOnlyWhenAsked(t *testing.T) {
	spans, tr := exported(t, "supervisor", true)
	chats := named(spans, "chat scripted")
	var input []struct {
		Role  string `json:"role"`
		Parts []struct {
			Type    string `json:"type"`
			Content string `json:"content"`
		} `json:"parts"`
	}
	if err := json.Unmarshal([]byte(chats[0].Attrs["gen_ai.input.messages"].(string)), &input); err != nil {
		t.Fatalf("gen_ai.input.messages: %v", err)
	}
	if len(input) == 0 || input[0].Role != "user" || input[0].Parts[0].Content != tr.Run.Input {
		t.Errorf("first model input %+v, want the user's input first", input)
	}
	if s, _ := chats[0].Attrs["gen_ai.system_instructions"].(string); !strings.Contains(s, "Available other agents") {
		t.Errorf("system instructions %q, want the supervisor's prompt with eino's transfer block", s)
	}
	if out, _ := chats[0].Attrs["gen_ai.output.messages"].(string); !strings.Contains(out, `"type":"tool_call","id":"supervisor_call_1","name":"transfer_to_agent","arguments":{"agent_name":"research_agent"}`) {
		t.Errorf("first model output %s, want its transfer call", out)
	}
	search := named(spans, "execute_tool search")[0]
	if search.Attrs["gen_ai.tool.call.arguments"] == nil || search.Attrs["gen_ai.tool.call.result"] == nil {
		t.Errorf("tool span %v, want its arguments and result", search.Attrs)
	}
	if r := root(t, spans); !strings.Contains(r.Attrs["gen_ai.input.messages"].(string), tr.Run.Input) {
		t.Errorf("run span input %v", r.Attrs["gen_ai.input.messages"])
	}
}

func TestFailedRunMarksItsSpans(t *testing.T) {
	spans, tr := exported(t, "failing", false)
	run := root(t, spans)
	if !run.StatusError || run.Attrs["baton.run.status"] != "failed" || run.StatusMessage != tr.Run.Error {
		t.Errorf("run span status error=%v %q %v, want failed with %q", run.StatusError, run.StatusMessage, run.Attrs["baton.run.status"], tr.Run.Error)
	}
	tool := named(spans, "execute_tool run_migrations")
	if len(tool) != 1 || !tool[0].StatusError || tool[0].StatusMessage == "" {
		t.Fatalf("run_migrations spans %+v, want one failed", tool)
	}
	visit := named(spans, "invoke_agent db_agent")[0]
	if !visit.StatusError || !slices.ContainsFunc(visit.Events, func(e otlptest.Event) bool {
		return e.Name == "exception" && e.Attrs["exception.message"] != ""
	}) {
		t.Errorf("db_agent's visit: error=%v events %+v, want an error status and an exception event", visit.StatusError, visit.Events)
	}
}

// TestUnreachableCollector: a collector that is down neither fails nor holds up a run, and the
// failure is logged once.
func TestUnreachableCollector(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now: connections are refused
	supervisor, err := agents.Lookup("supervisor")
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	exp, err := otlp.New(otlp.Config{Endpoint: "http://" + addr, Logger: slog.New(slog.NewTextHandler(&logs, nil)), BatchTimeout: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if rec := runFlow(t, exp, supervisor); rec.Run().Status != traces.StatusCompleted {
			t.Fatalf("run %s with the collector down, want completed", rec.Run().Status)
		}
	}
	shutdown(t, exp)
	if n := strings.Count(logs.String(), "OpenTelemetry export failed"); n != 1 {
		t.Errorf("the failure was logged %d times, want once:\n%s", n, logs.String())
	}
}

func TestResumedRunJoinsItsTrace(t *testing.T) {
	rcv := otlptest.NewReceiver(t)
	exp, err := otlp.New(otlp.Config{Endpoint: rcv.URL})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 3, 14, 9, 30, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	rec := traces.NewRecording(traces.Run{ID: "r-resume", Flow: "app", StartedAt: t0}, []traces.Agent{{Name: "writer", Kind: traces.AgentChatModel}})
	exp.Watch(rec)
	rec.Emit(traces.Event{Time: at(0), Kind: traces.KindRunStarted, Run: &traces.RunMark{Status: traces.StatusRunning}})
	rec.Emit(traces.Event{Time: at(1), Kind: traces.KindAgentStarted, Agent: "writer", RunPath: []string{"writer"}, AgentRun: &traces.AgentRun{Via: "run"}})
	rec.Emit(traces.Event{Time: at(2), Kind: traces.KindInterrupted, Agent: "writer", RunPath: []string{"writer"}, Interrupt: &traces.Interrupt{ID: "int-1", Address: "writer;tool:book"}})
	rec.Emit(traces.Event{Time: at(3), Kind: traces.KindAgentFinished, Agent: "writer", RunPath: []string{"writer"}, AgentRun: &traces.AgentRun{Interrupted: true}})
	rec.FinishAt(at(4), traces.StatusInterrupted, "")
	if err := rec.Resume(); err != nil {
		t.Fatal(err)
	}
	exp.Watch(rec) // as the server does when an app resumes the run
	rec.Emit(traces.Event{Time: at(100), Kind: traces.KindResumed, Agent: "writer", RunPath: []string{"writer"}, Interrupt: &traces.Interrupt{ID: "int-1"}})
	rec.Emit(traces.Event{Time: at(101), Kind: traces.KindAgentStarted, Agent: "writer", RunPath: []string{"writer"}, AgentRun: &traces.AgentRun{Via: "run", Resumed: true}})
	rec.Emit(traces.Event{Time: at(102), Kind: traces.KindAgentFinished, Agent: "writer", RunPath: []string{"writer"}, AgentRun: &traces.AgentRun{}})
	rec.FinishAt(at(103), traces.StatusCompleted, "")
	shutdown(t, exp)

	spans := rcv.Spans()
	run := root(t, spans)
	visits := named(spans, "invoke_agent writer")[1:] // the first is the run's
	if run.Attrs["baton.run.status"] != "interrupted" || !run.End.Equal(at(4)) || visits[0].Parent != run.ID ||
		!slices.ContainsFunc(visits[0].Events, func(e otlptest.Event) bool {
			return e.Name == "interrupted" && e.Attrs["baton.interrupt.id"] == "int-1"
		}) {
		t.Errorf("first part: %+v", run)
	}
	var resumed []otlptest.Span
	for _, s := range spans {
		if s.Attrs["baton.run.resumed"] == true {
			resumed = append(resumed, s)
		}
	}
	if len(resumed) != 1 || resumed[0].Parent != run.ID || resumed[0].TraceID != run.TraceID ||
		!resumed[0].Start.Equal(at(100)) || resumed[0].Attrs["baton.run.status"] != "completed" {
		t.Fatalf("resumed part %+v, want one span under the run's, from the resume to the end", resumed)
	}
	if visits := named(spans, "invoke_agent writer"); len(visits) != 4 || visits[3].Parent != resumed[0].ID || visits[3].Attrs["baton.agent.resumed"] != true {
		t.Errorf("writer's visits %+v, want the resumed one under the resumed part", visits)
	}
}

// TestSlowWatcherMissesNothing: a run recorded much faster than the watcher turns its events into
// spans reaches the collector whole: the watcher reads the recording at its own pace.
func TestSlowWatcherMissesNothing(t *testing.T) {
	rcv := otlptest.NewReceiver(t)
	exp, err := otlp.New(otlp.Config{Endpoint: rcv.URL})
	if err != nil {
		t.Fatal(err)
	}
	const calls = 300
	rec := traces.NewRecording(traces.Run{ID: "r-slow", Flow: "app"}, []traces.Agent{{Name: "bot", Kind: traces.AgentChatModel}})
	exp.Watch(rec)
	path := []string{"bot"}
	rec.Emit(traces.Event{Kind: traces.KindRunStarted, Run: &traces.RunMark{Status: traces.StatusRunning}})
	rec.Emit(traces.Event{Kind: traces.KindAgentStarted, Agent: "bot", RunPath: path, AgentRun: &traces.AgentRun{Via: "run"}})
	for i := range calls {
		id := fmt.Sprint("call_", i)
		rec.Emit(traces.Event{Kind: traces.KindToolStarted, Agent: "bot", RunPath: path, Tool: &traces.ToolCall{Name: "tick", CallID: id}})
		rec.Emit(traces.Event{Kind: traces.KindToolFinished, Agent: "bot", RunPath: path, Tool: &traces.ToolCall{Name: "tick", CallID: id}})
	}
	rec.Emit(traces.Event{Kind: traces.KindAgentFinished, Agent: "bot", RunPath: path, AgentRun: &traces.AgentRun{}})
	rec.Finish(traces.StatusCompleted, "")
	shutdown(t, exp)
	spans := rcv.Spans()
	visits := named(spans, "invoke_agent bot") // the run's, then the visit
	if len(visits) != 2 {
		t.Fatalf("%d invoke_agent spans, want the run's and the visit", len(visits))
	}
	visit := visits[1]
	ticks := 0
	for _, s := range named(spans, "execute_tool tick") {
		if s.Parent == visit.ID && s.StatusMessage == "" {
			ticks++
		}
	}
	if ticks != calls {
		t.Errorf("%d tool spans under the visit, want %d", ticks, calls)
	}
}

func TestEndpointMustBeAURL(t *testing.T) {
	for _, bad := range []string{"", "localhost:4318", "grpc://collector:4317", "http://"} {
		_, err := otlp.New(otlp.Config{Endpoint: bad})
		if traces.ErrorCode(err) != traces.CodeInvalid || !strings.Contains(traces.ErrorMessage(err), "http://localhost:4318") {
			t.Errorf("endpoint %q: %v, want an invalid-input error that shows a good one", bad, err)
		}
	}
}

func TestResourceFromTheEnvironment(t *testing.T) {
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "team")
	if _, err := otlp.New(otlp.Config{Endpoint: "http://localhost:4318"}); traces.ErrorCode(err) != traces.CodeInvalid ||
		!strings.Contains(traces.ErrorMessage(err), "OTEL_RESOURCE_ATTRIBUTES") {
		t.Errorf("a malformed OTEL_RESOURCE_ATTRIBUTES: %v, want an error naming it", err)
	}

	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment=ci")
	t.Setenv("OTEL_SERVICE_NAME", "baton-ci")
	rcv := otlptest.NewReceiver(t)
	exp, err := otlp.New(otlp.Config{Endpoint: rcv.URL})
	if err != nil {
		t.Fatal(err)
	}
	flow, _ := agents.Lookup("transfer")
	runFlow(t, exp, flow)
	shutdown(t, exp)
	if res := root(t, rcv.Spans()).Resource; res["service.name"] != "baton-ci" || res["deployment.environment"] != "ci" {
		t.Errorf("resource %v, want the environment's service name and attributes", res)
	}
}

func sortByStart(spans []otlptest.Span) []otlptest.Span {
	out := slices.Clone(spans)
	slices.SortStableFunc(out, func(a, b otlptest.Span) int { return a.Start.Compare(b.Start) })
	return out
}

func countKind(tr traces.Trace, k traces.Kind) int {
	n := 0
	for _, e := range tr.Events {
		if e.Kind == k {
			n++
		}
	}
	return n
}

// contentKey reports whether an attribute holds what the run's messages, tools or session said.
func contentKey(k string) bool {
	switch k {
	case "gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions",
		"gen_ai.tool.call.arguments", "gen_ai.tool.call.result",
		"baton.session.value", "baton.interrupt.info", "baton.exit.final_result":
		return true
	}
	return false
}

// TestEveryFlowIsOneWellFormedTrace: for each flow of the catalogue, and for runs that fail in
// parallel tool calls (one of which never ends) or before any agent starts, one root, every parent
// sent, one invoke_agent span per agent visit, one chat span per model call and one execute_tool
// span per tool call or transfer without one, each inside its parent's time.
func TestEveryFlowIsOneWellFormedTrace(t *testing.T) {
	unbuildable := agents.Flow{Name: "unbuildable", Agents: []traces.Agent{{Name: "ghost", Kind: traces.AgentChatModel}},
		Build: func(context.Context, agents.ModelFor) (adk.Agent, error) {
			return nil, errors.New("no model configured")
		}}
	for _, flow := range append(agents.Catalogue(), agentstest.FailingTool(), unbuildable) {
		t.Run(flow.Name, func(t *testing.T) {
			spans, tr := exportedFlow(t, flow, false)
			ix := index(spans)
			run := root(t, spans)
			count := map[string]int{}
			for _, s := range spans {
				if s.ID == run.ID {
					continue
				}
				p, ok := ix[s.Parent]
				if !ok || s.TraceID != run.TraceID {
					t.Fatalf("span %s: parent %s not sent, or another trace", s.Name, s.Parent)
				}
				if s.Start.Before(p.Start) || s.End.After(p.End) || s.End.Before(s.Start) {
					t.Errorf("span %s %s..%s is not inside its parent %s %s..%s", s.Name, s.Start, s.End, p.Name, p.Start, p.End)
				}
				count[s.Attrs["gen_ai.operation.name"].(string)]++
			}
			toolCalls := map[string]bool{}
			for _, e := range tr.Events {
				if e.Kind == traces.KindToolStarted {
					toolCalls[e.Tool.CallID] = true
				}
			}
			want := map[string]int{
				"invoke_agent": countKind(tr, traces.KindAgentStarted),
				"chat":         countKind(tr, traces.KindModelStarted),
				"execute_tool": countKind(tr, traces.KindToolStarted),
			}
			for _, e := range tr.Events {
				if e.Kind == traces.KindTransfer && !toolCalls[e.Transfer.CallID] {
					want["execute_tool"]++
				}
			}
			for op, n := range want {
				if count[op] != n {
					t.Errorf("%d %s spans, want %d", count[op], op, n)
				}
			}
		})
	}
}

// TestLongConversationContentIsBounded: a run of 1,000 model calls, each fed the whole history
// before it (with its tool results, about 50 KB by the end), exported with content: each chat
// span carries the latest messages within MaxInputContent and counts the ones it left out, so
// that the export does not carry the history once per call.
func TestLongConversationContentIsBounded(t *testing.T) {
	spans, tr := exportedFlow(t, agentstest.LongTurns(999, 1), true)
	chats := named(spans, "chat scripted")
	if len(chats) != 1000 {
		t.Fatalf("%d chat spans, want 1000", len(chats))
	}
	var starts []traces.Event
	for _, e := range tr.Events {
		if e.Kind == traces.KindModelStarted {
			starts = append(starts, e)
		}
	}
	cut := 0
	for i, c := range chats {
		in, _ := c.Attrs["gen_ai.input.messages"].(string)
		sys, _ := c.Attrs["gen_ai.system_instructions"].(string)
		if len(in)+len(sys) > 4*otlp.MaxInputContent {
			t.Fatalf("chat span %d carries %d bytes of input", i, len(in)+len(sys))
		}
		var msgs []json.RawMessage
		if err := json.Unmarshal([]byte(in), &msgs); err != nil {
			t.Fatalf("chat span %d: gen_ai.input.messages: %v", i, err)
		}
		omitted, _ := c.Attrs["baton.input.messages_omitted"].(int64)
		if omitted > 0 {
			cut++
		}
		if sys != "" {
			omitted++ // the instruction
		}
		if got, want := int(omitted)+len(msgs), len(starts[i].Model.Input); got != want {
			t.Fatalf("chat span %d: %d messages and %d omitted, want %d in all", i, len(msgs), omitted, want)
		}
	}
	if cut == 0 {
		t.Fatal("no span left messages out: the conversation is not past MaxInputContent")
	}
}
