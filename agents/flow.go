// Package agents is Baton's catalogue of demo flows (one file per flow): real eino ADK
// multi-agent setups, driven by the scripted chat model that stands in for an LLM, and run under
// the recorder that package attach records apps with (RunFlow). It also holds the chat models a
// run may use (ParseModel: the scripted model, an OpenAI-compatible one, or a replay of a trace's
// recorded replies) and the pace and typing hooks the server drives runs with. A program's own
// flows (package flows) become its Flow in one place, Registered.
//
// It is Baton's own, not a supported API: its exported names serve the baton command and package
// server, and may change in any release. Apps record their own agents with package attach.
package agents

import (
	"context"
	"slices"
	"strings"

	"github.com/cloudwego/eino/adk"

	"github.com/baton-dev/baton/flows"
	"github.com/baton-dev/baton/traces"
)

// Flow is one entry of the catalogue: a multi-agent setup Baton can run, with the scripts that let
// the scripted model drive it without an LLM.
type Flow struct {
	Name  string
	Title string // one line, for lists
	// Group is what the flow shows, one of Groups; Plain says it in plain words, for a newcomer,
	// before Description names eino's API.
	Group        string
	Plain        string
	Description  string // which eino mechanism the flow shows, in a sentence or two
	DefaultInput string
	// InputNote tells, next to the input box, how far the scripted answers follow an edited
	// input; empty when they follow it.
	InputNote string
	// Agents is the agent tree, root first; the recorder adds any agent it meets that is not here.
	Agents []traces.Agent
	// Scripts holds the scripted model's replies, per agent name.
	Scripts map[string]Script
	// NoScript says that the flow has no scripts (a registered flow without flows.Flow.Script):
	// the scripted model cannot run it (Model.CanRun).
	NoScript bool
	// Build returns the flow's root agent; every chat model agent gets its model from models.
	Build func(ctx context.Context, models ModelFor) (adk.Agent, error)
	// RunOptions are passed to every run of the flow, for mechanisms eino sets per run (such as
	// adk.WithSkipTransferMessages); nil for most flows.
	RunOptions []adk.AgentRunOption
	// OwnHistory says how the flow feeds a transfer's target other than eino's default rewriting
	// of the shared history (adk.WithHistoryRewriter, adk.WithSkipTransferMessages), for a person;
	// "" for the default. A run held before a transfer says so rather than predict the feed.
	OwnHistory string
}

// ModelFor returns the chat model the named agent should use: flows.Models, which a registered
// flow's Build takes too.
type ModelFor = flows.Models

// fixedAnswers is the InputNote of a flow whose scripts answer the same whatever the input.
const fixedAnswers = "Scripted answers: written for the default input, they stay the same whatever you type."

// The groups of the catalogue, by what their flows show, in the order the index lists them.
const (
	GroupTransfer      = "Handoff by transfer"
	GroupAgentTool     = "Handoff by AgentTool"
	GroupDeterministic = "Deterministic handoff"
	GroupWorkflow      = "Workflows"
	GroupHuman         = "Human in the loop"
	GroupFailure       = "Failure"
)

// Groups are the catalogue's groups in order, each with what its flows have in common, in
// plain words.
var Groups = []struct{ Name, Plain string }{
	{GroupTransfer, "One agent hands control to another, which carries on in the same conversation."},
	{GroupAgentTool, "One agent calls another as a tool and gets its answer back; control stays with the caller."},
	{GroupDeterministic, "Agents hand on in an order fixed in code, no model choosing."},
	{GroupWorkflow, "Sequential, parallel and loop agents run their sub-agents in a set pattern."},
	{GroupHuman, "A run pauses for a person's decision, then resumes."},
	{GroupFailure, "Runs that fail, and how the page shows why."},
}

// StartHere is the flow a newcomer should run first: four handoffs, each explained.
const StartHere = "supervisor"

var catalogue []Flow

// register adds a flow to the catalogue; each flow file calls it from init.
func register(f Flow) {
	catalogue = append(catalogue, f)
	slices.SortFunc(catalogue, func(a, b Flow) int { return strings.Compare(a.Name, b.Name) })
}

// Catalogue returns the built-in flows sorted by name.
func Catalogue() []Flow { return slices.Clone(catalogue) }

// Lookup returns the built-in flow named name, or an error with traces.CodeNotFound that lists
// the known flows.
func Lookup(name string) (Flow, error) { return Find(catalogue, name) }

// Find returns the flow of fs named name, or an error with traces.CodeNotFound that lists fs's.
func Find(fs []Flow, name string) (Flow, error) {
	for _, f := range fs {
		if f.Name == name {
			return f, nil
		}
	}
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = f.Name
	}
	return Flow{}, traces.Errorf(traces.CodeNotFound, "unknown flow %q; known flows: %s", name, strings.Join(names, ", "))
}
