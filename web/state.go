package web

import (
	"slices"
	"sync"

	"github.com/baton-dev/baton/internal/prices"
	"github.com/baton-dev/baton/traces"
)

// analysis is what the events of a trace say, built one event at a time (add) and never
// revisited. It is made of one piece per part of the page, each with its own state and its own
// add, taken in this order, each reading only the pieces before it:
//
//   - tree (treestate.go): the agents, what each did, the transfers and AgentTool calls;
//   - run (runstate.go): the header's status, counters and times, the outcome's candidates;
//   - session (session.go): the session's values and what each agent was fed;
//   - timeline (search.go): the rows' search and folding indexes, and rows drawn again;
//   - inspect (inspectindex.go, agentlog.go): what inspections read beyond the other pieces, an
//     agent's summary included;
//   - spans (sequence.go): the sequence view's bars and arrows.
//
// Asking it for a part of the page costs what that part holds (agents, transfers, keys), never a
// pass over the events. A copy for time travel (clone) is each piece's copy of itself.
type analysis struct {
	tr       traces.Trace // tr.Events: the events added so far, in order
	tree     *treeState
	run      *runState
	session  *sessionState
	timeline *timelineIndex
	inspect  *inspectIndex
	spans    *sequence
	pricing  prices.Run // what the run's model calls cost
}

// analyse returns the analysis of tr's events. It shares tr's events and copies none.
func analyse(tr traces.Trace, pricing prices.Run) *analysis {
	a := newAnalysis(tr.Run, tr.Agents, pricing)
	// Capped, so that a later add copies rather than writes into tr's array.
	a.tr.Events = tr.Events[:len(tr.Events):len(tr.Events)]
	a.steps(0, len(a.tr.Events))
	return a
}

// newAnalysis starts the analysis of run on agents with no events yet, its model calls priced
// as pricing says.
func newAnalysis(run traces.Run, agents []traces.Agent, pricing prices.Run) *analysis {
	return &analysis{
		tr: traces.Trace{Run: run, Agents: agents}, tree: newTreeState(agents), run: newRunState(run, pricing),
		session: newSessionState(), timeline: newTimelineIndex(), inspect: newInspectIndex(pricing), spans: newSequence(), pricing: pricing,
	}
}

// add appends e to the analysis. e's payloads are shared, never changed.
func (a *analysis) add(e traces.Event) {
	a.tr.Events = append(a.tr.Events, e)
	a.step(len(a.tr.Events) - 1)
}

// step takes in event i of a.tr.Events, the events before it taken in already: each piece in
// turn, the later ones reading the earlier.
func (a *analysis) step(i int) {
	a.stepPieces(i)
	a.stepNotes(i)
}

// stepPieces is step but for the timeline's search notes (stepNotes): the pieces that read the
// tree.
func (a *analysis) stepPieces(i int) {
	ev := a.tr.Events
	e := &ev[i]
	c := a.tree.add(ev, i)
	a.run.add(e, a.tree, c)
	a.session.add(a.tr, i, a.tree.roster)
	a.timeline.addChange(ev, i, c)
	a.spans.add(e, a.tree, c, a.run.firstTime)
}

// stepNotes takes event i's search notes into the timeline and the inspections' index: they read
// the events alone, and nothing else reads them while events are taken in.
func (a *analysis) stepNotes(i int) {
	a.inspect.add(a.tr.Events, i, a.timeline.noteSearch(a.tr.Events, i))
}

// concurrentSteps is the number of events past which steps takes in the search notes on a
// goroutine of their own, beside the other pieces: a fifth of the work, for a run read whole
// (a large import, a run read back from its store).
const concurrentSteps = 20_000

// steps takes in events from up to to (excluded) of a.tr.Events, those before from taken in
// already, as step does each.
func (a *analysis) steps(from, to int) {
	if to-from <= concurrentSteps {
		for i := from; i < to; i++ {
			a.step(i)
		}
		return
	}
	a.grow(a.tr.Events[from:to])
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := from; i < to; i++ {
			a.stepNotes(i)
		}
	})
	for i := from; i < to; i++ {
		a.stepPieces(i)
	}
	wg.Wait()
}

// grow makes room for what events, to be taken in, add to the pieces' longest lists (the
// sequence view's bars, arrows and their log, the tree's transfers), counted by kind: a million
// events' lists grown by doubling were some 200 MB allocated and collected for 70 kept.
func (a *analysis) grow(events []traces.Event) {
	var bars, arrows, transfers int
	for i := range events {
		switch events[i].Kind {
		case traces.KindAgentStarted, traces.KindModelStarted, traces.KindToolStarted:
			bars++
		case traces.KindTransfer:
			arrows++
			transfers++
		case traces.KindAgentToolEnter, traces.KindAgentToolExit:
			arrows++
		}
	}
	a.spans.grow(bars, arrows)
	a.tree.transfers = slices.Grow(a.tree.transfers, transfers)
}

// clone returns a copy of a that shares nothing a later add changes: adding events to either
// leaves the other as it was. The events and their payloads are shared (capped, so that an add
// to either copies).
func (a *analysis) clone() *analysis {
	c := &analysis{tr: a.tr, tree: a.tree.clone(), run: a.run.clone(), session: a.session.clone(),
		timeline: a.timeline.clone(), inspect: a.inspect.clone(), spans: a.spans.clone(), pricing: a.pricing}
	c.tr.Events = capped(a.tr.Events)
	return c
}

// runError is the run's failure reason: its run.finished event's (a live snapshot may carry it
// before the run's metadata does), else the run's own.
func (a *analysis) runError() string {
	return a.run.runError(a.tr.Run.Error)
}

// sequence returns the sequence view, as sequence.view says.
func (a *analysis) sequence(after, through int64) Sequence {
	return a.spans.view(after, through, a.run.lastSeq, ms(a.run.lastTime, a.run.firstTime), a.tree.roster)
}
