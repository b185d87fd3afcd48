package lint

import (
	"strings"

	"github.com/baton-dev/baton/internal/story"
	"github.com/baton-dev/baton/traces"
)

// Tools eino gives a model for control flow: their calls are handoffs and exits, not work.
const (
	transferTool = "transfer_to_agent"
	exitTool     = "exit"
)

// run is a trace indexed for the rules.
type run struct {
	events []traces.Event
	agents []traces.Agent
	// finished holds each model call's model.finished, by call id.
	finished map[string]*traces.Event
	// request is the user's latest request: the last user message of the root agent's first
	// input, else the run's input.
	request string
}

func newRun(tr traces.Trace) *run {
	r := &run{events: tr.Events, agents: tr.Agents, finished: make(map[string]*traces.Event), request: tr.Run.Input}
	rootSeen := false
	for i := range tr.Events {
		e := &tr.Events[i]
		switch {
		case e.Kind == traces.KindRunStarted && e.Run != nil && r.request == "":
			r.request = e.Run.Input
		case e.Kind == traces.KindAgentStarted && !rootSeen && e.AgentRun != nil:
			rootSeen = true
			for _, m := range e.AgentRun.Input {
				if story.Origin(m) == story.FromUser && m.Content != "" {
					r.request = m.Content
				}
			}
		case e.Kind == traces.KindModelFinished && e.Model != nil:
			r.finished[e.Model.ID] = e
		}
	}
	r.request = strings.TrimSpace(r.request)
	return r
}

// promptTokens is the size of a model call's prompt: what the model reported, else an estimate
// of four characters a token.
func (r *run) promptTokens(started *traces.Event) int {
	if f := r.finished[started.Model.ID]; f != nil && f.Model.Usage != nil && f.Model.Usage.PromptTokens > 0 {
		return f.Model.Usage.PromptTokens
	}
	return estimateTokens(started.Model.Input)
}

func estimateTokens(msgs []traces.Message) int {
	n := 0
	for _, m := range msgs {
		n += len(m.Content)
		for _, c := range m.ToolCalls {
			n += len(c.Name) + len(c.Arguments)
		}
	}
	return (n + 3) / 4
}

// tokensBetween sums the tokens of the model calls that finished from seq from to seq to.
func (r *run) tokensBetween(from, to int64) int {
	n := 0
	for _, e := range r.events {
		if e.Seq >= from && e.Seq <= to && e.Kind == traces.KindModelFinished && e.Model != nil && e.Model.Usage != nil {
			n += e.Model.Usage.TotalTokens
		}
	}
	return n
}

// callsTransfer reports whether a model's reply calls a tool that hands control on.
func callsTransfer(m *traces.Message) bool {
	for _, c := range m.ToolCalls {
		if c.Name == transferTool {
			return true
		}
	}
	return false
}
