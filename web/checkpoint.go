package web

import (
	"cmp"
	"maps"
	"slices"
	"sync"

	"github.com/baton-dev/baton/traces"
)

// CheckpointEvery is how many events apart a Travel keeps copies of a run's analysis, so that
// the state as of any event is a copy of the nearest one before it plus at most this many
// events, wherever the event is in the run. The copies share the run's events; each holds the
// analysis's indexes as they were (some grow with the events): 100,000 events keep 12, about a
// quarter of what the run's own view state holds.
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
}

// NewTravel returns an empty Travel.
func NewTravel() *Travel { return &Travel{every: CheckpointEvery} }

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
			a = newAnalysis(run, tr.Agents)
		}
		a.takeUpTo(tr, (len(t.cps)+1)*t.every)
		t.cps = append(t.cps, a)
	}
	if k := n / t.every; k > 0 {
		return t.cps[k-1].clone()
	}
	return newAnalysis(run, tr.Agents)
}

// takeUpTo takes in tr's events up to index n (excluded), past those a has, sharing tr's array
// (capped, so that a later add copies) rather than copying it event by event.
func (a *analysis) takeUpTo(tr traces.Trace, n int) {
	from := len(a.tr.Events)
	a.tr.Events = capped(tr.Events[:n])
	for i := from; i < n; i++ {
		a.step(i)
	}
}

// endAs gives a, made on its run as running, the run's own metadata once it has taken in the
// run's last event: what newAnalysis(run) and the same events would have made.
func (a *analysis) endAs(run traces.Run) {
	own := newAnalysis(run, nil)
	a.tr.Run, a.metaStatus = run, own.metaStatus
	if !a.settled {
		a.status = own.status // no run.finished said otherwise
	}
}

func sameAgent(a, b traces.Agent) bool {
	return a.Name == b.Name && a.Description == b.Description && a.Kind == b.Kind && a.Parent == b.Parent &&
		a.Relation == b.Relation && a.OutputKey == b.OutputKey && slices.Equal(a.Tools, b.Tools)
}

// clone returns a copy of a that shares nothing a later add changes: adding events to either
// leaves the other as it was. Events, payloads, and the slices add only appends to (capped
// here) are shared.
func (a *analysis) clone() *analysis {
	c := *a // laid is shared: a new layout replaces it, none changes it
	c.tr.Events = capped(a.tr.Events)
	c.amended = capped(a.amended)
	c.roster = a.roster.clone()
	c.acts = make(map[string]*activity, len(a.acts))
	for k, x := range a.acts {
		y := *x
		y.modelIDs = maps.Clone(x.modelIDs)
		c.acts[k] = &y
	}
	// Transfers change when a later error fails them: copy each, and point the indexes at the copies.
	copied := make(map[*transfer]*transfer, len(a.transfers))
	c.transfers = make([]*transfer, len(a.transfers))
	for i, t := range a.transfers {
		u := *t
		c.transfers[i], copied[t] = &u, &u
	}
	c.transferAt = make(map[int64]*transfer, len(a.transferAt))
	for k, t := range a.transferAt {
		c.transferAt[k] = copied[t]
	}
	c.pairs = make(map[[2]string]*pairTransfers, len(a.pairs))
	for k, p := range a.pairs {
		q := *p
		q.newest = make([]*transfer, len(p.newest))
		for i, t := range p.newest {
			q.newest[i] = copied[t]
		}
		c.pairs[k] = &q
	}
	c.calls = make([]*agentToolCall, len(a.calls))
	callCopies := make(map[*agentToolCall]*agentToolCall, len(a.calls))
	for i, k := range a.calls {
		l := *k
		c.calls[i], callCopies[k] = &l, &l
	}
	c.open = make([]*agentToolCall, len(a.open))
	for i, k := range a.open {
		c.open[i] = callCopies[k]
	}
	c.values, c.valueAt = slices.Clone(a.values), maps.Clone(a.valueAt)
	c.histories = make(map[string]*started, len(a.histories))
	for k, h := range a.histories {
		g := *h
		g.starts = slices.Clone(h.starts) // shifted in place once full
		c.histories[k] = &g
	}
	c.sources = a.sources.clone()
	c.counts = tokenCache{}
	c.inputs = maps.Clone(a.inputs) // each replaced whole, never changed
	c.freshFrom, c.echoOf, c.echoedBy = maps.Clone(a.freshFrom), maps.Clone(a.echoOf), maps.Clone(a.echoedBy)
	c.callbacksOnly = maps.Clone(a.callbacksOnly)
	c.searches = capped(a.searches)
	c.spans = a.spans.clone(callCopies)
	return &c
}

// clone copies s, its open bars and arrows being changed in place; calls maps the AgentTool
// calls s knows to their copies.
func (s *sequence) clone(calls map[*agentToolCall]*agentToolCall) *sequence {
	c := *s
	c.bars, c.arrows, c.log = slices.Clone(s.bars), slices.Clone(s.arrows), capped(s.log)
	c.visit, c.model, c.tool = maps.Clone(s.visit), maps.Clone(s.model), maps.Clone(s.tool)
	c.open, c.arrow = maps.Clone(s.open), maps.Clone(s.arrow)
	c.calls = make(map[*agentToolCall]int, len(s.calls))
	for k, v := range s.calls {
		c.calls[calls[k]] = v
	}
	return &c
}

func (r *roster) clone() *roster {
	c := &roster{list: make([]*member, len(r.list)), byName: make(map[string]*member, len(r.byName))}
	for i, m := range r.list {
		n := *m
		c.list[i], c.byName[n.Name] = &n, &n
	}
	return c
}

func (x *sourceIndex) clone() *sourceIndex {
	c := *x
	c.primary, c.echo = make(map[string][]int64, len(x.primary)), make(map[string][]int64, len(x.echo))
	for k, s := range x.primary {
		c.primary[k] = capped(s)
	}
	for k, s := range x.echo {
		c.echo[k] = capped(s)
	}
	c.callees, c.callers = maps.Clone(x.callees), maps.Clone(x.callers)
	return &c
}

// capped returns s with no room to grow: an append to it copies rather than writes into what
// another holder of s may append to.
func capped[T any](s []T) []T { return s[:len(s):len(s)] }
