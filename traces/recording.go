package traces

import (
	"slices"
	"sync"
	"time"
)

// DefaultQueue is how many events a subscriber may fall behind the live run before it is dropped.
const DefaultQueue = 1024

// Recording is a trace being written: the single place that numbers a run's events. Emit appends
// and fans out without ever blocking on a subscriber. All methods are safe for concurrent use.
type Recording struct {
	queue int
	now   func() time.Time

	mu     sync.Mutex
	trace  Trace
	subs   map[*Subscription]struct{}
	ended  bool
	doneCh chan struct{} // closed by Finish
}

// NewRecording starts recording run on agents (which it copies). queue bounds how far a
// subscriber may fall behind (DefaultQueue when 0). The run's status is set to running.
func NewRecording(run Run, agents []Agent, queue int) *Recording {
	if queue <= 0 {
		queue = DefaultQueue
	}
	run.Status = StatusRunning
	if run.StartedAt.IsZero() {
		run.StartedAt = time.Now().UTC()
	}
	return &Recording{
		queue:  queue,
		now:    func() time.Time { return time.Now().UTC() },
		trace:  Trace{Run: run, Agents: cloneAgents(agents)},
		subs:   make(map[*Subscription]struct{}),
		doneCh: make(chan struct{}),
	}
}

// ID returns the run's id.
func (r *Recording) ID() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.trace.Run.ID
}

// Emit numbers e, stamps it when it has no time, appends it and hands it to every subscriber.
// It returns the event as recorded. After Finish, Emit drops e and returns it with Seq 0.
// The recording keeps e as given: its payloads and RunPath are shared with every subscriber and
// snapshot, so the caller must not modify them after Emit.
func (r *Recording) Emit(e Event) Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.emitLocked(e)
}

// emitLocked is Emit for a caller that holds r.mu.
func (r *Recording) emitLocked(e Event) Event {
	if r.ended {
		e.Seq = 0
		return e
	}
	e.Seq = int64(len(r.trace.Events) + 1)
	if e.Time.IsZero() {
		e.Time = r.now()
	}
	r.trace.Events = append(r.trace.Events, e)
	for s := range r.subs {
		if e.Seq <= s.after {
			continue
		}
		select {
		case s.ch <- e:
		default:
			// The subscriber is a full queue behind: drop it rather than wait for it. It still
			// reads everything queued so far, the last of which is the previous event.
			s.drop(e.Seq - 1)
			delete(r.subs, s)
		}
	}
	return e
}

// PutAgent adds a to the agent tree, or replaces the agent of the same name: a recorder that
// infers the tree from the run learns agents as they act. It is a no-op after Finish.
func (r *Recording) PutAgent(a Agent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ended {
		return
	}
	a.Tools = slices.Clone(a.Tools)
	for i := range r.trace.Agents {
		if r.trace.Agents[i].Name == a.Name {
			r.trace.Agents[i] = a
			return
		}
	}
	r.trace.Agents = append(r.trace.Agents, a)
}

// Finish records run.finished with status (a final status) and errMsg, closes every subscription
// after its last event, and makes later Emits no-ops. Only the first call has an effect.
func (r *Recording) Finish(status Status, errMsg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ended {
		return
	}
	// One critical section: no other Emit or Finish can slip in after run.finished.
	end := r.now()
	r.emitLocked(Event{Time: end, Kind: KindRunFinished, Run: &RunMark{Status: status, Error: errMsg}})
	r.trace.Run.Status, r.trace.Run.Error, r.trace.Run.EndedAt = status, errMsg, &end
	r.ended = true
	for s := range r.subs {
		close(s.ch)
		delete(r.subs, s)
	}
	close(r.doneCh)
}

// Done is closed when the run has finished.
func (r *Recording) Done() <-chan struct{} { return r.doneCh }

// Snapshot returns a copy of the trace so far: the run, the agents and the event list are the
// caller's to change. The events' payloads and run paths are shared with the recording and must
// be treated as read-only.
func (r *Recording) Snapshot() Trace {
	r.mu.Lock()
	defer r.mu.Unlock()
	return Trace{Run: r.runLocked(), Agents: cloneAgents(r.trace.Agents), Events: slices.Clone(r.trace.Events)}
}

// Run returns a copy of the run's metadata.
func (r *Recording) Run() Run {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.runLocked()
}

// runLocked copies the run's metadata, EndedAt included, for a caller that holds r.mu.
func (r *Recording) runLocked() Run {
	run := r.trace.Run
	if run.EndedAt != nil {
		end := *run.EndedAt
		run.EndedAt = &end
	}
	return run
}

// cloneAgents copies agents and their tool lists.
func cloneAgents(agents []Agent) []Agent {
	out := slices.Clone(agents)
	for i := range out {
		out[i].Tools = slices.Clone(out[i].Tools)
	}
	return out
}

// Subscribe returns a subscription that delivers every event with Seq > after, in order, then
// follows the run live. Its channel closes when the run finishes (Err is nil then) or when the
// subscriber falls more than the queue behind (Err says so). Call Cancel when done reading.
func (r *Recording) Subscribe(after int64) *Subscription {
	r.mu.Lock()
	defer r.mu.Unlock()
	if after < 0 {
		after = 0
	}
	var backlog []Event
	if after < int64(len(r.trace.Events)) {
		backlog = r.trace.Events[after:]
	}
	// The backlog goes in whole; the queue bounds only how far behind the live run one may fall.
	s := &Subscription{rec: r, after: after, ch: make(chan Event, len(backlog)+r.queue)}
	for _, e := range backlog {
		s.ch <- e
	}
	if r.ended {
		close(s.ch)
		return s
	}
	r.subs[s] = struct{}{}
	return s
}

// Subscription is one reader of a recording. Read C until it closes, then check Err.
type Subscription struct {
	rec   *Recording
	after int64 // live events up to this seq are not for this subscriber
	ch    chan Event

	mu  sync.Mutex
	err error
}

// C delivers the events in sequence order. It is closed by the recording, never by the reader.
func (s *Subscription) C() <-chan Event { return s.ch }

// Err returns why C closed early: a *SlowError when the subscriber fell behind, nil when the run
// finished or the subscription was cancelled.
func (s *Subscription) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Cancel stops delivery and closes C. It is safe to call more than once and after the run ended.
func (s *Subscription) Cancel() {
	s.rec.mu.Lock()
	defer s.rec.mu.Unlock()
	if _, ok := s.rec.subs[s]; ok {
		delete(s.rec.subs, s)
		close(s.ch)
	}
}

// drop closes the subscription because it fell behind; lastQueued is the last seq it was given
// (it may still be in the queue: C delivers it before closing). The caller holds the recording's
// lock.
func (s *Subscription) drop(lastQueued int64) {
	s.mu.Lock()
	s.err = &SlowError{Resume: lastQueued}
	s.mu.Unlock()
	close(s.ch)
}

// SlowError says a subscriber fell too far behind and was dropped. Its C delivers every event up
// to Resume and then closes; the subscriber may subscribe again with after=Resume to get the rest
// with no gap and no duplicate.
type SlowError struct{ Resume int64 }

func (e *SlowError) Error() string {
	return "subscriber fell too far behind the run and was dropped; resume after event " + itoa(e.Resume)
}
