package record

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/baton-dev/baton/traces"
)

// Tuning of the stream to a Baton server.
const (
	maxBatch        = 512                    // events in one post
	heartbeatEvery  = 5 * time.Second        // an open run says it is alive at least this often
	endingHeartbeat = time.Second            // as often while the server holds its ending mark
	postTimeout     = 10 * time.Second       // one post, so a stalled server cannot hold a run forever
	endingWait      = 500 * time.Millisecond // at most, a run's end for its ending's delivery
	retryMin        = 250 * time.Millisecond
	retryMax        = 5 * time.Second
	// keptMax bounds the delivered events a run keeps to send again to a server that takes the
	// run over (see rewind), or its buffer when smaller: a server's events not yet written are
	// what came during its last commit or two, and kept events hold their payloads in memory.
	keptMax = 4096
)

// client streams runs to one Baton server (the ingestion protocol is in docs/api.md, the sending
// in ingest.go).
type client struct {
	url, token  string
	buffer      int
	http        *http.Client
	poll        *http.Client // the long polls for decisions at breakpoints (see remotedebug.go)
	log         *slog.Logger
	warned      atomic.Bool  // Baton was said to be unreachable
	warnedBusy  atomic.Bool  // Baton was said to be busy
	warnedHolds atomic.Bool  // a problem with breakpoints was said
	atStart     atomic.Int32 // what Baton gives runs at their start (see awaitStart)
	health      health

	senders sync.WaitGroup     // one per run being sent
	stop    context.Context    // done when Close gives up on what is left
	abandon context.CancelFunc // ends stop

	// What Close reports of the runs not delivered whole.
	refused atomic.Int64 // runs the server refused, and that were dropped
	dropped atomic.Int64 // events dropped because their run's buffer was full (its trace counts them)
	// waitsRunOut counts the run ends whose wait for delivery ran out, each finding a stall.
	waitsRunOut atomic.Int64
}

func newClient(cfg Config) *client {
	stop, abandon := context.WithCancel(context.Background())
	// One pool for the posts and the long polls, with room for a connection per run going on:
	// with the default two idle connections a host, each poll held open made the next post dial.
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.MaxIdleConnsPerHost = 64
	return &client{
		url:     strings.TrimSuffix(cfg.URL, "/"),
		token:   cfg.Token,
		buffer:  cfg.Buffer,
		http:    &http.Client{Timeout: postTimeout, Transport: transport},
		poll:    &http.Client{Timeout: holdPollTimeout, Transport: transport},
		log:     cfg.Logger,
		stop:    stop,
		abandon: abandon,
	}
}

// close waits until every run is delivered or ctx is done, then stops sending what is left. It
// fails when a run was not delivered whole: still being sent when ctx ended, refused by the
// server, or with events dropped because Baton was away for longer than the buffer lasts.
func (c *client) close(ctx context.Context) error {
	delivered := make(chan struct{})
	go func() {
		c.senders.Wait()
		close(delivered)
	}()
	var errs []error
	select {
	case <-delivered:
	case <-ctx.Done():
		errs = append(errs, fmt.Errorf("runs still being sent: %w", ctx.Err()))
	}
	c.abandon()
	<-delivered
	if n := c.refused.Load(); n > 0 {
		errs = append(errs, fmt.Errorf("%d runs refused by the server and dropped (see the log)", n))
	}
	if n := c.dropped.Load(); n > 0 {
		errs = append(errs, fmt.Errorf("%d events dropped while Baton was away (a run keeps at most %d waiting; its trace counts them)", n, c.buffer))
	}
	if len(errs) > 0 {
		return fmt.Errorf("baton: runs not delivered whole to %s: %w", c.url, errors.Join(errs...))
	}
	return nil
}

// run returns the sink of one run. Nothing is sent before its first event.
func (c *client) run(conversation string) *remoteRun {
	s := &remoteRun{c: c, conversation: conversation, key: rand.Text(), wake: make(chan struct{}, 1), senderDone: make(chan struct{}),
		opened: make(chan struct{}), holdWake: make(chan struct{}, 1)}
	s.debug = NewDebugger(nil, s.heldAt)
	s.debug.released = s.letGo
	s.fork = c.claimFork()
	return s
}

// unreachable says once that Baton cannot be reached.
func (c *client) unreachable(err error) {
	if c.warned.CompareAndSwap(false, true) {
		c.log.Warn("baton is unreachable; the app runs on and runs are sent when it answers (events beyond the buffer are dropped and counted)",
			"url", c.url, "error", err.Error())
	}
}

// awaitDelivery waits until delivered is closed or wait has passed, but not at all while Baton
// is known not to answer, and no longer once it is found so. A wait that runs out finds Baton
// stalled until it answers again, so that the ends of the client's other runs do not wait
// meanwhile: a stall costs the app one bounded wait, not one per run.
func (c *client) awaitDelivery(delivered <-chan struct{}, wait time.Duration) {
	answering, quiet := c.health.watch()
	if !answering || c.stop.Err() != nil { // or nothing is sent any more
		return
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-delivered:
	case <-quiet:
	case <-t.C:
		c.waitsRunOut.Add(1)
		c.health.lost()
	}
}

// health is what the client last found of Baton: answering, or not (stalled or down). It starts
// answering.
type health struct {
	mu    sync.Mutex
	quiet chan struct{} // closed while Baton is known not to answer; nil until first needed
}

// watch reports whether Baton is answering, with a channel closed once it is found not to.
func (h *health) watch() (answering bool, quiet <-chan struct{}) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.quiet == nil {
		h.quiet = make(chan struct{})
	}
	select {
	case <-h.quiet:
		return false, h.quiet
	default:
		return true, h.quiet
	}
}

// lost records that Baton did not answer: a post failed to reach it or to come back, or a
// run's end waited in vain.
func (h *health) lost() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.quiet == nil {
		h.quiet = make(chan struct{})
	}
	select {
	case <-h.quiet:
	default:
		close(h.quiet)
	}
}

// answered records that Baton answered a post, whatever it said.
func (h *health) answered() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.quiet == nil {
		return
	}
	select {
	case <-h.quiet:
		h.quiet = make(chan struct{})
	default:
	}
}

// remoteRun is a Sink that streams one run to the server. Emit, PutAgent and Finish only queue
// and never wait: one goroutine per run, started by the first event and ended with the run's
// last post, does the sending (see send).
type remoteRun struct {
	c            *client
	conversation string
	// key is the run's own id, sent with each start of a session: a start sent again because
	// its answer was lost gets the session the first one opened, not a second run.
	key  string
	wake chan struct{}

	mu sync.Mutex
	// events are queued and not yet delivered: numbered delivered+1, delivered+2... in the run.
	events    []traces.Event
	delivered int64 // events the server has taken
	// done are the last events delivered (see keep): the server that
	// took them may stop before it has written them, and the app then sends them again to the
	// server that takes its run over (see rewind).
	done     []traces.Event
	agents   []queuedAgent // queued tree changes, the latest of each agent
	changes  int           // tree changes so far, to tell a sent agent from a newer one
	seq      int64         // events queued so far
	lost     int64         // events dropped since the last one queued
	started  bool
	finished bool // no more events: run.finished is queued, or the server refused the run
	// ending is how the run ends should nothing follow (see Ending), sent with every post until
	// an event comes after it; endingWait, while not nil, is closed once a post delivered it
	// with the queue or it no longer stands.
	ending     *ingestEnding
	endingWait chan struct{}
	// senderDone is closed when the run's sender has ended (delivered, refused or given up);
	// after is the senderDone of the part before, when this run resumes one sent from this
	// process (see follow).
	senderDone chan struct{}
	after      <-chan struct{}

	// Breakpoints set on the run in Baton, for an app that opted in (see remotedebug.go).
	debug    *Debugger     // never armed unless the app opted in
	opted    atomic.Bool   // the app opted in: one poller asks Baton for breakpoints and decisions
	opened   chan struct{} // closed once the run has a session on the server
	session  [2]string     // the run's id on the server and its session's secret; guarded by mu
	holdWake chan struct{} // the run was held or let go: the poller tells Baton at once
	holdID   int64         // the number of the run's latest hold; guarded by mu
	holdStop *Stop         // where the run is held, nil when it is not; guarded by mu
	given    []Breakpoint  // the breakpoints the start's answer gave, version 1; guarded by mu

	// fork is the fork the run carries out, nil for none (see fork.go).
	fork *forking
}

// Emit queues e, or counts it lost when the queue is full: the next event that fits is preceded
// by a lost event saying how many were dropped there.
func (s *remoteRun) Emit(e traces.Event) traces.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.emit(e)
}

// emit is Emit for a caller that holds s.mu.
func (s *remoteRun) emit(e traces.Event) traces.Event {
	if s.finished {
		return e
	}
	if e.Time.IsZero() {
		e.Time = time.Now().UTC()
	}
	if len(s.events)+btoi(s.lost > 0) >= s.c.buffer {
		s.lost++
		s.c.dropped.Add(1)
		return e
	}
	if s.lost > 0 {
		s.queue(traces.Event{Time: e.Time, Kind: traces.KindLost, Lost: &traces.Lost{Count: s.lost}})
		s.lost = 0
	}
	if s.ending != nil { // the run went on
		s.ending = nil
		s.releaseEnding()
	}
	return s.queue(e)
}

// EmitForeseen queues e, the first event of the ending's tail, and keeps rest as the ending: its
// waiter waits on for the delivery of both.
func (s *remoteRun) EmitForeseen(e traces.Event, rest ending) traces.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	held, waiter := s.ending != nil, s.endingWait
	s.endingWait = nil // emit lets the waiter of an ending the run went past go
	e = s.emit(e)
	if held && !s.finished {
		s.ending, s.endingWait = wireEnding(rest), waiter
	} else if waiter != nil {
		close(waiter)
	}
	return e
}

// Ending sends everything queued with how the run ends should nothing follow, and returns how to
// wait until it is delivered: at most endingWait, and not at all while Baton is known to be
// stalled or down (see client.awaitDelivery). The recorder calls it at the end of what may be the
// run's last agent, the last moment the app cannot yet have seen its run end, so that an app that
// exits at once still has its run delivered and ended right.
func (s *remoteRun) Ending(end ending) (await func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.finished || !s.started {
		return func() {}
	}
	s.releaseEnding() // this mark stands for the earlier one: only its own waiter waits on
	s.ending = wireEnding(end)
	delivered := make(chan struct{})
	s.endingWait = delivered
	s.signal()
	return func() { s.c.awaitDelivery(delivered, endingWait) }
}

// wireEnding is an ending as posted.
func wireEnding(e ending) *ingestEnding {
	return &ingestEnding{Status: e.Status, Error: e.Error, Time: e.Time, Tail: e.Tail}
}

// letEndingGo is releaseEnding for a caller that does not hold s.mu.
func (s *remoteRun) letEndingGo() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.releaseEnding()
}

// releaseEnding lets the waiter of the current ending go on. Callers hold s.mu.
func (s *remoteRun) releaseEnding() {
	if s.endingWait != nil {
		close(s.endingWait)
		s.endingWait = nil
	}
}

// queue numbers e, appends it and wakes the sender, starting it with the first event. Callers
// hold s.mu.
func (s *remoteRun) queue(e traces.Event) traces.Event {
	s.seq++
	e.Seq = s.seq
	s.events = append(s.events, e)
	if !s.started {
		s.started = true
		s.c.senders.Add(1)
		go func() {
			defer s.c.senders.Done()
			defer close(s.senderDone)
			s.send(e)
		}()
	}
	s.signal()
	return e
}

func (s *remoteRun) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// PutAgent queues a change of the agent tree.
func (s *remoteRun) PutAgent(a traces.Agent) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.finished {
		return
	}
	// The latest state of each agent is all the server needs.
	s.changes++
	q := queuedAgent{Agent: a, change: s.changes}
	if i := slices.IndexFunc(s.agents, func(q queuedAgent) bool { return q.Name == a.Name }); i >= 0 {
		s.agents[i] = q
	} else {
		s.agents = append(s.agents, q)
	}
	s.signal()
}

// FinishAt queues run.finished, past the buffer's bound if need be: the end is never dropped.
func (s *remoteRun) FinishAt(at time.Time, status traces.Status, errMsg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.finished {
		return
	}
	e := traces.Event{Time: at, Kind: traces.KindRunFinished, Run: &traces.RunMark{Status: status, Error: errMsg}}
	if s.lost > 0 {
		s.queue(traces.Event{Time: e.Time, Kind: traces.KindLost, Lost: &traces.Lost{Count: s.lost}})
		s.lost = 0
	}
	s.queue(e)
	s.finished = true
}

// queuedAgent is a tree change waiting to be sent.
type queuedAgent struct {
	traces.Agent
	change int
}

// outbox is what waits to be sent: at most maxBatch events, the first ones of the queue; the
// tree changes; and the ending, when the events are all that is queued.
type outbox struct {
	events []traces.Event
	agents []queuedAgent
	ending *ingestEnding
}

// pending returns what waits to be sent. The queue keeps it until sent says it was delivered.
func (s *remoteRun) pending() outbox {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := min(len(s.events), maxBatch)
	o := outbox{events: s.events[:n:n], agents: slices.Clone(s.agents)}
	if n == len(s.events) {
		o.ending = s.ending
	}
	return o
}

// sent drops what a post delivered from the queue: its events, and its agents unless they
// changed again meanwhile; it lets a waiting Ending go on when its mark went out.
func (s *remoteRun) sent(o outbox) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keep(o.events)
	s.events = s.events[len(o.events):]
	s.delivered += int64(len(o.events))
	s.agents = slices.DeleteFunc(s.agents, func(q queuedAgent) bool {
		return slices.ContainsFunc(o.agents, func(d queuedAgent) bool { return d.change == q.change })
	})
	if o.ending != nil && o.ending == s.ending {
		s.releaseEnding()
	}
}

// taken drops from the queue the events up to seq (the run's numbering), which the server says
// it has, although their post's answer was lost. It returns how many it dropped, and fails when
// the server's count is not one the queue can agree with.
func (s *remoteRun) taken(seq int64) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := seq - s.delivered
	if n < 0 || n > int64(len(s.events)) {
		return 0, &refusal{msg: fmt.Sprintf("the server holds the run's events up to %d, the app delivered %d and holds %d more",
			seq, s.delivered, len(s.events))}
	}
	s.keep(s.events[:n])
	s.events = s.events[n:]
	s.delivered = seq
	return int(n), nil
}

// keep adds delivered events to done, which keeps the last keptMax of them (the buffer's size
// when smaller) at least, and at most twice that. Callers hold s.mu.
func (s *remoteRun) keep(delivered []traces.Event) {
	n := min(s.c.buffer, keptMax)
	s.done = append(s.done, delivered...)
	if len(s.done) > 2*n {
		s.done = slices.Clone(s.done[len(s.done)-n:])
	}
}

// rewind puts the delivered events after seq (the run's numbering) back at the head of the
// queue: the server that took them stopped before writing them, and the one that took the run
// over has the run up to seq. Those no longer kept (see keep) are counted dropped;
// it returns how many.
func (s *remoteRun) rewind(seq int64) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.delivered - seq
	if n <= 0 {
		return 0
	}
	lost := max(n-int64(len(s.done)), 0)
	n -= lost
	back := s.done[len(s.done)-int(n):]
	s.events = append(slices.Clone(back), s.events...)
	s.done = s.done[:len(s.done)-int(n)]
	s.delivered -= n
	s.c.dropped.Add(lost)
	return lost
}

// whole reports whether the server has the whole run: its end and every event before it.
func (s *remoteRun) whole() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.finished && len(s.events) == 0
}

// firstUndelivered returns the run's seq of the first event the server does not have.
func (s *remoteRun) firstUndelivered() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.delivered + 1
}

// drop discards the run after the server refused it.
func (s *remoteRun) drop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.finished = true
	s.events, s.agents, s.done = nil, nil, nil
	s.releaseEnding()
}
