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

// Index is what the index page draws: the flows one can start and the runs of this process,
// newest first (the caller's order is kept).
type Index struct {
	Flows []FlowInfo
	Runs  []traces.Run
}
