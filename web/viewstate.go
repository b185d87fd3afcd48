package web

import (
	"slices"

	"github.com/baton-dev/baton/internal/prices"
	"github.com/baton-dev/baton/traces"
)

// ViewState is a run's view state, built one event at a time and never rebuilt: the one model
// behind the run page, its live updates and any view of the run as of an event. Adding an event
// costs about the same at the run's 100,000th event as at its 100th, and so do Update and Row;
// View and Rows cost what they return. A ViewState is not safe for concurrent use: whoever
// shares it among readers (the server, among a run's viewers) guards it.
type ViewState struct{ a *analysis }

// NewViewState starts the view state of run on agents, with no events yet. run.Status is the
// run's status until an event says otherwise: a run.finished, or an event after one (a resume).
// The state keeps agents; the caller must not change them.
func NewViewState(run traces.Run, agents []traces.Agent, opts ...Option) *ViewState {
	return &ViewState{a: newAnalysis(run, agents, pricingOf(run, opts))}
}

// Add takes in the next events of the run, in order. It keeps them, sharing their payloads: the
// caller must not change them.
func (v *ViewState) Add(events ...traces.Event) {
	for _, e := range events {
		v.a.add(e)
	}
}

// Keep is Add for a state that has no events yet and a caller that gives events up: the state
// keeps events themselves, not a copy (a run imported whole: a million events' copy is 200 MB
// made and collected). Once it has events, it adds them as Add does.
func (v *ViewState) Keep(events []traces.Event) {
	if len(v.a.tr.Events) > 0 {
		v.Add(events...)
		return
	}
	v.a.tr.Events = capped(events) // a later add copies them rather than write into the caller's
	v.a.steps(0, len(events))
}

// Grow makes room for n more events, so that adding a run's events known to come (a recorded
// run opened at once) does not copy the ones taken in as it goes.
func (v *ViewState) Grow(n int) {
	v.a.tr.Events = slices.Grow(v.a.tr.Events, n)
}

// Seq returns the seq of the newest event taken in, 0 before any.
func (v *ViewState) Seq() int64 { return v.a.run.lastSeq }

// Status returns the run's status as of the newest event.
func (v *ViewState) Status() traces.Status { return v.a.run.status }

// View returns the whole run page's model as of the newest event.
func (v *ViewState) View() View { return v.a.view(0, true) }

// Update returns what the events after from changed, as Update says, without the new rows:
// ask Rows for those. A from below 0 asks for every part, as for a page that has none.
func (v *ViewState) Update(from int64) Update { return v.a.update(from) }

// Rows returns the timeline rows of the events after seq after, at most limit of them (all when
// limit <= 0).
func (v *ViewState) Rows(after int64, limit int) []Row {
	ev := v.a.tr.Events
	i := firstAfter(ev, after)
	end := len(ev)
	if limit > 0 {
		end = min(end, i+limit)
	}
	rows := make([]Row, 0, end-i)
	for ; i < end; i++ {
		rows = append(rows, v.a.timeline.row(ev, i, v.a.tree))
	}
	return rows
}

// Amended returns the seqs of the timeline rows up to from that events after from, up to to,
// drew again (a transfer that a later error failed): a page at from shown the rows as of to needs
// them anew. It costs what it returns, not the run's length.
func (v *ViewState) Amended(from, to int64) []int64 { return v.a.timeline.amendedSince(from, to) }

// At returns the view state as it was right after event seq: ViewAt of the state's trace. It
// replays the events up to seq; a Travel keeps copies to step from instead.
func (v *ViewState) At(seq int64) *ViewState { return viewAt(v.Trace(), seq, v.a.pricing) }

// ViewAt returns the view state of tr as it was right after event seq, replayed from tr's events:
// it costs a pass over the events up to seq. Before tr's last event the run is running (as Prefix
// has it), whatever it became later. The state shares tr's payloads: do not change them.
func ViewAt(tr traces.Trace, seq int64, opts ...Option) *ViewState {
	return viewAt(tr, seq, pricingOf(tr.Run, opts))
}

func viewAt(tr traces.Trace, seq int64, pricing prices.Run) *ViewState {
	tr = Prefix(tr, seq)
	w := &ViewState{a: newAnalysis(tr.Run, tr.Agents, pricing)}
	w.Add(tr.Events...)
	return w
}

// Trace returns the run, agents and events the state took in. Its events are shared and capped:
// read them, never change them; they stay valid while more events are added, so a caller that
// guards the state may read them after letting go of it.
func (v *ViewState) Trace() traces.Trace {
	tr := v.a.tr
	tr.Events = tr.Events[:len(tr.Events):len(tr.Events)]
	return tr
}

// Events returns the events after seq after that the state took in, at most limit of them (all
// when limit <= 0). The slice is shared and capped: read it, never change it; it stays valid
// while more events are added.
func (v *ViewState) Events(after int64, limit int) []traces.Event {
	ev := v.a.tr.Events
	i := firstAfter(ev, after)
	end := len(ev)
	if limit > 0 {
		end = min(end, i+limit)
	}
	return ev[i:end:end]
}

// Sequence returns the sequence view: whole when after <= 0, else a delta of what the events
// after seq after, up to seq through, created or changed (see Sequence). A delta costs what it
// holds.
func (v *ViewState) Sequence(after, through int64) Sequence { return v.a.sequence(after, through) }

// Agents returns every agent the state knows, with its colour index, in colour order.
func (v *ViewState) Agents() []AgentRef { return v.a.tree.agentRefs() }

// AwayAt returns where a page that shows the run as of event seq stands, by the state's newest
// event: the run's status and outcome as of that event. It is nil when seq is the newest event
// or later.
func (v *ViewState) AwayAt(seq int64) *Away {
	r, err := v.a.run, v.a.runError()
	if seq >= r.lastSeq {
		return nil
	}
	return &Away{At: seq, Head: r.lastSeq, Status: r.status, Error: err, Outcome: r.outcome(err)}
}

// Redraw returns an Update that redraws the header, outcome, tree, sequence and session panels as of the
// newest event, whatever the page showed before: what a page needs to jump to this point of the
// run. It leaves out the rows and the agent filter, which a page keeps for the whole run.
func (v *ViewState) Redraw() Update {
	a := v.a
	head := a.run.lastSeq
	seq := a.sequence(0, head)
	return Update{
		From: head, Seq: head, Changed: true, Stats: a.stats(), GraphChanged: true, Graph: a.tree.graph(),
		ValuesChanged: true, HistoriesChanged: true, Session: a.session.panel(a.tr, a.tree.roster), Sequence: &seq,
	}
}
