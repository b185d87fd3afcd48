package web

import (
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
// agent.started event (Seq), or, when that start resumed it with nothing new (Resumed), of the
// start before, whose history it goes on with. Starts lists the seqs of its newest starts (at most
// MaxStarts), oldest first; Started counts them all.
type History struct {
	Agent    string
	Colour   int
	Seq      int64
	Via      string
	Resumed  bool
	Starts   []int64
	Started  int
	Messages []FedMessage
}

// MaxStarts is how many of an agent's starts a History lists: the panel links the newest ones,
// and redrawing it costs the same however often agents started.
const MaxStarts = 6

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
	s := Session{Values: slices.Clone(a.values)}
	for _, m := range a.roster.list {
		if h := a.histories[m.Name]; h != nil {
			s.Histories = append(s.Histories, history(m, h))
		}
	}
	return s
}

// restarts returns, in tree order, the histories of the agents that started after from.
func (a *analysis) restarts(from int64) []History {
	var out []History
	for _, m := range a.roster.list {
		if h := a.histories[m.Name]; h != nil && h.seq > from {
			out = append(out, history(m, h))
		}
	}
	return out
}

func history(m *member, h *started) History {
	return History{
		Agent: m.Name, Colour: m.colour, Seq: h.seq, Via: h.via, Resumed: h.resumed,
		Starts: slices.Clone(h.starts), Started: h.count, Messages: h.fed,
	}
}

// noteSession keeps what event i changes of the session panel: a value, or what an agent was fed.
func (a *analysis) noteSession(i int) {
	e := &a.tr.Events[i]
	switch {
	case e.Kind == traces.KindSessionSet && e.Session != nil:
		setBy := firstNonEmpty(e.Session.SetBy, e.Agent)
		v := SessionValue{
			Key: e.Session.Key, Value: NewBlock("value", string(e.Session.Value)), SetBy: setBy,
			Colour: a.roster.colour(setBy), Seq: e.Seq, Sets: 1,
		}
		if j, ok := a.valueAt[v.Key]; ok {
			v.Sets += a.values[j].Sets
			a.values[j] = v
		} else {
			a.valueAt[v.Key] = len(a.values)
			a.values = append(a.values, v)
		}
		a.valuesSeq = e.Seq
	case e.Kind == traces.KindAgentStarted:
		a.historiesSeq = e.Seq
		if e.AgentRun == nil || e.Agent == "" {
			return
		}
		h := a.histories[e.Agent]
		if h == nil {
			h = &started{}
			a.histories[e.Agent] = h
			a.sectionsSeq = e.Seq
		}
		// Classified now, on the one index the analysis grows: what the panel shows of the agent's
		// newest start, at the cost of this start's input alone.
		h.seq, h.via, h.resumed = e.Seq, e.AgentRun.Via, e.AgentRun.Resumed
		if !e.AgentRun.Resumed || len(e.AgentRun.Input) > 0 || h.count == 0 {
			// A resumed agent is fed nothing new: it goes on with the history it had.
			h.fed = a.fed(a.sources, i, e.Agent, e.AgentRun.Input)
		}
		if h.count++; len(h.starts) == MaxStarts {
			h.starts = append(h.starts[:0], h.starts[1:]...)
		}
		h.starts = append(h.starts, e.Seq)
	}
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
