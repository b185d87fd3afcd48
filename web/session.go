package web

import (
	"strings"

	"github.com/baton-dev/baton/traces"
)

// Session is the session panel: the shared values, and what each agent was fed.
type Session struct {
	Values    []SessionValue // in the order the keys were first set
	Histories []History      // in tree order, agents that started at least once
}

// SessionValue is the latest value of one session key.
type SessionValue struct {
	Key    string
	Value  Block // pretty-printed when it is JSON
	SetBy  string
	Colour int   // SetBy's colour, -1 when unknown
	Seq    int64 // the session.set event that set it
	Sets   int   // how many times the key was set
}

// History is what an agent was fed the last time it started: the Input of its newest
// agent.started event (Seq). Starts lists the seqs of all its starts, oldest first.
type History struct {
	Agent    string
	Colour   int
	Seq      int64
	Via      string
	Resumed  bool
	Starts   []int64
	Messages []FedMessage
}

// FedMessage is a message an agent or a model received, with where it came from.
type FedMessage struct {
	Role       string
	Content    string
	ToolCalls  []traces.ToolCallSpec
	ToolName   string
	ToolCallID string
	// From is the agent the message came from: for "For context: [X] ..." messages X, for the
	// receiver's own assistant and tool messages the receiver; "" for instructions and input.
	From       string
	FromColour int    // -1 when From is "" or not an agent of the trace
	How        string // "said", "called a tool", "tool result", "own message", "instruction", "input"
}

// NewSession returns the session panel of tr after its last event.
func NewSession(tr traces.Trace) Session {
	return newSession(analyse(tr))
}

func newSession(a *analysis) Session {
	var s Session
	values := make(map[string]int)
	starts := make(map[string]*History)
	for i := range a.tr.Events {
		e := &a.tr.Events[i]
		switch {
		case e.Kind == traces.KindSessionSet && e.Session != nil:
			setBy := firstNonEmpty(e.Session.SetBy, e.Agent)
			v := SessionValue{
				Key: e.Session.Key, Value: NewBlock("value", string(e.Session.Value)), SetBy: setBy,
				Colour: a.roster.colour(setBy), Seq: e.Seq, Sets: 1,
			}
			if j, ok := values[v.Key]; ok {
				v.Sets += s.Values[j].Sets
				s.Values[j] = v
			} else {
				values[v.Key] = len(s.Values)
				s.Values = append(s.Values, v)
			}
		case e.Kind == traces.KindAgentStarted && e.AgentRun != nil && e.Agent != "":
			h := starts[e.Agent]
			if h == nil {
				h = &History{Agent: e.Agent, Colour: a.roster.colour(e.Agent)}
				starts[e.Agent] = h
			}
			h.Seq, h.Via, h.Resumed = e.Seq, e.AgentRun.Via, e.AgentRun.Resumed
			h.Starts = append(h.Starts, e.Seq)
			h.Messages = a.fed(e.Agent, e.AgentRun.Input)
		}
	}
	for _, m := range a.roster.list {
		if h := starts[m.Name]; h != nil {
			s.Histories = append(s.Histories, *h)
		}
	}
	return s
}

// fed annotates the messages agent received with their origins.
func (a *analysis) fed(agent string, msgs []traces.Message) []FedMessage {
	out := make([]FedMessage, len(msgs))
	for i, m := range msgs {
		f := FedMessage{Role: m.Role, Content: m.Content, ToolCalls: m.ToolCalls, ToolName: m.ToolName, ToolCallID: m.ToolCallID}
		f.From, f.How = origin(agent, m)
		f.FromColour = -1
		if f.From != "" {
			f.FromColour = a.roster.colour(f.From)
		}
		out[i] = f
	}
	return out
}

const forContext = "For context: ["

// origin says where a message fed to agent came from. eino rewrites other agents' messages as
// user messages "For context: [X] said: ...", "For context: [X] called tool: ..." and
// "For context: [X] `t` tool returned result: ..."; the agent's own messages stay as they were.
func origin(agent string, m traces.Message) (from, how string) {
	if rest, ok := strings.CutPrefix(m.Content, forContext); ok {
		if name, tail, ok := strings.Cut(rest, "]"); ok && name != "" {
			tail = strings.TrimSpace(tail)
			switch {
			case strings.HasPrefix(tail, "said"):
				return name, "said"
			case strings.HasPrefix(tail, "called tool"):
				return name, "called a tool"
			case strings.Contains(tail, "tool returned"):
				return name, "tool result"
			}
			return name, "said"
		}
	}
	switch m.Role {
	case "system":
		return "", "instruction"
	case "assistant", "tool":
		return agent, "own message"
	}
	return "", "input"
}
