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
	trace  Trace // its Events stay empty: the events are in events
	events eventLog
	subs   []*Subscription // live ones, in subscription order
	ended  bool
	doneCh chan struct{} // closed by Finish; Resume makes a new one
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
		doneCh: make(chan struct{}),
	}
}

// NewRecordingOf returns a recording of t that has ended: a trace read from a file, to be shown
// like any finished run. It keeps t's events, seq numbers included, and copies its agents. A
// trace saved while its run was still going on is recorded as canceled, with an error saying so,
// so that no reader waits for events that will never come. The events' payloads are shared with
// t: the caller must not modify them.
func NewRecordingOf(t Trace) *Recording {
	run := t.Run
	if !run.Status.Ended() {
		run.Status = StatusCanceled
		run.Error = "the trace was saved while the run was still going on; it ends there"
	}
	if run.EndedAt == nil {
		end := run.StartedAt
		if n := len(t.Events); n > 0 {
			end = t.Events[n-1].Time
		}
		run.EndedAt = &end
	}
	rec := &Recording{
		queue:  DefaultQueue,
		now:    func() time.Time { return time.Now().UTC() },
		trace:  Trace{Run: run, Agents: cloneAgents(t.Agents)},
		ended:  true,
		doneCh: make(chan struct{}),
	}
	for i := range t.Events {
		rec.events.add(&t.Events[i])
	}
	close(rec.doneCh)
	return rec
}

// ID returns the run's id.
func (r *Recording) ID() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.trace.Run.ID
}

// Emit numbers e, stamps it when it has no time, appends it and hands it to every subscriber.
// It returns the event as recorded. After Finish (until Resume), Emit drops e and returns it with
// Seq 0.
// The recording keeps e as given: its payloads and RunPath are shared with every subscriber and
// snapshot, so the caller must not modify them after Emit.
func (r *Recording) Emit(e Event) Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.emitLocked(&e)
	return e
}

// emitLocked is Emit for a caller that holds r.mu; it numbers and stamps *e in place.
func (r *Recording) emitLocked(e *Event) {
	if r.ended {
		e.Seq = 0
		return
	}
	e.Seq = int64(r.events.n + 1)
	if e.Time.IsZero() {
		e.Time = r.now()
	}
	r.events.add(e)
	kept := r.subs[:0]
	for _, s := range r.subs {
		if e.Seq <= s.after {
			kept = append(kept, s)
			continue
		}
		select {
		case s.ch <- *e:
			kept = append(kept, s)
		default:
			// The subscriber is a full queue behind: drop it rather than wait for it. It still
			// reads everything queued so far, the last of which is the previous event.
			s.drop(e.Seq - 1)
		}
	}
	clear(r.subs[len(kept):])
	r.subs = kept
}

// Finish records run.finished with status (a final status) and errMsg, closes every subscription
// after its last event, and makes later Emits no-ops. Only the first call has an effect, until
// Resume.
func (r *Recording) Finish(status Status, errMsg string) {
	r.FinishAt(time.Time{}, status, errMsg)
}

// FinishAt is Finish with run.finished stamped at (now when at is zero), for a run recorded
// elsewhere whose end has a time of its own.
func (r *Recording) FinishAt(at time.Time, status Status, errMsg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ended {
		return
	}
	if at.IsZero() {
		at = r.now()
	}
	// One critical section: no other Emit or Finish can slip in after run.finished.
	r.emitLocked(&Event{Time: at, Kind: KindRunFinished, Run: &RunMark{Status: status, Error: errMsg}})
	r.trace.Run.Status, r.trace.Run.Error, r.trace.Run.EndedAt = status, errMsg, &at
	r.ended = true
	for _, s := range r.subs {
		close(s.ch)
	}
	r.subs = nil
	close(r.doneCh)
}

// Resume reopens a run that ended interrupted, so that the rest of it is recorded in the same
// trace: the status is running again, EndedAt and Error are cleared, Emit records again, Done
// returns a new channel, and new subscriptions follow the run live. Subscriptions closed when it
// ended stay closed. The caller emits a resumed event next, so that the trace stays valid (see
// Validate). It fails with CodeConflict when the run is not one that ended interrupted.
func (r *Recording) Resume() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if st := r.trace.Run.Status; !r.ended || st != StatusInterrupted {
		return Errorf(CodeConflict, "run %s is %s: only a run that ended interrupted can be resumed", r.trace.Run.ID, st)
	}
	r.ended = false
	r.trace.Run.Status, r.trace.Run.Error, r.trace.Run.EndedAt = StatusRunning, "", nil
	r.doneCh = make(chan struct{})
	return nil
}

// Done is closed when the run has finished. After Resume it returns a new channel, closed when
// the resumed run finishes.
func (r *Recording) Done() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.doneCh
}

// PutAgent adds a to the agent tree, or replaces the agent of the same name: for recorders that
// discover the tree while the run goes on. The recording keeps a copy of a.
func (r *Recording) PutAgent(a Agent) {
	a.Tools = slices.Clone(a.Tools)
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range r.trace.Agents {
		if r.trace.Agents[i].Name == a.Name {
			r.trace.Agents[i] = a
			return
		}
	}
	r.trace.Agents = append(r.trace.Agents, a)
}

// Agents returns a copy of the agent tree as it stands: for a reader that follows the events
// through a subscription and the tree beside them.
func (r *Recording) Agents() []Agent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return cloneAgents(r.trace.Agents)
}

// Snapshot returns a copy of the trace so far: the run, the agents and the event list are the
// caller's to change. The events' payloads and run paths are shared with the recording and must
// be treated as read-only.
func (r *Recording) Snapshot() Trace {
	r.mu.Lock()
	defer r.mu.Unlock()
	return Trace{Run: r.runLocked(), Agents: cloneAgents(r.trace.Agents), Events: r.events.since(0)}
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
	backlog := max(0, r.events.n-int(after))
	// The backlog goes in whole; the queue bounds only how far behind the live run one may fall.
	s := &Subscription{rec: r, after: after, ch: make(chan Event, backlog+r.queue)}
	r.events.each(int(after), func(e Event) { s.ch <- e })
	if r.ended {
		close(s.ch)
		return s
	}
	r.subs = append(r.subs, s)
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
	if i := slices.Index(s.rec.subs, s); i >= 0 {
		s.rec.subs = slices.Delete(s.rec.subs, i, i+1)
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

// eventChunk is how many events one chunk of an eventLog holds: about 48 kB.
const eventChunk = 256

// eventLog holds a run's events in fixed-size chunks, so that recording one never copies the
// events before it, as appending to one growing slice does at every doubling.
type eventLog struct {
	chunks [][]Event
	n      int
}

func (l *eventLog) add(e *Event) {
	if l.n%eventChunk == 0 {
		l.chunks = append(l.chunks, make([]Event, 0, eventChunk))
	}
	last := len(l.chunks) - 1
	l.chunks[last] = append(l.chunks[last], *e)
	l.n++
}

// each calls f with every event after the first skip, in order.
func (l *eventLog) each(skip int, f func(Event)) {
	for c := skip / eventChunk; c < len(l.chunks) && skip < l.n; c++ {
		for _, e := range l.chunks[c][skip%eventChunk:] {
			f(e)
		}
		skip = (c + 1) * eventChunk
	}
}

// since returns a new slice of the events after the first skip.
func (l *eventLog) since(skip int) []Event {
	if skip >= l.n {
		return nil
	}
	out := make([]Event, 0, l.n-max(0, skip))
	l.each(max(0, skip), func(e Event) { out = append(out, e) })
	return out
}
