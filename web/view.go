package web

import "github.com/baton-dev/baton/traces"

// View is everything the run page draws for a trace, computed in one pass over its events.
type View struct {
	Stats    Stats
	Graph    Graph
	Agents   []AgentRef
	Timeline []Row
	Session  Session
}

// NewView returns the whole run page's model for tr after its last event.
func NewView(tr traces.Trace) View {
	a := analyse(tr)
	return View{
		Stats: newStats(a), Graph: newGraph(a), Agents: a.agentRefs(),
		Timeline: newTimeline(a, 0), Session: newSession(a),
	}
}

// Update is what changes on the run page when the events after From arrive. Stats and Graph are
// always given when Changed; Rows are only the new timeline rows. Session is computed only when
// ValuesChanged or HistoriesChanged, Agents only when AgentsChanged.
type Update struct {
	From             int64
	Changed          bool // some event has Seq > From
	Stats            Stats
	Graph            Graph
	Rows             []Row
	ValuesChanged    bool // a session.set arrived
	HistoriesChanged bool // an agent.started arrived
	Session          Session
	AgentsChanged    bool // the events named an agent the page did not know yet
	Agents           []AgentRef
}

// NewUpdate returns what the events of tr with Seq > from change. tr is the whole trace so far.
func NewUpdate(tr traces.Trace, from int64) Update {
	u := Update{From: from}
	first := len(tr.Events)
	for i := len(tr.Events) - 1; i >= 0 && tr.Events[i].Seq > from; i-- {
		first = i
	}
	if first == len(tr.Events) {
		return u
	}
	a := analyse(tr)
	u.Changed = true
	u.Stats, u.Graph, u.Rows = newStats(a), newGraph(a), newTimeline(a, from)
	for _, e := range tr.Events[first:] {
		u.ValuesChanged = u.ValuesChanged || e.Kind == traces.KindSessionSet
		u.HistoriesChanged = u.HistoriesChanged || e.Kind == traces.KindAgentStarted
	}
	if u.ValuesChanged || u.HistoriesChanged {
		u.Session = newSession(a)
	}
	for _, m := range a.roster.list {
		if m.since >= first {
			u.AgentsChanged, u.Agents = true, a.agentRefs()
			break
		}
	}
	return u
}

func (a *analysis) agentRefs() []AgentRef {
	out := make([]AgentRef, len(a.roster.list))
	for i, m := range a.roster.list {
		out[i] = AgentRef{Name: m.Name, Colour: m.colour}
	}
	return out
}
