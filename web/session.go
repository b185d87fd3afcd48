package web

import (
	"maps"
	"slices"

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
	// From is the agent the message came from (Source.Agent); "" for instructions and input.
	From       string
	FromColour int    // -1 when From is "" or not an agent of the trace
	How        string // "said", "called a tool", "tool result", "own turn", "instruction", "input"...
	Origin     Origin
	Source     int64 // the event the message came from, 0 when none holds it
	// Injected is eino's transfer instruction, cut from the end of a system message's Content.
	Injected string
}

// NewSession returns the session panel of tr after its last event.
func NewSession(tr traces.Trace) Session {
	return newSession(analyse(tr))
}

func newSession(a *analysis) Session {
	var s Session
	values := make(map[string]int)
	starts := make(map[string]*History)
	last := make(map[string]int) // each agent's newest agent.started
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
			last[e.Agent] = i
		}
	}
	// Only each agent's newest start is shown: classify those alone, in trace order, on one index.
	newest := slices.Sorted(maps.Values(last))
	index := newSourceIndex()
	for _, i := range newest {
		e := &a.tr.Events[i]
		starts[e.Agent].Messages = a.fed(index, i, e.Agent, e.AgentRun.Input)
	}
	for _, m := range a.roster.list {
		if h := starts[m.Name]; h != nil {
			s.Histories = append(s.Histories, *h)
		}
	}
	return s
}

// fed annotates the messages agent received at event index i with their origins (see Sources),
// on index, which calls in trace order may share.
func (a *analysis) fed(index *sourceIndex, i int, agent string, msgs []traces.Message) []FedMessage {
	out := make([]FedMessage, len(msgs))
	for k, src := range index.sources(a.tr, i, agent, msgs) {
		m := msgs[k]
		f := FedMessage{Role: m.Role, Content: m.Content, ToolCalls: m.ToolCalls, ToolName: m.ToolName, ToolCallID: m.ToolCallID,
			From: src.Agent, How: src.How, Origin: src.Origin, Source: src.Seq, FromColour: -1}
		if src.Injected != "" {
			f.Content, f.Injected = src.Instruction, src.Injected
		}
		if f.From != "" {
			f.FromColour = a.roster.colour(f.From)
		}
		out[k] = f
	}
	return out
}
