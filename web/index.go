package web

import "github.com/baton-dev/baton/traces"

// FlowInfo is one flow of the catalogue as the index page shows it: the server fills it from
// agents.Flow so that web does not import eino.
type FlowInfo struct {
	Name         string
	Title        string
	Description  string
	DefaultInput string
	// InputNote, when set, says next to the input box that the answers do not (fully) follow it.
	InputNote string
	Agents    []traces.Agent
}

// ModelInfo is a chat model a run may pick, as the index page offers it.
type ModelInfo struct {
	Spec    string // "scripted", "openai:gpt-4o-mini", "replay:t.json"
	Problem string // why runs cannot use it yet (what to set), "" when they can
	Flow    string // the only flow it runs (a replay), "" for any
}

// Index is what the index page draws: the flows one can start, the models they may run on (the
// default first) and the runs of this process, newest first (the caller's order is kept).
type Index struct {
	Flows  []FlowInfo
	Models []ModelInfo
	Runs   []traces.Run
}
