package agents_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/schema"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/internal/agentstest"
	"github.com/baton-dev/baton/internal/record"
	"github.com/baton-dev/baton/traces"
)

var uuidPattern = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// recordRun runs flow's default input at zero pace and returns the recorded trace.
func recordRun(t *testing.T, flow agents.Flow, streaming bool) traces.Trace {
	t.Helper()
	return recordInput(t, flow, flow.DefaultInput, streaming)
}

// recordInput runs flow on input at zero pace and returns the recorded trace. A run that
// interrupts is resumed with an approval, as often as it interrupts.
func recordInput(t *testing.T, flow agents.Flow, input string, streaming bool) traces.Trace {
	t.Helper()
	return recordDecided(t, flow, input, streaming, agents.Decision{Approve: true, Comment: "ok"})
}

// recordDecided is recordInput with d as the answer to every interrupt.
func recordDecided(t *testing.T, flow agents.Flow, input string, streaming bool, d agents.Decision) traces.Trace {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rec := traces.NewRecording(traces.Run{ID: "r-test", Flow: flow.Name, Input: input, Model: "scripted"}, flow.Agents)
	var paused *agents.Pause // Paused is called before RunFlow and Resume return, in their goroutine
	opts := agents.Options{Streaming: streaming, Paused: func(p *agents.Pause) { paused = p }}
	agents.RunFlow(ctx, flow, input, opts, rec)
	for i := 0; paused != nil; i++ {
		if i == 3 {
			t.Fatalf("%s interrupted %d times", flow.Name, i)
		}
		if err := rec.Resume(); err != nil {
			t.Fatal(err)
		}
		p := paused
		paused = nil
		p.Resume(ctx, d, rec)
	}
	return rec.Snapshot()
}

// traceStory reduces a trace to what the recorder decides: each event's kind, agent and run path, and
// the handoff facts (transfers, AgentTool calls, tool calls, session keys), without times, texts
// or durations.
func traceStory(tr traces.Trace) string {
	var b strings.Builder
	for i, e := range branchOrder(tr) {
		fmt.Fprintf(&b, "%3d %-17s %-15s [%s]", i+1, e.Kind, e.Agent, strings.Join(e.RunPath, ">"))
		switch {
		case e.Transfer != nil:
			fmt.Fprintf(&b, " %s -> %s (%s)", e.Transfer.From, e.Transfer.To, e.Transfer.Mode)
			if e.Transfer.Outcome != "" {
				fmt.Fprintf(&b, " %s", e.Transfer.Outcome)
			}
		case e.AgentTool != nil:
			fmt.Fprintf(&b, " %s -> %s %s", e.AgentTool.Caller, e.AgentTool.Callee, e.AgentTool.CallID)
			if e.AgentTool.InnerEvents != "" {
				fmt.Fprintf(&b, " inner events: %s", e.AgentTool.InnerEvents)
			}
		case e.Tool != nil:
			fmt.Fprintf(&b, " %s %s", e.Tool.Name, e.Tool.CallID)
		case e.Session != nil:
			fmt.Fprintf(&b, " %s set by %s", e.Session.Key, e.Session.SetBy)
		case e.AgentRun != nil && e.AgentRun.Via != "":
			fmt.Fprintf(&b, " via %s", e.AgentRun.Via)
		case e.Message != nil:
			fmt.Fprintf(&b, " %s", e.Message.Role)
		case e.Run != nil:
			fmt.Fprintf(&b, " %s", e.Run.Status)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// branchOrder returns tr's events with those of parallel branches, which interleave as the
// branches run, put branch after branch (in the tree's order), so that a story does not depend on
// timing. Each branch's own events keep their order.
func branchOrder(tr traces.Trace) []traces.Event {
	rank := map[string]int{}
	parallel := map[string]bool{}
	for i, a := range tr.Agents {
		rank[a.Name] = i
		parallel[a.Name] = a.Kind == traces.AgentParallel
	}
	branch := func(e traces.Event) int {
		for i, name := range e.RunPath[:max(len(e.RunPath)-1, 0)] {
			if parallel[name] {
				return rank[e.RunPath[i+1]]
			}
		}
		return -1
	}
	events := slices.Clone(tr.Events)
	for start := 0; start < len(events); start++ {
		end := start
		for end < len(events) && branch(events[end]) >= 0 {
			end++
		}
		slices.SortStableFunc(events[start:end], func(a, b traces.Event) int { return branch(a) - branch(b) })
		start = end
	}
	return events
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (run with -update to create it): %v", err)
	}
	if string(got) != string(want) {
		t.Errorf("%s differs from the golden file; got:\n%s", name, got)
	}
}

func TestRecorderStory(t *testing.T) {
	for _, flow := range agents.Catalogue() {
		t.Run(flow.Name, func(t *testing.T) {
			tr := recordRun(t, flow, false)
			golden(t, flow.Name+".story", []byte(traceStory(tr)))
			checkTrace(t, tr, wantStatus(flow.Name))
			// Streaming changes how replies travel, not what happened: same story, every time.
			for i := range 3 {
				if got, want := traceStory(recordRun(t, flow, true)), traceStory(tr); got != want {
					t.Fatalf("streaming run %d tells another story:\n%s\nwant:\n%s", i, got, want)
				}
			}
		})
	}
}

// failingFlows are the catalogue flows whose default input makes the run fail, on purpose.
var failingFlows = map[string]bool{"transfer-unknown": true, "failing": true}

// wantStatus is how a run of the named catalogue flow's default input ends.
func wantStatus(flow string) traces.Status {
	if failingFlows[flow] {
		return traces.StatusFailed
	}
	return traces.StatusCompleted
}

// checkTrace asserts what every recorded trace must satisfy, and that the run ended with status.
func checkTrace(t *testing.T, tr traces.Trace, status traces.Status) {
	t.Helper()
	if err := traces.Validate(tr); err != nil {
		t.Fatalf("invalid trace: %v", err)
	}
	if tr.Run.Status != status {
		t.Fatalf("run %s (%s), want %s", tr.Run.Status, tr.Run.Error, status)
	}
	models, resumed := 0, false
	for _, e := range tr.Events {
		switch e.Kind {
		case traces.KindResumed:
			resumed = true // eino re-enters agents with what resumes them, not with a history
		case traces.KindModelStarted:
			models++
			if len(e.Model.Input) == 0 {
				t.Errorf("event %d: model.started without input messages", e.Seq)
			}
		case traces.KindModelFinished:
			if e.Model.Usage == nil || e.Model.Usage.TotalTokens <= 0 || e.Model.Usage.PromptTokens <= 0 {
				t.Errorf("event %d: model.finished without token usage: %+v", e.Seq, e.Model.Usage)
			}
			if e.Model.Output == nil {
				t.Errorf("event %d: model.finished without output", e.Seq)
			}
		case traces.KindAgentStarted:
			if len(e.AgentRun.Input) == 0 && !resumed {
				t.Errorf("event %d: agent.started without the history the agent was fed", e.Seq)
			}
		}
	}
	if models == 0 {
		t.Error("no model calls recorded")
	}
}

// TestRecorderHistory checks what crossed each boundary: a transfer target is fed the others'
// messages rewritten as "For context:", an AgentTool callee only its request.
func TestRecorderHistory(t *testing.T) {
	sup, _ := agents.Lookup("supervisor")
	tr := recordRun(t, sup, false)
	math := firstStart(t, tr, "math_agent")
	if !hasContent(math.AgentRun.Input, "For context: [research_agent]") {
		t.Errorf("math_agent was not fed research_agent's work as context: %+v", math.AgentRun.Input)
	}

	at, _ := agents.Lookup("agenttool")
	tr = recordRun(t, at, false)
	code := firstStart(t, tr, "code_agent")
	var enter *traces.AgentToolCall
	for _, e := range tr.Events {
		if e.Kind == traces.KindAgentToolEnter && e.AgentTool.Callee == "code_agent" {
			enter = e.AgentTool
		}
	}
	if enter == nil || enter.Caller != "project_manager" || enter.Request == "" {
		t.Fatalf("no agenttool.entered for code_agent from project_manager: %+v", enter)
	}
	if hasContent(code.AgentRun.Input, "For context:") || !hasContent(code.AgentRun.Input, enter.Request) {
		t.Errorf("code_agent's history is not isolated to its request %q: %+v", enter.Request, code.AgentRun.Input)
	}
	var notes *traces.SessionSet
	for _, e := range tr.Events {
		if e.Kind == traces.KindSessionSet && e.Session.Key == "research_notes" {
			notes = e.Session
		}
	}
	if notes == nil || notes.SetBy != "research_agent" {
		t.Fatalf("research_notes not recorded as set by research_agent: %+v", notes)
	}
	var value string
	if err := json.Unmarshal(notes.Value, &value); err != nil || value == "" {
		t.Errorf("research_notes value %s is not the research text", notes.Value)
	}
}

func firstStart(t *testing.T, tr traces.Trace, agent string) traces.Event {
	t.Helper()
	for _, e := range tr.Events {
		if e.Kind == traces.KindAgentStarted && e.Agent == agent {
			return e
		}
	}
	t.Fatalf("%s never started", agent)
	return traces.Event{}
}

func hasContent(ms []traces.Message, s string) bool {
	for _, m := range ms {
		if strings.Contains(m.Content, s) {
			return true
		}
	}
	return false
}

// TestRecorderTraceGolden pins the whole trace of the supervisor flow in the file format, with
// times and durations zeroed: what a downloaded trace looks like.
func TestRecorderTraceGolden(t *testing.T) {
	sup, _ := agents.Lookup("supervisor")
	tr := recordRun(t, sup, false)
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tr.Run.StartedAt, tr.Run.EndedAt = at, &at
	for i := range tr.Events {
		e := &tr.Events[i]
		e.Time = at
		if e.Model != nil {
			e.Model.DurationMS = 0
		}
		if e.Tool != nil {
			e.Tool.DurationMS = 0
		}
	}
	data, err := traces.Marshal(tr)
	if err != nil {
		t.Fatal(err)
	}
	// eino gives each deterministic transfer a random call id.
	data = uuidPattern.ReplaceAll(data, []byte("00000000-0000-0000-0000-000000000000"))
	golden(t, "supervisor.trace.json", data)
}

func TestRecorderFailures(t *testing.T) {
	t.Run("tool error and panic", func(t *testing.T) {
		for _, streaming := range []bool{false, true} {
			tr := recordRun(t, agentstest.FailingTool(), streaming)
			if err := traces.Validate(tr); err != nil {
				t.Fatal(err)
			}
			if tr.Run.Status != traces.StatusFailed || !strings.Contains(tr.Run.Error, agentstest.ErrFlaky.Error()) {
				t.Fatalf("run ended %s (%q), want failed with %q", tr.Run.Status, tr.Run.Error, agentstest.ErrFlaky)
			}
			errs, unfinished := 0, map[string]bool{}
			for _, e := range tr.Events {
				switch e.Kind {
				case traces.KindError:
					errs++
					if e.Agent == "" {
						t.Errorf("event %d: error not attributed to an agent", e.Seq)
					}
				case traces.KindToolStarted:
					unfinished[e.Tool.CallID] = true
				case traces.KindToolFinished:
					delete(unfinished, e.Tool.CallID)
				}
			}
			if errs == 0 {
				t.Error("no error event")
			}
			if len(unfinished) > 0 {
				t.Errorf("tool calls never finished: %v", unfinished)
			}
		}
	})
	t.Run("transfer to an unknown agent", func(t *testing.T) {
		tr := recordRun(t, strayTransferFlow(), false)
		var failed *traces.Event
		for i, e := range tr.Events {
			if e.Kind == traces.KindError {
				failed = &tr.Events[i]
			}
		}
		if tr.Run.Status != traces.StatusFailed || failed == nil {
			t.Fatalf("run ended %s without an error event", tr.Run.Status)
		}
		// eino reports the failure with no agent: the recorder blames the agent that transferred.
		if failed.Agent != "router" || !strings.Contains(failed.Error.Message, "ghost") {
			t.Errorf("error event %+v, want it attributed to router and naming ghost", failed)
		}
	})
}

// strayTransferFlow's router transfers to "ghost", an agent that does not exist.
func strayTransferFlow() agents.Flow {
	f := agents.Flow{
		Name:         "stray",
		DefaultInput: "hello",
		Agents: []traces.Agent{{Name: "router", Kind: traces.AgentChatModel},
			{Name: "helper", Kind: traces.AgentChatModel, Parent: "router", Relation: traces.RelationSubAgent}},
		Scripts: map[string]agents.Script{
			"router": agents.NewScript(agents.Do(agents.Transfer("ghost"))),
			"helper": agents.NewScript(agents.Say("hi")),
		},
	}
	f.Build = func(ctx context.Context, models agents.ModelFor) (adk.Agent, error) {
		router, err := agents.NewChatAgent(ctx, models, adk.ChatModelAgentConfig{Name: "router", Description: "routes", Instruction: "Route."})
		if err != nil {
			return nil, err
		}
		helper, err := agents.NewChatAgent(ctx, models, adk.ChatModelAgentConfig{Name: "helper", Description: "helps", Instruction: "Help."})
		if err != nil {
			return nil, err
		}
		return adk.SetSubAgents(ctx, router, []adk.Agent{helper})
	}
	return f
}

// TestRecorderHandsEventsOn checks the recorder's promise to its caller: the iterator yields the
// events an unrecorded run yields, streams included, in the same order.
func TestRecorderHandsEventsOn(t *testing.T) {
	flow, _ := agents.Lookup("supervisor")
	for _, streaming := range []bool{false, true} {
		plain := drain(t, flow, streaming, nil)
		rec := traces.NewRecording(traces.Run{ID: "r-test"}, flow.Agents)
		recorded := drain(t, flow, streaming, record.NewRecorder(rec, flow.Name, flow.Agents))
		if strings.Join(plain, "\n") != strings.Join(recorded, "\n") {
			t.Errorf("streaming=%v: recorded run yields\n%s\nwant\n%s", streaming, strings.Join(recorded, "\n"), strings.Join(plain, "\n"))
		}
		if n := len(rec.Snapshot().Events); n < len(plain) {
			t.Errorf("streaming=%v: only %d events recorded for %d yielded", streaming, n, len(plain))
		}
	}
}

// drain runs flow through recorder (or plainly when it is nil) and describes each yielded event,
// reading streamed messages to their end as a caller would.
func drain(t *testing.T, flow agents.Flow, streaming bool, recorder *record.Recorder) []string {
	t.Helper()
	ctx := context.Background()
	root, err := flow.Build(ctx, flow.ScriptedModels(nil))
	if err != nil {
		t.Fatal(err)
	}
	runner := adk.NewRunner(ctx, adk.RunnerConfig{Agent: root, EnableStreaming: streaming})
	msgs := []adk.Message{schema.UserMessage(flow.DefaultInput)}
	var events *adk.AsyncIterator[*adk.AgentEvent]
	if recorder == nil {
		events = runner.Run(ctx, msgs)
	} else {
		events = recorder.Run(ctx, runner, msgs)
	}
	var out []string
	for {
		ev, ok := events.Next()
		if !ok {
			return out
		}
		line := ev.AgentName + " " + strings.Join(pathOf(ev), ">")
		if ev.Output != nil && ev.Output.MessageOutput != nil {
			msg, err := ev.Output.MessageOutput.GetMessage()
			if err != nil {
				t.Fatal(err)
			}
			line += fmt.Sprintf(" %s %q", msg.Role, msg.Content)
			for _, tc := range msg.ToolCalls {
				if !uuidPattern.MatchString(tc.ID) {
					line += " " + tc.ID
				}
				line += " " + tc.Function.Name
			}
		}
		if ev.Action != nil && ev.Action.TransferToAgent != nil {
			line += " => " + ev.Action.TransferToAgent.DestAgentName
		}
		out = append(out, line)
	}
}

func pathOf(ev *adk.AgentEvent) []string {
	out := make([]string, len(ev.RunPath))
	for i := range ev.RunPath {
		out[i] = ev.RunPath[i].String()
	}
	return out
}

// TestRecorderWorkflow: inside a sequential agent each step is started by the workflow, not by a
// transfer, and each reply is recorded once although eino's run paths there (seq>planner>writer)
// differ from the callbacks' (seq>writer).
func TestRecorderWorkflow(t *testing.T) {
	f := agents.Flow{Name: "sequential", DefaultInput: "go",
		Agents: []traces.Agent{{Name: "seq", Kind: traces.AgentSequential},
			{Name: "planner", Kind: traces.AgentChatModel, Parent: "seq"}, {Name: "writer", Kind: traces.AgentChatModel, Parent: "seq"}},
		Scripts: map[string]agents.Script{"planner": agents.NewScript(agents.Say("plan")), "writer": agents.NewScript(agents.Say("text"))}}
	f.Build = func(ctx context.Context, models agents.ModelFor) (adk.Agent, error) {
		planner, err := agents.NewChatAgent(ctx, models, adk.ChatModelAgentConfig{Name: "planner", Description: "plans", Instruction: "Plan."})
		if err != nil {
			return nil, err
		}
		writer, err := agents.NewChatAgent(ctx, models, adk.ChatModelAgentConfig{Name: "writer", Description: "writes", Instruction: "Write."})
		if err != nil {
			return nil, err
		}
		return adk.NewSequentialAgent(ctx, &adk.SequentialAgentConfig{Name: "seq", Description: "plan, then write", SubAgents: []adk.Agent{planner, writer}})
	}
	for _, streaming := range []bool{false, true} {
		tr := recordRun(t, f, streaming)
		golden(t, "sequential.story", []byte(traceStory(tr)))
		checkTrace(t, tr, traces.StatusCompleted)
	}
}

// TestRunFlowCanceled: canceling a run while its model works ends it as canceled, not failed,
// though the model call fails with the context's error.
func TestRunFlowCanceled(t *testing.T) {
	flow, err := agents.Lookup("supervisor")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec := traces.NewRecording(traces.Run{ID: "r-cancel", Flow: flow.Name}, flow.Agents)
	sub := rec.Subscribe(0)
	ended := make(chan traces.Status, 1)
	go func() {
		ended <- agents.RunFlow(ctx, flow, flow.DefaultInput, agents.Options{Pace: agents.NewPace(time.Minute)}, rec)
	}()
	waitCtx, stopWaiting := context.WithTimeout(ctx, 10*time.Second)
	defer stopWaiting()
	for started, buf := false, make([]traces.Event, 8); !started; {
		n, err := sub.Read(waitCtx, buf)
		if err != nil {
			t.Fatalf("no model.started before the run's end or 10 s: %v", err)
		}
		for _, ev := range buf[:n] {
			started = started || ev.Kind == traces.KindModelStarted // the model now waits out its pace
		}
	}
	cancel()
	select {
	case status := <-ended:
		if run := rec.Run(); status != traces.StatusCanceled || run.Status != traces.StatusCanceled {
			t.Errorf("RunFlow returned %s, run recorded as %s (%s); want canceled", status, run.Status, run.Error)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the run did not end within 10s of its cancel")
	}
}
