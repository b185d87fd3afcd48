// Package flows lets a program register its own eino ADK flows with Baton, so that Baton runs,
// holds at breakpoints, forks and replays them as it does its built-in ones:
//
//	triage := flows.Flow{
//		Name:         "triage",
//		Description:  "A desk agent hands each request to billing or tech.",
//		DefaultInput: "I was charged twice.",
//		Build: func(ctx context.Context, models flows.Models) (adk.Agent, error) {
//			m, err := models("desk") // the model Baton picked for the run
//			...
//		},
//	}
//
// and serve it, in the app's process with inprocess.Start(ctx, inprocess.Options{Flows:
// []flows.Flow{triage}}), or beside Baton's own flows from a binary of the program's own, which is
// Baton's whole command line (serve, run, fork, diff...) with command.Main(triage).
//
// Baton decides the model of each run and hands Build a Models to ask it for one per agent: the
// scripted model (the Flow's Script), a real OpenAI-compatible one (--model openai:NAME), a replay
// of a recorded run (--model replay:FILE), or a fork's (the recorded replies up to the fork point,
// then a live model). So every chat model agent of the flow must get its model from Models.
//
// Supported API, like packages attach and traces.
package flows

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/model"

	"github.com/baton-dev/baton/traces"
)

// Flow is a multi-agent setup Baton can run: what a person sees of it, and how to build it.
type Flow struct {
	// Name identifies the flow in the page, the API and the command line (run NAME). It must be
	// letters, digits, '-' or '_', and unique among Baton's flows, built-in ones included.
	Name string
	// Description says in a sentence or two, in plain words, what the flow does.
	Description string
	// DefaultInput is the user's request a run takes when it is given none.
	DefaultInput string
	// Build returns the flow's root agent, built anew for each run: every chat model agent gets
	// its model from models, by its name. It must not start the run.
	Build func(ctx context.Context, models Models) (adk.Agent, error)
	// Script is what the scripted model answers, per agent name: its replies in order, one per
	// model call (once they are used up it answers a text saying so). A flow without a Script
	// runs only on a real model or a replay: a run on the scripted model is refused, saying so.
	Script map[string][]Reply
	// Agents optionally declares the flow's agent tree, root first: each agent's name, kind,
	// and but for the root its parent and relation (traces.RelationSubAgent for one of
	// adk.SetSubAgents, traces.RelationAgentTool for one called through adk.NewAgentTool). The
	// page then draws the flow's agents before it runs, and a breakpoint naming an agent it does
	// not declare is refused. Left out, the agents show as the run meets them, and breakpoints
	// may name any. It must pass traces.ValidateAgents.
	Agents []traces.Agent
	// RunOptions are passed to every run of the flow (and its resumes), for what eino sets per
	// run rather than per agent, such as adk.WithSkipTransferMessages(); nil for most flows.
	RunOptions []adk.AgentRunOption
}

// Models returns the chat model the named agent is to use in one run.
type Models func(agent string) (model.ToolCallingChatModel, error)

// Reply is one answer of the scripted model: text, tool calls, or both.
type Reply struct {
	Text      string
	ToolCalls []ToolCall
}

// ToolCall is one call a model asks for: the tool's name and its arguments as JSON text.
type ToolCall struct {
	Name      string
	Arguments string
}

// Call is a tool call of name. args is used verbatim when it is a string (it must then be JSON)
// and marshalled to JSON otherwise, without escaping <, > and & (as a model writes them). Call
// panics if args cannot be marshalled, like regexp.MustCompile: scripts are written by
// programmers.
func Call(name string, args any) ToolCall {
	if s, ok := args.(string); ok {
		return ToolCall{Name: name, Arguments: s}
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(args); err != nil {
		panic(fmt.Sprintf("flows.Call(%q): %v", name, err))
	}
	return ToolCall{Name: name, Arguments: strings.TrimSuffix(b.String(), "\n")}
}

// Transfer is the call of eino's transfer_to_agent tool, which adk.SetSubAgents gives a parent
// and its children: the scripted reply that hands the run to agent.
func Transfer(agent string) ToolCall {
	return Call("transfer_to_agent", map[string]string{"agent_name": agent})
}
