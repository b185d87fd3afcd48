package traces

import (
	"slices"
	"strconv"
	"strings"
	"sync"
)

// DefaultKeep is how many runs a broker holds by default before it forgets the oldest ended ones.
const DefaultKeep = 500

// Broker holds the recordings of this process by run id: the in-memory source of live runs and
// their recent history. It is safe for concurrent use.
type Broker struct {
	keep int

	mu    sync.RWMutex
	runs  map[string]*Recording
	added []string // run ids, oldest first
}

// NewBroker returns an empty broker that holds up to keep runs (DefaultKeep when keep <= 0):
// adding one more forgets the oldest runs that have ended. Running runs are never forgotten.
func NewBroker(keep int) *Broker {
	if keep <= 0 {
		keep = DefaultKeep
	}
	return &Broker{keep: keep, runs: make(map[string]*Recording)}
}

// Add registers rec under its run id, then forgets the oldest ended runs beyond what the broker
// keeps. It fails with CodeConflict when the id is taken.
func (b *Broker) Add(rec *Recording) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	id := rec.ID()
	if _, ok := b.runs[id]; ok {
		return Errorf(CodeConflict, "run %q already exists", id)
	}
	b.runs[id] = rec
	b.added = append(b.added, id)
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

// Get returns the recording of run id, or an error with CodeNotFound.
func (b *Broker) Get(id string) (*Recording, error) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	rec, ok := b.runs[id]
	if !ok {
		return nil, Errorf(CodeNotFound, "run %q not found", id)
	}
	return rec, nil
}

// Runs returns the metadata of every run, newest first.
func (b *Broker) Runs() []Run {
	b.mu.RLock()
	recs := make([]*Recording, 0, len(b.runs))
	for _, r := range b.runs {
		recs = append(recs, r)
	}
	b.mu.RUnlock()
	runs := make([]Run, len(recs))
	for i, r := range recs {
		runs[i] = r.Run()
	}
	slices.SortFunc(runs, func(a, b Run) int {
		if c := b.StartedAt.Compare(a.StartedAt); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
	return runs
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
