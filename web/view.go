package web

import (
	"slices"

	"github.com/baton-dev/baton/internal/prices"
	"github.com/baton-dev/baton/traces"
)

// View is everything the run page draws for a trace, computed in one pass over its events.
type View struct {
	Stats    Stats
	Graph    Graph
	Sequence Sequence
	Agents   []AgentRef
	Timeline []Row
	Session  Session
}

// NewView returns the whole run page's model for tr after its last event.
func NewView(tr traces.Trace, opts ...Option) View {
	return analyse(tr, pricingOf(tr.Run, opts)).view(0, true)
}

// NewSession returns the session panel of tr after its last event.
func NewSession(tr traces.Trace) Session {
	a := analyse(tr, prices.Run{})
	return a.session.panel(a.tr, a.tree.roster)
}

// NewStats returns the header of tr after its last event.
func NewStats(tr traces.Trace, opts ...Option) Stats {
	return analyse(tr, pricingOf(tr.Run, opts)).stats()
}

// NewTimeline returns the timeline rows of the events of tr with Seq > after, in order.
func NewTimeline(tr traces.Trace, after int64) []Row {
	return newTimeline(analyse(tr, prices.Run{}), after)
}

func newTimeline(a *analysis, after int64) []Row {
	ev := a.tr.Events
	first := firstAfter(ev, after)
	rows := make([]Row, 0, len(ev)-first)
	for i := first; i < len(ev); i++ {
		rows = append(rows, a.timeline.row(ev, i, a.tree))
	}
	return rows
}

// view returns the page's model with the rows of the newest limit events (all when limit <= 0),
// without the session panel's histories and the sequence view beyond its Head unless whole
// (PageDeferred).
func (a *analysis) view(limit int, whole bool) View {
	var after int64
	if n := len(a.tr.Events); limit > 0 && n > limit {
		after = a.tr.Events[n-limit-1].Seq
	}
	session := Session{Values: slices.Clone(a.session.values)}
	sequence := Sequence{Head: a.run.lastSeq}
	if whole {
		session, sequence = a.session.panel(a.tr, a.tree.roster), a.sequence(0, a.run.lastSeq)
	}
	return View{
		Stats: a.stats(), Graph: a.tree.graph(), Agents: a.tree.agentRefs(),
		Timeline: newTimeline(a, after), Session: session, Sequence: sequence,
	}
}

// stats returns the header as of the newest event.
func (a *analysis) stats() Stats {
	s := newStats(a.tr, a.run, a.tree)
	if s.Held != nil {
		a.heldFeed(s.Held, eventIndex(a.tr, s.Held.Seq))
	}
	return s
}

// Update is what changes on the run page when the events after From arrive, up to Seq. Stats is
// always given when Changed, Graph only when GraphChanged, Faces only when it is not. Rows are the
// new timeline rows (NewUpdate fills them; ViewState.Update leaves them to ViewState.Rows), Amended
// the rows of events that changed after From (a transfer that a later error failed, the work inside
// an AgentTool call seen through callbacks only), even of events past From, which a page may hold
// already (a page's first render can be ahead of its live feed): the page puts them in place of the
// old ones. Session is computed only when ValuesChanged or HistoriesChanged, Agents only when
// AgentsChanged.
type Update struct {
	From             int64
	Seq              int64
	Changed          bool // some event has Seq > From
	Stats            Stats
	GraphChanged     bool // the tree as drawn changed: an agent, edge, frame, badge or node
	Graph            Graph
	Faces            []Node // when only node faces changed: those nodes, each drawn anew in place
	Rows             []Row
	Amended          []Row
	ValuesChanged    bool // a session.set arrived
	HistoriesChanged bool // an agent started for the first time: the session panel has a new section
	// Restarts, when HistoriesChanged is not set, are the histories of the agents that started
	// again, each drawn anew in place of its section of the panel.
	Restarts      []History
	Session       Session
	AgentsChanged bool // the events named an agent the page did not know yet
	Agents        []AgentRef
	// Sequence is the sequence view: whole from ViewState.Redraw, what changed after From from
	// NewUpdate. ViewState.Update leaves it out: a live page's delta depends on what that page
	// has (ViewState.Sequence).
	Sequence *Sequence
}

// NewUpdate returns what the events of tr with Seq > from change. tr is the whole trace so far.
func NewUpdate(tr traces.Trace, from int64) Update {
	a := analyse(tr, prices.Run{})
	u := a.update(from)
	if u.Changed {
		u.Rows = newTimeline(a, from)
		s := a.sequence(from, a.run.lastSeq)
		u.Sequence = &s
	}
	return u
}

// update is Update without the new rows: what it costs depends on the agents, transfers and
// session keys, not on how many events there are. A from below 0 asks for every part.
func (a *analysis) update(from int64) Update {
	t, s, ev := a.tree, a.session, a.tr.Events
	u := Update{From: from, Seq: a.run.lastSeq}
	if a.run.lastSeq <= from {
		return u
	}
	u.Changed = true
	u.Stats = a.stats()
	if u.GraphChanged = t.graphSeq > from; u.GraphChanged {
		u.Graph = t.graph()
	} else {
		u.Faces = t.faces(from)
	}
	for _, seq := range a.timeline.amendedSince(from, a.run.lastSeq) {
		if i := indexOf(ev, seq); i >= 0 {
			u.Amended = append(u.Amended, a.timeline.row(ev, i, t))
		}
	}
	u.ValuesChanged, u.HistoriesChanged = s.valuesSeq > from, s.sectionsSeq > from
	if !u.HistoriesChanged && s.historiesSeq > from {
		u.Restarts = s.restarts(a.tr, from, t.roster)
	}
	if u.ValuesChanged || u.HistoriesChanged {
		u.Session = s.panel(a.tr, t.roster)
	}
	if u.AgentsChanged = t.agentsSeq > from; u.AgentsChanged {
		u.Agents = t.agentRefs()
	}
	return u
}
