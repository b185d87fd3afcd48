package traces

import (
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Broker holds the recordings of this process by run id: the in-memory source of live runs and
// their history. It is safe for concurrent use.
type Broker struct {
	mu   sync.RWMutex
	runs map[string]*Recording
}

// NewBroker returns an empty broker.
func NewBroker() *Broker { return &Broker{runs: make(map[string]*Recording)} }

// Add registers rec under its run id. It fails with CodeConflict when the id is taken.
func (b *Broker) Add(rec *Recording) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	id := rec.ID()
	if _, ok := b.runs[id]; ok {
		return Errorf(CodeConflict, "run %q already exists", id)
	}
	b.runs[id] = rec
	return nil
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
