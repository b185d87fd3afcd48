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
	Fed      int // how many messages it was fed: Messages holds the latest of them in a report's frames
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

// sessionState is the session panel's piece of the analysis: each key's newest value, each
// agent's newest start with what it was fed, the index that classifies what an agent is fed by
// origin, and at which event each part of the panel last changed. It reads the roster, for
// colours.
type sessionState struct {
	values    []SessionValue
	valueAt   map[string]int
	histories map[string]*started
	sources   *sourceIndex // grown as agents start (and inspections ask), to classify what each was fed

	valuesSeq, historiesSeq int64
	// sectionsSeq is the newest agent.started that was its agent's first: the session panel
	// gained a section (an agent starting again only changes its own).
	sectionsSeq int64
}

// started is an agent's newest agent.started, with the seqs of its newest starts and how many
// there were.
type started struct {
	seq     int64
	via     string
	resumed bool
	starts  []int64
	count   int
	// at is the index of its newest start that was fed an input, input that input: classified
	// by origin when the panel shows it (a run that starts an agent n times with a growing
	// history would otherwise classify that history n times, kept or not).
	at    int
	input []traces.Message
}

func newSessionState() *sessionState {
	return &sessionState{valueAt: make(map[string]int), histories: make(map[string]*started), sources: newSourceIndex()}
}

func (s *sessionState) clone() *sessionState {
	c := *s
	c.values, c.valueAt = slices.Clone(s.values), maps.Clone(s.valueAt)
	c.histories = make(map[string]*started, len(s.histories))
	for k, h := range s.histories {
		g := *h
		g.starts = slices.Clone(h.starts) // shifted in place once full
		c.histories[k] = &g
	}
	c.sources = s.sources.clone()
	return &c
}

func (x *sourceIndex) clone() *sourceIndex {
	c := *x
	c.primary, c.echo = make(map[msgKey][]int64, len(x.primary)), make(map[msgKey][]int64, len(x.echo))
	for k, s := range x.primary {
		c.primary[k] = capped(s)
	}
	for k, s := range x.echo {
		c.echo[k] = capped(s)
	}
	c.callees, c.callers, c.requested = maps.Clone(x.callees), maps.Clone(x.callers), x.requested.clone()
	c.chains = make(map[string]*[2]*chain) // a cache: the copy starts its own
	return &c
}

// panel returns the session panel of tr, its histories in r's order.
func (s *sessionState) panel(tr traces.Trace, r *roster) Session {
	return Session{Values: slices.Clone(s.values), Histories: s.historyList(tr, r)}
}

// historyList returns the panel's histories, in r's order.
func (s *sessionState) historyList(tr traces.Trace, r *roster) []History {
	var out []History
	for _, m := range r.list {
		if h := s.histories[m.Name]; h != nil {
			out = append(out, s.history(tr, m, h, r))
		}
	}
	return out
}

// restarts returns, in r's order, the histories of the agents that started after from.
func (s *sessionState) restarts(tr traces.Trace, from int64, r *roster) []History {
	var out []History
	for _, m := range r.list {
		if h := s.histories[m.Name]; h != nil && h.seq > from {
			out = append(out, s.history(tr, m, h, r))
		}
	}
	return out
}

func (s *sessionState) history(tr traces.Trace, m *member, h *started, r *roster) History {
	return History{
		Agent: m.Name, Colour: m.colour, Seq: h.seq, Via: h.via, Resumed: h.resumed,
		Starts: slices.Clone(h.starts), Started: h.count, Messages: s.fed(tr, h.at, m.Name, h.input, r), Fed: len(h.input),
	}
}

// add keeps what event i of tr changes of the session panel: a value, or what an agent was fed.
// r is the roster with the event's agents in it.
func (s *sessionState) add(tr traces.Trace, i int, r *roster) {
	e := &tr.Events[i]
	switch {
	case e.Kind == traces.KindSessionSet && e.Session != nil:
		setBy := firstNonEmpty(e.Session.SetBy, e.Agent)
		v := SessionValue{
			Key: e.Session.Key, Value: NewBlock("value", string(e.Session.Value)), SetBy: setBy,
			Colour: r.colour(setBy), Seq: e.Seq, Sets: 1,
		}
		if j, ok := s.valueAt[v.Key]; ok {
			v.Sets += s.values[j].Sets
			s.values[j] = v
		} else {
			s.valueAt[v.Key] = len(s.values)
			s.values = append(s.values, v)
		}
		s.valuesSeq = e.Seq
	case e.Kind == traces.KindAgentStarted:
		s.historiesSeq = e.Seq
		if e.AgentRun == nil || e.Agent == "" {
			return
		}
		h := s.histories[e.Agent]
		if h == nil {
			h = &started{}
			s.histories[e.Agent] = h
			s.sectionsSeq = e.Seq
		}
		// What the panel shows of the agent's newest start, classified when it is shown.
		h.seq, h.via, h.resumed = e.Seq, e.AgentRun.Via, e.AgentRun.Resumed
		if !e.AgentRun.Resumed || len(e.AgentRun.Input) > 0 || h.count == 0 {
			// A resumed agent is fed nothing new: it goes on with the history it had.
			h.at, h.input = i, e.AgentRun.Input
		}
		if h.count++; len(h.starts) == MaxStarts {
			h.starts = append(h.starts[:0], h.starts[1:]...)
		}
		h.starts = append(h.starts, e.Seq)
	}
}

// fed annotates the messages agent received at event index i of tr with their origins (see
// Sources), on the session's index, which calls in trace order share.
func (s *sessionState) fed(tr traces.Trace, i int, agent string, msgs []traces.Message, r *roster) []FedMessage {
	return s.fedLast(tr, i, agent, msgs, r, len(msgs))
}

// fedLast is fed of the last n of msgs alone (their origins depend on the messages before them).
func (s *sessionState) fedLast(tr traces.Trace, i int, agent string, msgs []traces.Message, r *roster, n int) []FedMessage {
	from := len(msgs) - min(n, len(msgs))
	out := make([]FedMessage, len(msgs)-from)
	for k, src := range s.sources.sources(tr, i, agent, msgs)[from:] {
		m := msgs[from+k]
		f := FedMessage{Role: m.Role, Content: m.Content, ToolCalls: m.ToolCalls, ToolName: m.ToolName, ToolCallID: m.ToolCallID,
			From: src.Agent, How: src.How, Origin: src.Origin, Source: src.Seq, FromColour: -1}
		if src.Injected != "" {
			f.Content, f.Injected = src.Instruction, src.Injected
		}
		if f.From != "" {
			f.FromColour = r.colour(f.From)
		}
		out[k] = f
	}
	return out
}
