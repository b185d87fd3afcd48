package live

import (
	"github.com/baton-dev/baton/traces"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// MemoryStore is a Store that keeps its runs in the process's memory, gone when it exits: what
// NewBroker lists and searches its runs with. It keeps the runs' events in chunks that never
// move, and lists and searches them as a database would, under the same contract (the tests of
// internal/storetest hold every Store to it). It is safe for concurrent use.
type MemoryStore struct {
	keep int

	mu   sync.RWMutex
	runs []*memRun           // oldest added first
	byID map[string]*memRun  // the same runs
	last int64               // the key of the run added last
	next map[string][]string // see SetNextBreakpoints
}

// memRun is a run as a MemoryStore keeps it.
type memRun struct {
	key    int64 // the order it was added in, from 1: a list's cursor
	run    traces.Run
	tally  Tally
	agents []traces.Agent
	events [][]traces.Event // in order, in chunks of growing capacity, each filled before the next
	n      int              // events in all
	hash   []byte           // see SetSessionHash
}

var _ Store = (*MemoryStore)(nil)

// NewMemoryStore returns an empty store that keeps up to keep runs (DefaultKeep when 0; negative
// keeps all): creating one more forgets the oldest added runs that have ended.
func NewMemoryStore(keep int) *MemoryStore {
	if keep == 0 {
		keep = DefaultKeep
	}
	return &MemoryStore{keep: keep, byID: make(map[string]*memRun)}
}

// Create records a new run with its agents and events so far. It fails with CodeConflict when
// run.ID is taken. Then it forgets the oldest added runs that have ended beyond what it keeps.
func (s *MemoryStore) Create(run traces.Run, tally Tally, agents []traces.Agent, events []traces.Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.byID[run.ID]; ok {
		return traces.Errorf(traces.CodeConflict, "run %q already exists", run.ID)
	}
	s.last++
	tally.Usage = slices.Clone(tally.Usage)
	r := &memRun{key: s.last, run: copyRun(run), tally: tally, agents: cloneAgents(agents)}
	r.add(events)
	s.runs = append(s.runs, r)
	s.byID[run.ID] = r
	s.retain()
	return nil
}

// retain forgets the oldest added runs that have ended beyond the newest s.keep. The caller
// holds s.mu.
func (s *MemoryStore) retain() {
	if s.keep < 0 || len(s.runs) <= s.keep {
		return
	}
	old := len(s.runs) - s.keep
	s.runs = slices.DeleteFunc(s.runs, func(r *memRun) bool {
		if old--; old < 0 || !r.run.Status.Ended() {
			return false
		}
		delete(s.byID, r.run.ID)
		return true
	})
}

// Save records a created run's metadata and tally as of events, its next events, and its agents
// when agents is not nil. It fails with CodeNotFound for a run it does not hold.
func (s *MemoryStore) Save(run traces.Run, tally Tally, agents []traces.Agent, events []traces.Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.byID[run.ID]
	if !ok {
		return notFound(run.ID)
	}
	tally.Usage = slices.Clone(tally.Usage)
	r.run, r.tally = copyRun(run), tally
	if agents != nil {
		r.agents = cloneAgents(agents)
	}
	r.add(events)
	return nil
}

// memChunk is the most events one chunk of a run holds: a long run's events take no more than a
// chunk's worth of room beyond what they need, and are never copied to grow.
const memChunk = 1024

// add copies events to the end of r's.
func (r *memRun) add(events []traces.Event) {
	for len(events) > 0 {
		i := len(r.events) - 1
		if i < 0 || len(r.events[i]) == cap(r.events[i]) {
			// A chunk as large as the events so far: a short run takes little room.
			r.events = append(r.events, make([]traces.Event, 0, min(memChunk, max(16, r.n, len(events)))))
			i++
		}
		k := min(cap(r.events[i])-len(r.events[i]), len(events))
		r.events[i] = append(r.events[i], events[:k]...)
		r.n += k
		events = events[k:]
	}
}

// Load returns the trace of run id as saved so far: the run, the agents and the event list are
// the caller's; the events' payloads are shared, read-only.
func (s *MemoryStore) Load(id string) (traces.Trace, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	r, ok := s.byID[id]
	if !ok {
		return traces.Trace{}, notFound(id)
	}
	events := make([]traces.Event, 0, r.n)
	for _, c := range r.events {
		events = append(events, c...)
	}
	return traces.Trace{Run: copyRun(r.run), Agents: cloneAgents(r.agents), Events: events}, nil
}

// List returns one page of run summaries, the most recently added first. Its cursor is the key
// of the page's last run. A search reads each run's input and events, case folded, until one
// holds the text.
func (s *MemoryStore) List(q RunQuery) (RunPage, error) {
	if err := q.Check(); err != nil {
		return RunPage{}, err
	}
	var below int64 // keys below this one; 0: any
	if q.After != "" {
		k, err := strconv.ParseInt(q.After, 10, 64)
		if err != nil || k < 1 {
			return RunPage{}, BadCursor(q.After)
		}
		below = k
	}
	text := strings.ToLower(q.Text)
	page := RunPage{Runs: []RunSummary{}}
	s.mu.RLock()
	defer s.mu.RUnlock()
	var last int64 // the key of the page's last run
	for i := len(s.runs) - 1; i >= 0; i-- {
		r := s.runs[i]
		if (below > 0 && r.key >= below) || (q.Flow != "" && r.run.Flow != q.Flow) ||
			(q.Status != "" && r.run.Status != q.Status) ||
			(q.Conversation != "" && r.run.Conversation != q.Conversation) || (q.Findings && r.tally.Findings == 0) ||
			(text != "" && !r.contains(text)) {
			continue
		}
		if len(page.Runs) == q.Limit {
			page.Next = strconv.FormatInt(last, 10)
			break
		}
		page.Runs, last = append(page.Runs, r.summary()), r.key
	}
	return page, nil
}

// contains reports whether r's input or the SearchText of any of its events contains text, which
// is lower case.
func (r *memRun) contains(text string) bool {
	if strings.Contains(strings.ToLower(r.run.Input), text) {
		return true
	}
	for _, c := range r.events {
		for i := range c {
			if strings.Contains(strings.ToLower(SearchText(c[i])), text) {
				return true
			}
		}
	}
	return false
}

// summary returns r as a list shows it.
func (r *memRun) summary() RunSummary {
	run := copyRun(r.run)
	run.Input = FirstLine(run.Input)
	// As a database returns it: in UTC, to the nanosecond, with no monotonic reading.
	run.StartedAt = time.Unix(0, run.StartedAt.UnixNano()).UTC()
	if run.EndedAt != nil {
		end := time.Unix(0, run.EndedAt.UnixNano()).UTC()
		run.EndedAt = &end
	}
	return RunSummary{Run: run, Agents: r.tally.Agents, Transfers: r.tally.Transfers, Tokens: r.tally.Tokens, Events: r.tally.Events,
		Findings: r.tally.Findings, Usage: slices.Clone(r.tally.Usage)}
}

// Delete forgets run id and its events. It fails with CodeNotFound for a run it does not hold.
func (s *MemoryStore) Delete(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.byID[id]; !ok {
		return notFound(id)
	}
	delete(s.byID, id)
	s.runs = slices.DeleteFunc(s.runs, func(r *memRun) bool { return r.run.ID == id })
	return nil
}

// Interrupted returns the id of the newest run that ended interrupted at interruptID, or "".
func (s *MemoryStore) Interrupted(interruptID string) (string, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for i := len(s.runs) - 1; i >= 0; i-- {
		if r := s.runs[i]; r.run.Status == traces.StatusInterrupted && r.tally.LastInterrupt == interruptID {
			return r.run.ID, nil
		}
	}
	return "", nil
}

// SetSessionHash records hash as what proves who may go on writing run id.
func (s *MemoryStore) SetSessionHash(id string, hash []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.byID[id]
	if !ok {
		return notFound(id)
	}
	r.hash = slices.Clone(hash)
	return nil
}

// SessionHash returns what SetSessionHash recorded for run id last, or nil.
func (s *MemoryStore) SessionHash(id string) ([]byte, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	r, ok := s.byID[id]
	if !ok {
		return nil, notFound(id)
	}
	return slices.Clone(r.hash), nil
}

// SetNextBreakpoints keeps points for the next runs of flow; none forgets them.
func (s *MemoryStore) SetNextBreakpoints(flow string, points []string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(points) == 0 {
		delete(s.next, flow)
		return nil
	}
	if s.next == nil {
		s.next = make(map[string][]string)
	}
	s.next[flow] = slices.Clone(points)
	return nil
}

// NextBreakpoints returns what SetNextBreakpoints kept for flow last, nil for none.
func (s *MemoryStore) NextBreakpoints(flow string) ([]string, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return slices.Clone(s.next[flow]), nil
}

// copyRun copies run, EndedAt included.
func copyRun(run traces.Run) traces.Run {
	if run.EndedAt != nil {
		end := *run.EndedAt
		run.EndedAt = &end
	}
	return run
}

// notFound is the error for an unknown run id.
func notFound(id string) error { return traces.Errorf(traces.CodeNotFound, "run %q not found", id) }

// cloneAgents copies agents and their tool lists: the store keeps nothing its caller may change.
func cloneAgents(agents []traces.Agent) []traces.Agent {
	out := slices.Clone(agents)
	for i := range out {
		out[i].Tools = slices.Clone(out[i].Tools)
	}
	return out
}
