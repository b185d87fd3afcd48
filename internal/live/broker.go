package live

import (
	"github.com/baton-dev/baton/traces"
	"log/slog"
	"slices"
	"strings"
	"sync"
)

// DefaultKeep is how many runs a broker holds in memory, and a MemoryStore keeps, by default
// before they forget the oldest that have ended.
const DefaultKeep = 500

// Broker holds the recordings of this process by run id: the in-memory source of live runs and
// their recent history. It writes every run to its Store as the run goes on, reads back from it
// the runs it no longer holds, and leaves listing and searching runs to it. It is safe for
// concurrent use.
type Broker struct {
	keep  int
	store Store
	log   *slog.Logger

	mu      sync.RWMutex
	runs    map[string]*traces.Recording
	added   []string                 // run ids, oldest first
	writing map[string]chan struct{} // closed when the run's store writer ends; guarded by mu
	writers sync.WaitGroup
	gate    bool // subscriptions to a run read only what the store has committed
	// countFindings, when set, counts a run's handoff bugs when it ends (Tally.Findings).
	countFindings func(traces.Trace) int
	follow        *follower // runs other servers record, when set (see Follow)
	// quit is closed when Close gives up waiting: writers stop retrying a failing store.
	quit     chan struct{}
	quitOnce sync.Once
}

// NewBroker returns an empty broker whose runs live in memory only: NewStoredBroker with a
// MemoryStore that keeps as many runs as the broker holds.
func NewBroker(keep int) *Broker {
	b := NewStoredBroker(keep, NewMemoryStore(keep), nil)
	b.gate = false // nothing in memory survives a crash: no reader need wait for it
	return b
}

// NewStoredBroker returns an empty broker backed by store that holds up to keep runs in memory
// (DefaultKeep when keep <= 0): adding one more forgets the oldest runs that have ended; running
// runs are never forgotten. Every run added is created in the store at once, and its events are
// written to it as they are recorded, batched, by a goroutine of the broker's that ends with the
// run (see Close); Get, Delete and Interrupted also see the runs only the store holds, and List
// is the store's. log receives the store's errors (slog.Default when nil): a run whose events
// cannot be written goes on in memory only.
//
// Its durability promise: the subscriptions to a run it writes (every live viewer's) read each
// event only once the store has committed it, run.finished included, so a crash of the process
// loses no event that a viewer saw, and no run a viewer saw end. What it may lose is what no
// viewer has seen yet: the batch being written (see maxBatch, batchWindow). Should the store fail
// with a fault that may pass (a database restarting), the batch is written again, for up to
// maxStoreWait; should it fail otherwise or for longer, the run goes on in memory only, and its
// viewers see it as it is recorded.
func NewStoredBroker(keep int, store Store, log *slog.Logger) *Broker {
	if keep <= 0 {
		keep = DefaultKeep
	}
	if log == nil {
		log = slog.Default()
	}
	return &Broker{keep: keep, store: store, log: log, runs: make(map[string]*traces.Recording), writing: make(map[string]chan struct{}), gate: true, quit: make(chan struct{})}
}

// CountFindings makes the broker count, with count, the handoff bugs of each run when it ends,
// for the run list (RunSummary.Findings, RunQuery.Findings). Call it before adding runs.
func (b *Broker) CountFindings(count func(traces.Trace) int) { b.countFindings = count }

// Add registers rec under its run id, then forgets the oldest ended runs beyond what the broker
// keeps. It fails with CodeConflict when the id is taken, in memory or in the store. What rec
// holds so far is saved before Add returns, and the rest follows as recorded.
func (b *Broker) Add(rec *traces.Recording) error {
	return b.add(rec, func() traces.Trace { return rec.Snapshot() })
}

// add is Add, with what reads rec's trace: Import has it at hand, where a snapshot would decode
// every event the recording just encoded (0.4 s of a million-event import, and as much memory
// again as the decoded trace).
func (b *Broker) add(rec *traces.Recording, trace func() traces.Trace) error {
	id := rec.ID()
	b.mu.RLock()
	_, taken := b.runs[id]
	b.mu.RUnlock()
	if taken {
		return traces.Errorf(traces.CodeConflict, "run %q already exists", id)
	}
	tr := trace()
	var tally Tally
	for _, e := range tr.Events {
		tally.Add(e)
	}
	if b.countFindings != nil && tally.Status.Ended() {
		tally.Findings = b.countFindings(tr)
	}
	if err := b.store.Create(tally.Apply(tr.Run), tally, tr.Agents, tr.Events); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.runs[id] = rec
	b.added = append(b.added, id)
	if !tr.Run.Status.Ended() {
		b.persist(rec, tally)
	}
	b.forget()
	return nil
}

// forget drops the oldest ended runs while the broker holds more than it keeps. Callers hold b.mu.
func (b *Broker) forget() {
	excess := len(b.runs) - b.keep
	if excess <= 0 {
		return
	}
	kept := b.added[:0]
	for _, id := range b.added {
		if excess > 0 && b.runs[id].Run().Status.Ended() {
			delete(b.runs, id)
			excess--
			continue
		}
		kept = append(kept, id)
	}
	b.added = kept
}

// Get returns the recording of run id, or an error with CodeNotFound. A run only the store
// holds is loaded as an ended recording (see traces.NewRecordingOf) and, once it has ended in the
// store, held from then on. One still running there, which another server sharing the store is
// recording, is followed live when b follows (see Follow), as is one that ended interrupted (it
// may be resumed), and else loaded anew at each call, so that each shows that server's writes so
// far.
func (b *Broker) Get(id string) (*traces.Recording, error) {
	rec, _, err := b.GetLoaded(id)
	return rec, err
}

// GetLoaded is Get that also returns the trace it read from the store when this call read the
// run's whole trace and made the recording of it, else an empty one. The recording keeps its
// own copies of the events, so the caller may keep these: a million events' view state takes
// them rather than read the recording's back.
func (b *Broker) GetLoaded(id string) (*traces.Recording, traces.Trace, error) {
	b.mu.RLock()
	rec, ok := b.runs[id]
	b.mu.RUnlock()
	if ok {
		return rec, traces.Trace{}, nil
	}
	if b.follow != nil {
		rec, err := b.getFollowed(id)
		return rec, traces.Trace{}, err
	}
	tr, err := b.store.Load(id)
	if err != nil {
		return nil, traces.Trace{}, err
	}
	if !tr.Run.Status.Ended() {
		return traces.NewRecordingOf(tr), tr, nil
	}
	loaded := traces.NewRecordingOf(tr)
	if held := b.hold(loaded); held != loaded {
		return held, traces.Trace{}, nil // got meanwhile
	}
	return loaded, tr, nil
}

// unholdLocked forgets run id in memory. The caller holds b.mu.
func (b *Broker) unholdLocked(id string) {
	delete(b.runs, id)
	b.added = slices.DeleteFunc(b.added, func(x string) bool { return x == id })
}

// Holds reports whether the broker holds run id in memory: a run it added or loaded, and has not
// forgotten since.
func (b *Broker) Holds(id string) bool {
	b.mu.RLock()
	defer b.mu.RUnlock()
	_, ok := b.runs[id]
	return ok
}

// Runs returns the metadata of every run held in memory, newest first.
func (b *Broker) Runs() []traces.Run {
	b.mu.RLock()
	recs := make([]*traces.Recording, 0, len(b.runs))
	for _, r := range b.runs {
		recs = append(recs, r)
	}
	b.mu.RUnlock()
	runs := make([]traces.Run, len(recs))
	for i, r := range recs {
		runs[i] = r.Run()
	}
	slices.SortFunc(runs, func(a, b traces.Run) int {
		if c := b.StartedAt.Compare(a.StartedAt); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
	return runs
}
