package web

import (
	"cmp"
	"slices"
	"sync"

	"github.com/baton-dev/baton/traces"
)

// CheckpointEvery is how many events apart a Travel keeps copies of a run's analysis, so that
// the state as of any event is a copy of the nearest one before it plus at most this many
// events, wherever the event is in the run. The copies share the run's events; each holds the
// analysis's pieces as they were (each piece copies itself: see analysis.clone), some of which
// grow with the events: 100,000 events keep 12, about a quarter of what the run's own view state
// holds.
const CheckpointEvery = 8192

// Travel answers ViewAt for one run as its trace grows, from copies of the analysis kept every
// CheckpointEvery events (made as steps need them), so that a step costs about the same at the
// run's 100,000th event as at its 100th. It is safe for concurrent use.
type Travel struct {
	every int

	mu   sync.Mutex
	run  traces.Run     // the run the copies were made on: running, as Prefix has it before the end
	tree []traces.Agent // the agents the copies were made on
	cps  []*analysis    // cps[i] has taken in the trace's first (i+1)·every events
	opts []Option
}

// NewTravel returns an empty Travel whose views are made with opts.
func NewTravel(opts ...Option) *Travel { return &Travel{every: CheckpointEvery, opts: opts} }

// At returns what ViewAt(tr, seq) returns. tr is the run's trace so far: each call's trace must
// begin with the events of the one before (a trace only grows); another run's, or the same on
// another agent tree, starts the copies again.
func (t *Travel) At(tr traces.Trace, seq int64) *ViewState {
	n, _ := slices.BinarySearchFunc(tr.Events, seq+1, func(e traces.Event, s int64) int { return cmp.Compare(e.Seq, s) })
	run := tr.Run
	run.Status, run.EndedAt, run.Error = traces.StatusRunning, nil, "" // before its last event, as Prefix has it
	a := t.from(tr, run, n)
	a.takeUpTo(tr, n)
	if n == len(tr.Events) {
		a.endAs(tr.Run)
	}
	return &ViewState{a: a}
}

// from returns a copy of the newest checkpoint with at most n of tr's events, making the ones
// missing up to there, or a new analysis when there is none.
func (t *Travel) from(tr traces.Trace, run traces.Run, n int) *analysis {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.run.ID != run.ID || !slices.EqualFunc(t.tree, tr.Agents, sameAgent) {
		t.run, t.tree, t.cps = run, tr.Agents, nil
	}
	for len(t.cps) < n/t.every {
		var a *analysis
		if k := len(t.cps); k > 0 {
			a = t.cps[k-1].clone()
		} else {
			a = newAnalysis(run, tr.Agents, pricingOf(run, t.opts))
		}
		a.takeUpTo(tr, (len(t.cps)+1)*t.every)
		t.cps = append(t.cps, a)
	}
	if k := n / t.every; k > 0 {
		return t.cps[k-1].clone()
	}
	return newAnalysis(run, tr.Agents, pricingOf(run, t.opts))
}

// takeUpTo takes in tr's events up to index n (excluded), past those a has, sharing tr's array
// (capped, so that a later add copies) rather than copying it event by event.
func (a *analysis) takeUpTo(tr traces.Trace, n int) {
	from := len(a.tr.Events)
	a.tr.Events = capped(tr.Events[:n])
	a.steps(from, n)
}

// endAs gives a, made on its run as running, the run's own metadata once it has taken in the
// run's last event: what newAnalysis(run) and the same events would have made.
func (a *analysis) endAs(run traces.Run) {
	a.tr.Run = run
	a.run.endAs(run)
}

func sameAgent(a, b traces.Agent) bool {
	return a.Name == b.Name && a.Description == b.Description && a.Kind == b.Kind && a.Parent == b.Parent &&
		a.Relation == b.Relation && a.OutputKey == b.OutputKey && slices.Equal(a.Tools, b.Tools)
}
