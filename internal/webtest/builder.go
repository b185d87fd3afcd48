// Package webtest builds hand-made traces of Baton's demo flows for tests of the view, the
// templates and the server: deterministic (fixed times and ids) and shaped like what the
// recorder emits for eino ADK v0.9.21.
package webtest

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/baton-dev/baton/traces"
)

// T0 is when every built trace starts.
var T0 = time.Date(2025, 3, 14, 14, 2, 0, 0, time.UTC)

// Builder appends events to a trace, numbering them and spacing them 150 ms apart.
type Builder struct {
	Trace traces.Trace
	model int
	path  []string
}

// New starts a running trace of flow on agents, with its run.started event.
func New(id, flow, input string, agents ...traces.Agent) *Builder {
	b := &Builder{Trace: traces.Trace{
		Run:    traces.Run{ID: id, Flow: flow, Input: input, Model: "scripted", Status: traces.StatusRunning, StartedAt: T0},
		Agents: agents,
	}}
	b.Add(traces.Event{Kind: traces.KindRunStarted, Run: &traces.RunMark{Flow: flow, Input: input, Status: traces.StatusRunning}})
	return b
}

// Add appends e with the next seq and time and returns its seq. An empty RunPath gets the
// builder's current path when e names an agent.
func (b *Builder) Add(e traces.Event) int64 {
	e.Seq = int64(len(b.Trace.Events) + 1)
	e.Time = T0.Add(time.Duration(e.Seq) * 150 * time.Millisecond)
	if e.RunPath == nil && e.Agent != "" {
		e.RunPath = append([]string(nil), b.path...)
	}
	b.Trace.Events = append(b.Trace.Events, e)
	return e.Seq
}

// Start records agent.started for agent, fed input, reached via how ("run", "transfer",
// "agenttool").
func (b *Builder) Start(agent, via string, input ...traces.Message) int64 {
	if len(b.path) == 0 || b.path[len(b.path)-1] != agent {
		b.path = append(b.path, agent)
	}
	return b.Add(traces.Event{Kind: traces.KindAgentStarted, Agent: agent, AgentRun: &traces.AgentRun{Input: input, Via: via}})
}

// Finish records agent.finished for agent.
func (b *Builder) Finish(agent string) int64 {
	return b.Add(traces.Event{Kind: traces.KindAgentFinished, Agent: agent, AgentRun: &traces.AgentRun{}})
}

// Model records a model call of agent (started and finished) answering out, and the assistant
// message it emits.
func (b *Builder) Model(agent string, input []traces.Message, tools []string, out traces.Message, tokens int) {
	b.model++
	id := fmt.Sprintf("m%d", b.model)
	b.Add(traces.Event{Kind: traces.KindModelStarted, Agent: agent, Model: &traces.ModelCall{ID: id, Input: input, Tools: tools}})
	b.Add(traces.Event{Kind: traces.KindModelFinished, Agent: agent, Model: &traces.ModelCall{
		ID: id, Output: &out, DurationMS: 420,
		Usage: &traces.Usage{PromptTokens: tokens * 3 / 4, CompletionTokens: tokens - tokens*3/4, TotalTokens: tokens},
	}})
	b.Add(traces.Event{Kind: traces.KindMessage, Agent: agent, Message: &out})
}

// Tool records a tool call of agent with its result and the tool message.
func (b *Builder) Tool(agent, name, callID, args, result string) {
	b.Add(traces.Event{Kind: traces.KindToolStarted, Agent: agent, Tool: &traces.ToolCall{Name: name, CallID: callID, Arguments: args}})
	b.Add(traces.Event{Kind: traces.KindToolFinished, Agent: agent, Tool: &traces.ToolCall{Name: name, CallID: callID, Result: result, DurationMS: 12}})
	b.Add(traces.Event{Kind: traces.KindMessage, Agent: agent, Message: &traces.Message{Role: "tool", Content: result, ToolCallID: callID, ToolName: name}})
}

// Transfer records a transfer and, for mode llm, the transfer tool's messages before it.
func (b *Builder) Transfer(from, to, mode, callID string) int64 {
	b.Add(traces.Event{Kind: traces.KindMessage, Agent: from, Message: &traces.Message{
		Role: "tool", Content: "successfully transferred to agent [" + to + "]", ToolCallID: callID, ToolName: "transfer_to_agent",
	}})
	return b.Add(traces.Event{Kind: traces.KindTransfer, Agent: from, Transfer: &traces.Transfer{From: from, To: to, Mode: mode, CallID: callID}})
}

// Set records session.set of key to the JSON of value, by agent.
func (b *Builder) Set(agent, key string, value any) int64 {
	raw, err := json.Marshal(value)
	if err != nil {
		panic(err)
	}
	return b.Add(traces.Event{Kind: traces.KindSessionSet, Agent: agent, Session: &traces.SessionSet{Key: key, Value: raw, SetBy: agent}})
}

// Error records an error event; agent may be "" (unattributed).
func (b *Builder) Error(agent, msg string) int64 {
	return b.Add(traces.Event{Kind: traces.KindError, Agent: agent, Error: &traces.ErrorDetail{Message: msg}})
}

// End records run.finished with status and ends the trace's run.
func (b *Builder) End(status traces.Status, errMsg string) traces.Trace {
	b.Add(traces.Event{Kind: traces.KindRunFinished, Run: &traces.RunMark{Status: status, Error: errMsg}})
	end := b.Trace.Events[len(b.Trace.Events)-1].Time
	b.Trace.Run.Status, b.Trace.Run.Error, b.Trace.Run.EndedAt = status, errMsg, &end
	return b.Trace
}

// Msg returns a message.
func Msg(role, content string) traces.Message { return traces.Message{Role: role, Content: content} }

// Call returns an assistant message calling tool name with args.
func Call(id, name, args string) traces.Message {
	return traces.Message{Role: "assistant", ToolCalls: []traces.ToolCallSpec{{ID: id, Name: name, Arguments: args}}}
}

// Said returns the user message eino feeds an agent in place of another agent's answer.
func Said(agent, text string) traces.Message {
	return Msg("user", fmt.Sprintf("For context: [%s] said: %s.", agent, text))
}

// CalledTool returns the user message eino feeds an agent in place of another agent's tool call.
func CalledTool(agent, tool, args string) traces.Message {
	return Msg("user", fmt.Sprintf("For context: [%s] called tool: `%s` with arguments: %s.", agent, tool, args))
}

// ToolReturned returns the user message eino feeds an agent in place of another agent's tool
// result.
func ToolReturned(agent, tool, result string) traces.Message {
	return Msg("user", fmt.Sprintf("For context: [%s] `%s` tool returned result: %s.", agent, tool, result))
}

// ModelUse is a model call of a given model and its prompt and completion tokens.
type ModelUse struct {
	Model              string
	Prompt, Completion int
}

// Handoff is a completed run of runModel (traces.Run.Model) in which "root" makes the calls root
// names, hands off to "helper" by transfer, and helper makes those helper names: turns whose
// calls name their models, for what prices them call by call.
func Handoff(id, runModel string, root, helper []ModelUse) traces.Trace {
	b := New(id, "handoff", "go", traces.Agent{Name: "root", Kind: traces.AgentChatModel},
		traces.Agent{Name: "helper", Kind: traces.AgentChatModel, Parent: "root", Relation: traces.RelationSubAgent})
	b.Trace.Run.Model = runModel
	calls := func(agent string, uses []ModelUse) {
		for _, u := range uses {
			b.model++
			id := fmt.Sprintf("m%d", b.model)
			b.Add(traces.Event{Kind: traces.KindModelStarted, Agent: agent, Model: &traces.ModelCall{ID: id, Name: u.Model}})
			b.Add(traces.Event{Kind: traces.KindModelFinished, Agent: agent, Model: &traces.ModelCall{ID: id, Name: u.Model,
				Usage: &traces.Usage{PromptTokens: u.Prompt, CompletionTokens: u.Completion, TotalTokens: u.Prompt + u.Completion}}})
		}
	}
	b.Start("root", "run", Msg("user", "go"))
	calls("root", root)
	b.Transfer("root", "helper", traces.TransferLLM, "t1")
	b.Finish("root")
	b.Start("helper", "transfer", Msg("user", "go"))
	calls("helper", helper)
	b.Finish("helper")
	return b.End(traces.StatusCompleted, "")
}
