package traces

import (
	"context"
	"io"
	"slices"
	"sync"
	"time"
)

// Recording is a trace being written: the single place that numbers a run's events. Emit stores
// each event once, encoded in a log that holds no pointers (see eventLog), which subscribers read
// from where they are (see Subscription): it never waits for, copies to or drops a subscriber.
// All methods are safe for concurrent use.
type Recording struct {
	now func() time.Time

	mu      sync.Mutex
	trace   Trace // its Events stay empty: the events are in events
	events  logWriter
	ends    []int64 // the seq each ended part of the run ends at: its run.finished (a loaded trace: its last event)
	ended   bool
	doneCh  chan struct{} // closed by Finish; Resume makes a new one
	resumed resumedPart   // how a resumed part joins the run (see resumed.go)
	news    chan struct{} // nil, or made by a reader about to wait and closed by the next event or end

	// While gated, subscriptions read no further than committed, the last seq its store has
	// committed (see Gate): a viewer never sees what a crash could lose.
	gated     bool
	committed int64

	forkedFrom *ForkOrigin // the fork's origin, stamped on run.started (see ForkOf)
}

// NewRecording starts recording run on agents (which it copies). The run's status is set to
// running.
func NewRecording(run Run, agents []Agent) *Recording {
	run.Status = StatusRunning
	if run.StartedAt.IsZero() {
		run.StartedAt = time.Now().UTC()
	}
	return &Recording{
		now:    func() time.Time { return time.Now().UTC() },
		trace:  Trace{Run: run, Agents: cloneAgents(agents)},
		doneCh: make(chan struct{}),
	}
}

// NewRecordingOf returns a recording of t that has ended: a trace read from a file, to be shown
// like any finished run. It keeps t's events, seq numbers included, and copies its agents. A
// trace saved while its run was still going on is recorded as canceled, with an error saying so,
// so that no reader waits for events that will never come.
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
		now:    func() time.Time { return time.Now().UTC() },
		trace:  Trace{Run: run, Agents: cloneAgents(t.Agents)},
		ended:  true,
		doneCh: make(chan struct{}),
	}
	for i := range t.Events {
		e := t.Events[i]
		e.Time = e.Time.Round(0)
		rec.events.add(&e)
	}
	for i := range t.Events {
		if e := t.Events[i]; e.Kind == KindRunStarted && e.Run != nil && e.Run.ForkedFrom != nil {
			rec.forkedFrom = e.Run.ForkedFrom
			break
		}
	}
	rec.ends = []int64{int64(rec.events.n)}
	close(rec.doneCh)
	return rec
}

// ForkOf says that the run is a fork of o: its run.started records forked_from. Call it before
// the run starts.
func (r *Recording) ForkOf(o ForkOrigin) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.forkedFrom = &o
}

// ForkedFrom returns where the run was forked from, nil for a run that is no fork.
func (r *Recording) ForkedFrom() *ForkOrigin {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.forkedFrom
}

// ID returns the run's id.
func (r *Recording) ID() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.trace.Run.ID
}

// Len returns how many events the recording holds, committed or not: its newest event's seq. A
// reader about to take them all in can make room for them at once.
func (r *Recording) Len() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return int64(r.events.n)
}

// Emit numbers e, stamps it when it has no time, appends it and wakes the subscribers waiting
// for it. It returns the event as recorded: its time without a monotonic clock reading, which
// no reader sees. After Finish (until Resume), Emit drops e and returns it with Seq 0.
// The recording keeps a copy of e, encoded (see eventLog), and nothing e points to: the caller may
// reuse e's payloads once Emit returns.
func (r *Recording) Emit(e Event) Event {
	r.Record(&e)
	return e
}

// Record is Emit for an event the caller hands over by pointer: it numbers and stamps *e in
// place and keeps none of e itself (what it points to is read, and kept as Emit keeps it), so an
// event built on the caller's stack reaches the log without being copied on the way.
func (r *Recording) Record(e *Event) {
	r.mu.Lock()
	// Most events (a tool call's three) are of a shape emitLocked has nothing to do for but
	// number and stamp: those are written in one pass (see logWriter.addUsual).
	if r.ended || !r.events.addUsual(e) {
		r.emitLocked(e)
	} else if r.news != nil {
		r.wakeLocked()
	}
	r.mu.Unlock()
}

// RecordWithMessage is Record for e followed at once by a message event of e's time, agent and
// run path that carries m (a tool call's end, then its result's message), and returns the
// message event's seq (0 when it recorded nothing: after Finish). Both are recorded in one
// critical section, the second written right after the first without its checks again. e is
// numbered and stamped in place, as Record does; nothing of it or m is kept.
func (r *Recording) RecordWithMessage(e *Event, m *Message) int64 {
	r.mu.Lock()
	var seq int64
	written := !r.ended && r.events.addUsual(e)
	if written && r.events.addMessageAfter(e.Time.UnixNano(), m) { // in range: addUsual wrote it
		seq = e.Seq + 1
	} else {
		seq = r.recordWithMessageLocked(e, m, written)
	}
	if r.news != nil {
		r.wakeLocked()
	}
	r.mu.Unlock()
	return seq
}

// RecordTool records a tool call's event at the UTC time of Unix nanoseconds at, by agent at path,
// carrying tc: its tool.started, or, when ended, its tool.finished, as Record records such an
// Event; withResult, the message event of its time and actor that carries tc's result follows at
// once, as RecordWithMessage records it (a tool call's end, then its result's message: a Message
// of role "tool" with tc's result as its content, tc's call id and name). It returns the seq of
// the last event recorded (0 when it recorded nothing: after Finish). Most of a run's events are
// often tool calls': the usual way writes them into the log with neither an Event nor the
// result's Message built, and its time as it is handed (see logWriter.writeUsual). Nothing of tc
// is kept. res, when not nil, is set to where tc was written, for the model input that holds an
// end's result (see RecordExtending): none when nothing was recorded.
func (r *Recording) RecordTool(at int64, ended bool, agent string, path []string, tc *ToolCall, withResult bool, res *ToolResult) int64 {
	code := byte(7) // KindToolStarted's, as addUsual tells them
	if ended {
		code = 8 // KindToolFinished's
	}
	r.mu.Lock()
	var seq int64
	if !r.ended && at >= minUTCNanos && at < maxUTCNanos {
		seq = r.events.writeUsual(at, code, agent, path, tc, nil)
	}
	switch {
	case seq != 0 && !withResult:
	case seq != 0 && r.events.addMessageAfter(at, nil):
		seq++
	default:
		seq = r.recordToolLocked(time.Unix(0, at).UTC(), ended, agent, path, tc, withResult, seq != 0)
	}
	if res != nil {
		*res = r.events.tool
	}
	if r.news != nil {
		r.wakeLocked()
	}
	r.mu.Unlock()
	return seq
}

// RecordMessages records a message event for each of ms, in order, at the UTC time of Unix
// nanoseconds at, by agent at path, as Record records such Events, and returns the last one's seq
// (0 when it recorded nothing: after Finish). The usual way writes them with no Event built, as
// RecordTool writes a tool call's events, the second and later after the first without its
// checks again. of holds an entry for each of ms: a message that is, in its very strings, the
// result of the tool call recorded at of[i] (see RecordTool; nil when not known), or else of the
// one recorded last, is written as where that result is. Nothing of ms or of is kept.
func (r *Recording) RecordMessages(at int64, agent string, path []string, ms []Message, of []*ToolResult) int64 {
	r.mu.Lock()
	var seq int64
	usual := !r.ended && at >= minUTCNanos && at < maxUTCNanos
	for i := range ms {
		r.events.resultOf = of[i]
		switch {
		case usual && i == 0:
			seq = r.events.writeUsual(at, 9, agent, path, nil, &ms[i]) // 9: KindMessage's, as addUsual tells them
			usual = seq != 0
		case usual && r.events.addMessageAfter(at, &ms[i]):
			seq++
		default:
			usual = false
		}
		if !usual {
			seq = r.recordMessageLocked(time.Unix(0, at).UTC(), agent, path, &ms[i])
		}
	}
	r.events.resultOf = nil
	if r.news != nil {
		r.wakeLocked()
	}
	r.mu.Unlock()
	return seq
}

// recordMessageLocked is RecordMessages for events of any shape, as Record records them. Apart, so
// that the usual way's frame holds no Event.
//
//go:noinline
func (r *Recording) recordMessageLocked(t time.Time, agent string, path []string, m *Message) int64 {
	e := Event{Time: t, Kind: KindMessage, Agent: agent, RunPath: path, Message: m}
	r.emitLocked(&e)
	return e.Seq
}

// recordToolLocked is RecordTool for events of any shape, as Record and RecordWithMessage record
// them; written says the first was written already (only withResult). Apart, so that the usual
// way's frame holds no Event.
//
//go:noinline
func (r *Recording) recordToolLocked(t time.Time, ended bool, agent string, path []string, tc *ToolCall, withResult, written bool) int64 {
	e := Event{Time: t, Kind: KindToolStarted, Agent: agent, RunPath: path, Tool: tc}
	if ended {
		e.Kind = KindToolFinished
	}
	if !withResult { // not written: RecordTool writes no other
		r.emitLocked(&e)
		return e.Seq
	}
	return r.recordWithMessageLocked(&e, &Message{Role: "tool", Content: tc.Result, ToolCallID: tc.CallID, ToolName: tc.Name}, written)
}

// recordWithMessageLocked is RecordWithMessage for events of any shape: e, unless written
// already, then the message event. Apart, so that the usual way's frame holds no Event.
//
//go:noinline
func (r *Recording) recordWithMessageLocked(e *Event, m *Message, written bool) int64 {
	if !written {
		r.emitLocked(e)
	}
	msg := Event{Time: e.Time, Kind: KindMessage, Agent: e.Agent, RunPath: e.RunPath, Message: m}
	r.emitLocked(&msg)
	return msg.Seq
}

// RecordExtending is Record for an event whose model input is the first keep messages (keep > 0)
// of the input of event from, this agent's latest input recorded, followed by e.Model.Input: a
// recorder that follows a conversation hands only what it added, and no array of the whole.
// Recorded, the event is exactly as if its input had been handed whole. It records nothing and
// reports false when event from's input is not the agent's latest in the log, or is shorter than
// keep (the run ended and was resumed since, say): the caller then records the input whole.
// results are where the ends of the tool calls the agent ran since were written (see
// RecordTool), in the order they ended: an added message that is one of their results is written
// as where that result is. Nothing of results is kept.
func (r *Recording) RecordExtending(e *Event, from int64, keep int, results []ToolResult) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.ended && (e.Model == nil || !r.events.inputs.extendable(e.Agent, from, keep)) {
		return false
	}
	r.events.extend, r.events.results = InputRef{From: from, Keep: keep}, results
	r.emitLocked(e)
	r.events.extend, r.events.results = InputRef{}, nil
	return true
}

// emitLocked is Emit for a caller that holds r.mu; it numbers and stamps *e in place.
func (r *Recording) emitLocked(e *Event) {
	if r.ended {
		e.Seq = 0
		return
	}
	e.Seq = int64(r.events.n + 1)
	r.joinEvent(e)
	if e.Time.IsZero() {
		e.Time = r.now()
	}
	e.Time = e.Time.Round(0)
	if e.Kind == KindRunStarted && r.forkedFrom != nil && e.Run != nil && e.Run.ForkedFrom == nil {
		mark := *e.Run
		mark.ForkedFrom = r.forkedFrom
		e.Run = &mark
	}
	if e.Kind == KindRunStarted {
		// A run recorded elsewhere (an app's) started when its app says, by the app's clock, as
		// it ends: its duration is the app's, not the time the server took to hear of it.
		r.trace.Run.StartedAt = e.Time
	}
	r.events.add(e)
	r.wakeLocked()
}

// wakeLocked wakes the readers waiting for news. The caller holds r.mu.
func (r *Recording) wakeLocked() {
	if r.news != nil {
		close(r.news)
		r.news = nil
	}
}

// Finish records run.finished with status (a final status) and errMsg, which ends every
// subscription made before it once read, and makes later Emits no-ops. Only the first call has
// an effect, until Resume.
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
	r.ends = append(r.ends, int64(r.events.n))
	r.events.ended()
	close(r.doneCh)
}

// Resume reopens a run that ended interrupted, so that the rest of it is recorded in the same
// trace: the status is running again, EndedAt and Error are cleared, Emit records again, Done
// returns a new channel, and new subscriptions follow the run live. Subscriptions made before it
// ended still end at its run.finished. The caller emits a resumed event next, so that the trace
// stays valid (see Validate). It fails with CodeConflict when the run is not one that ended
// interrupted.
//
// The resumed part joins the run as told in resumed.go: its model call ids m1, m2... go on from
// the run's, and the agents it puts are merged into the run's tree.
func (r *Recording) Resume() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.reopenLocked(); err != nil {
		return err
	}
	r.startResumedPart()
	return nil
}

// Reopen is Resume for a recording that copies a run recorded elsewhere, such as a run another
// server records in a shared store: the resumed part comes already joined to the run, its model
// call ids and agents as the run has them, so they are recorded as they are.
func (r *Recording) Reopen() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reopenLocked()
}

// reopenLocked makes a run that ended interrupted running again. The caller holds r.mu.
func (r *Recording) reopenLocked() error {
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
// discover the tree while the run goes on. After Resume it merges a into the agent of its name
// instead (see Resume). The recording keeps a copy of a.
func (r *Recording) PutAgent(a Agent) {
	a.Tools = slices.Clone(a.Tools)
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range r.trace.Agents {
		if r.trace.Agents[i].Name == a.Name {
			if r.resumed.joining {
				a = joinAgent(r.trace.Agents[i], a, r.trace.Agents)
			}
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

// Snapshot returns a copy of the trace so far: the run, the agents and the events are the
// caller's. Their strings and session values are read where the recording keeps them, and must
// be treated as read-only.
func (r *Recording) Snapshot() Trace {
	r.mu.Lock()
	t := Trace{Run: r.runLocked(), Agents: cloneAgents(r.trace.Agents)}
	log, locs := r.events.eventLog, r.events.locs
	r.mu.Unlock()
	t.Events = log.all(locs)
	return t
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

// Subscribe returns a reader of the events with Seq > after (the start when after <= 0), from the
// first one to the run.finished that ends the run as it goes on now (as it ended, when it has
// ended). It holds nothing in the recording: a subscriber that stops reading costs the run nothing
// and needs no cancelling. While the recording is gated (see Gate), it reads each event once its
// writer has committed it, so that what a reader has seen survives a crash.
func (r *Recording) Subscribe(after int64) *Subscription {
	return r.subscribe(after, false)
}

// SubscribeUncommitted is Subscribe for the writer of a gated recording: it reads events as they
// are recorded, past the gate.
func (r *Recording) SubscribeUncommitted(after int64) *Subscription {
	return r.subscribe(after, true)
}

func (r *Recording) subscribe(after int64, uncommitted bool) *Subscription {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := &Subscription{rec: r, pos: max(after, 0), end: len(r.ends), uncommitted: uncommitted}
	if r.ended {
		s.end-- // the end already recorded
	}
	return s
}

// Subscription is one reader of a recording's events, in order, each once, however far behind the
// run it falls: the recording keeps every event. Use it from one goroutine at a time.
type Subscription struct {
	rec    *Recording
	pos    int64 // the seq read last, or the after it started from
	end    int   // the index in rec.ends of the end it stops at, once recorded
	reader *logReader

	uncommitted bool // reads past what the store has committed
}

// Read copies into p the events after the one read last, in order, as many as are recorded and
// fit, and returns how many. When there is none yet, it waits for the next one, for the run's end,
// or for ctx to end. Once the event that ends the subscription's run has been read, it returns 0
// and io.EOF (again on every call); when ctx ends first, 0 and ctx.Err(). Events recorded already
// are returned even when ctx has ended. The events are the caller's, but their strings and
// session values are read where the recording keeps them, and must be treated as read-only.
func (s *Subscription) Read(ctx context.Context, p []Event) (int, error) {
	for {
		n, news, err := s.take(p, true)
		if news == nil {
			return n, err
		}
		select {
		case <-news:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
}

// Skip moves s on past the events through seq after without reading them, unless it has read so
// far already: its next read starts after them. What its reader decoded of the events before
// stays known, so that reading a run's events here and there in seq order costs what the inputs
// they extend (which a reader decodes too) take once, not at each read.
func (s *Subscription) Skip(after int64) {
	s.pos = max(s.pos, after)
}

// Poll is Read without the wait: when no event is recorded yet, it returns 0 and nil.
func (s *Subscription) Poll(p []Event) (int, error) {
	n, _, err := s.take(p, false)
	return n, err
}

// take copies into p what Read returns now; when there is nothing yet and wait is set, it
// returns instead the channel the next Emit or the run's end closes.
func (s *Subscription) take(p []Event, wait bool) (int, <-chan struct{}, error) {
	if len(p) == 0 {
		return 0, nil, nil
	}
	r := s.rec
	r.mu.Lock()
	limit, over := int64(r.events.n), false
	if r.gated && !s.uncommitted {
		limit = min(limit, r.committed)
	}
	if s.end < len(r.ends) {
		limit = min(limit, r.ends[s.end])
		over = s.pos >= r.ends[s.end]
	}
	if s.pos < limit {
		// The events up to limit are never written again: decode them after unlocking, from the
		// log as it stands now, so that a long batch does not hold up Emit.
		log, locs := r.events.eventLog, r.events.locs
		r.mu.Unlock()
		if s.reader == nil {
			s.reader = newLogReader()
		}
		n := s.reader.read(&log, locs, p, int(s.pos), int(limit))
		s.pos += int64(n)
		return n, nil, nil
	}
	defer r.mu.Unlock()
	switch {
	case over:
		return 0, nil, io.EOF
	case !wait:
		return 0, nil, nil
	}
	if r.news == nil {
		r.news = make(chan struct{})
	}
	return 0, r.news, nil
}

// Gate makes subscriptions read only what a writer that makes the run durable (a store) has
// committed, through seq committed, from now on: the writer then reports each commit (Commit)
// until it ends (Ungate).
func (r *Recording) Gate(committed int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.gated, r.committed = true, committed
}

// Commit says the writer has committed the events through seq, and wakes the readers waiting
// for them.
func (r *Recording) Commit(seq int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.committed = max(r.committed, seq)
	r.wakeLocked()
}

// Ungate lets subscriptions read every event recorded again: the writer has ended, having
// written the run, or having failed (the run goes on in memory only, and its readers with it).
func (r *Recording) Ungate() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.gated = false
	r.wakeLocked()
}
