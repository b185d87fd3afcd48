package web_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/traces"
	"github.com/baton-dev/baton/web"
)

// runFlow runs the catalogue's flow name on input ("" for its default) at zero pace and returns
// its trace.
func runFlow(t testing.TB, name, input string) traces.Trace {
	t.Helper()
	flow, err := agents.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	if input == "" {
		input = flow.DefaultInput
	}
	rec := traces.NewRecording(traces.Run{ID: "r-" + name, Flow: name, Input: input, Model: "scripted"}, flow.Agents)
	if status := agentsRun(flow, rec); status != traces.StatusCompleted {
		t.Fatalf("%s ended %s", name, status)
	}
	return rec.Snapshot()
}

// agentsRun runs flow's default input into rec, without pace, within a minute.
func agentsRun(flow agents.Flow, rec *traces.Recording) traces.Status {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return agents.RunFlow(ctx, flow, rec.Run().Input, agents.Options{}, rec)
}

// modelCalls returns the model.started events of agent, in order.
func modelCalls(tr traces.Trace, agent string) []traces.Event {
	var out []traces.Event
	for _, e := range tr.Events {
		if e.Kind == traces.KindModelStarted && e.Agent == agent {
			out = append(out, e)
		}
	}
	return out
}

func event(t *testing.T, tr traces.Trace, seq int64) traces.Event {
	t.Helper()
	for _, e := range tr.Events {
		if e.Seq == seq {
			return e
		}
	}
	t.Fatalf("no event #%d", seq)
	return traces.Event{}
}

func sources(t *testing.T, tr traces.Trace, seq int64) ([]traces.Message, []web.Source) {
	t.Helper()
	msgs, srcs, err := web.InputSources(tr, seq)
	if err != nil {
		t.Fatal(err)
	}
	if len(srcs) != len(msgs) {
		t.Fatalf("%d sources for %d messages", len(srcs), len(msgs))
	}
	return msgs, srcs
}

// TestOriginsOfATransferredAgent: math_agent, reached by the supervisor's transfers, is fed
// "For context:" messages, each labelled with the agent that said it and linked to that agent's
// own event: its model reply, its tool's result, or the stream message of a deterministic
// transfer (which no callback reports).
func TestOriginsOfATransferredAgent(t *testing.T) {
	tr := runFlow(t, "supervisor", "")
	msgs, srcs := sources(t, tr, modelCalls(tr, "math_agent")[0].Seq)
	seen := map[string]bool{}
	for k, m := range msgs {
		s := srcs[k]
		switch {
		case m.Role == "system":
			if s.Origin != web.OriginInstruction || s.Injected != "" {
				t.Errorf("math_agent's instruction labelled %+v; specialists of supervisor.New get no transfer block", s)
			}
		case m.Content == tr.Run.Input:
			if s.Origin != web.OriginUserInput || event(t, tr, s.Seq).Kind != traces.KindRunStarted {
				t.Errorf("the run's input labelled %+v", s)
			}
		case strings.HasPrefix(m.Content, "For context: ["):
			speaker := strings.TrimPrefix(strings.SplitN(m.Content, "]", 2)[0], "For context: [")
			if s.Origin != web.OriginContext || s.Agent != speaker || s.Seq == 0 {
				t.Fatalf("%q labelled %+v", m.Content, s)
			}
			src := event(t, tr, s.Seq)
			if src.Agent != speaker {
				t.Errorf("%q links #%d of %s", m.Content, s.Seq, src.Agent)
			}
			// The linked event holds what the rewrite quotes.
			var quoted string
			switch src.Kind {
			case traces.KindModelFinished:
				quoted = src.Model.Output.Content
				if len(src.Model.Output.ToolCalls) > 0 {
					quoted += " " + src.Model.Output.ToolCalls[0].Arguments
				}
				seen["model.finished"] = true
			case traces.KindToolFinished:
				quoted = src.Tool.Result
				seen["tool.finished"] = true
			case traces.KindMessage:
				quoted = src.Message.Content
				for _, c := range src.Message.ToolCalls {
					quoted += " " + c.Arguments
				}
				seen["message"] = true
			default:
				t.Fatalf("%q links a %s", m.Content, src.Kind)
			}
			for _, part := range strings.Fields(quoted) {
				if !strings.Contains(m.Content, part) {
					t.Errorf("%q links #%d %s, which says %q", m.Content, s.Seq, src.Kind, quoted)
					break
				}
			}
		default:
			t.Errorf("unexpected message %+v labelled %+v", m, s)
		}
	}
	for _, kind := range []string{"model.finished", "tool.finished", "message"} {
		if !seen[kind] {
			t.Errorf("no rewrite linked to a %s; linked: %v", kind, seen)
		}
	}
}

// TestOriginsOfTheSupervisor: the supervisor's instruction carries eino's transfer block, and
// its own earlier turn links to its own model reply.
func TestOriginsOfTheSupervisor(t *testing.T) {
	tr := runFlow(t, "supervisor", "")
	calls := modelCalls(tr, "supervisor")
	msgs, srcs := sources(t, tr, calls[1].Seq)
	if s := srcs[0]; s.Origin != web.OriginInstruction || !strings.HasPrefix(s.Injected, "Available other agents: ") ||
		strings.Contains(s.Instruction, "Available other agents") || !strings.Contains(msgs[0].Content, s.Instruction) {
		t.Errorf("instruction split as %+v", s)
	}
	first := event(t, tr, calls[0].Seq+1) // the first call's model.finished
	own := 0
	for k, m := range msgs {
		if m.Role != "assistant" {
			continue
		}
		own++
		if s := srcs[k]; s.Origin != web.OriginOwnTurn || s.Agent != "supervisor" || s.Seq != first.Seq || first.Kind != traces.KindModelFinished {
			t.Errorf("own turn labelled %+v, want a link to #%d %s", s, first.Seq, first.Kind)
		}
	}
	if own != 1 {
		t.Errorf("%d own turns, want 1", own)
	}
}

// TestOriginsOfAnAgentToolCallee: math_agent called as a tool is fed its instruction and the
// caller's request, linked to the agenttool.entered; the caller is fed the callee's answer.
func TestOriginsOfAnAgentToolCallee(t *testing.T) {
	tr := runFlow(t, "supervisor-agenttool", "")
	msgs, srcs := sources(t, tr, modelCalls(tr, "math_agent")[0].Seq)
	if len(msgs) != 2 {
		t.Fatalf("math_agent fed %d messages", len(msgs))
	}
	req := event(t, tr, srcs[1].Seq)
	if s := srcs[1]; s.Origin != web.OriginAgentToolRequest || s.Agent != "supervisor" || req.Kind != traces.KindAgentToolEnter ||
		req.AgentTool.Callee != "math_agent" || req.AgentTool.Request != msgs[1].Content {
		t.Errorf("request labelled %+v, linking %+v", s, req)
	}
	calls := modelCalls(tr, "supervisor")
	msgs, srcs = sources(t, tr, calls[len(calls)-1].Seq)
	answers := 0
	for k, m := range msgs {
		if m.Role != "tool" {
			continue
		}
		answers++
		src := event(t, tr, srcs[k].Seq)
		if s := srcs[k]; s.Origin != web.OriginToolResult || s.Agent != m.ToolName || src.Kind != traces.KindToolFinished || src.Tool.CallID != m.ToolCallID {
			t.Errorf("answer of %s labelled %+v, linking %+v", m.ToolName, s, src)
		}
	}
	if answers != 2 {
		t.Errorf("%d AgentTool answers, want 2", answers)
	}
}

// TestEveryReceivedMessageHasASource: in the four mechanisms' runs, every message a model
// received, but instructions, links to the event it came from.
func TestEveryReceivedMessageHasASource(t *testing.T) {
	for _, name := range []string{"supervisor", "supervisor-agenttool", "transfer", "pipeline"} {
		t.Run(name, func(t *testing.T) {
			tr := runFlow(t, name, "")
			for _, e := range tr.Events {
				if e.Kind != traces.KindModelStarted {
					continue
				}
				msgs, srcs := sources(t, tr, e.Seq)
				for k, s := range srcs {
					if s.Origin != web.OriginInstruction && (s.Seq == 0 || s.Seq >= e.Seq) {
						t.Errorf("#%d %s: %q labelled %+v", e.Seq, e.Agent, msgs[k].Content, s)
					}
				}
			}
		})
	}
}

func TestInputSourcesRefusesOtherEvents(t *testing.T) {
	tr := runFlow(t, "supervisor", "")
	if _, _, err := web.InputSources(tr, 1); traces.ErrorCode(err) != traces.CodeInvalid {
		t.Errorf("run.started: %v", err)
	}
	if _, _, err := web.InputSources(tr, 10_000); traces.ErrorCode(err) != traces.CodeNotFound {
		t.Errorf("no such event: %v", err)
	}
}

// TestOriginOfAnEmptyRewrite: eino rewrites another agent's empty message as a bare
// "For context:", which names no agent; it is still a rewrite, linked to the empty message.
func TestOriginOfAnEmptyRewrite(t *testing.T) {
	tr := traces.Trace{Run: traces.Run{ID: "r-empty"}, Events: []traces.Event{
		{Seq: 1, Kind: traces.KindRunStarted, Run: &traces.RunMark{Input: "hi"}},
		{Seq: 2, Kind: traces.KindToolFinished, Agent: "a", Tool: &traces.ToolCall{Name: "t", CallID: "c1"}},
		{Seq: 3, Kind: traces.KindModelStarted, Agent: "b", Model: &traces.ModelCall{ID: "m1", Input: []traces.Message{
			{Role: "user", Content: "hi"}, {Role: "user", Content: "For context:"}}}},
	}}
	_, srcs := sources(t, tr, 3)
	if srcs[0].Origin != web.OriginUserInput || srcs[0].Seq != 1 {
		t.Errorf("input labelled %+v", srcs[0])
	}
	if srcs[1].Origin != web.OriginContext || srcs[1].Seq != 2 {
		t.Errorf("empty rewrite labelled %+v, want for context from #2", srcs[1])
	}
}
