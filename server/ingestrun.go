package server

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/internal/live"
	"github.com/baton-dev/baton/traces"
)

// ingestion keeps the runs that apps stream into the server while their sessions go on: one
// session per create call, until the app posts run.finished, stops posting for the timeout, or the
// server shuts down. Each session has one watcher goroutine that ends with it. Sessions that
// ended are remembered for a while (see endedSessions), so that an app that was away, not gone,
// goes on from where the server stands.
type ingestion struct {
	ctx     context.Context // the server's: when it ends, every session ends
	broker  *live.Broker
	timeout time.Duration

	wg     sync.WaitGroup // one per session's watcher
	mu     sync.Mutex
	runs   map[string]*ingestRun // the open sessions by run id; guarded by mu
	keys   map[string]*ingestRun // the open sessions by the key the app gave its run; guarded by mu
	ended  endedSessions         // sessions that ended lately; guarded by mu
	closed bool                  // no new sessions once set; guarded by mu

	// The bounds on sessions and the places taken (see reserve); guarded by mu.
	maxSessions, maxPerClient int
	sessions                  int            // places taken: open sessions, and starts opening one
	perClient                 map[string]int // places taken by client
	// Who may join a run (see claimInterrupt); guarded by mu.
	resumed  map[string]*ingestRun // the open sessions that resume an interrupt, by its id
	claims   map[string]struct{}   // interrupts a start is resuming
	starting map[string]struct{}   // the keys of the starts under way
	joining  map[string]struct{}   // runs a start is reopening, by id
	// debug holds the breakpoints of the open sessions whose app opted in, by run id (see
	// ingestdebug.go); guarded by mu.
	debug map[string]*appDebug

	// export is Config.Export, handed each run as it starts or resumes; nil for none.
	export func(*traces.Recording)
}

func newIngestion(ctx context.Context, broker *live.Broker, cfg Config) *ingestion {
	return &ingestion{ctx: ctx, broker: broker, timeout: cfg.IngestTimeout, runs: make(map[string]*ingestRun),
		keys: make(map[string]*ingestRun), ended: endedSessions{byRun: make(map[string]*ingestRun)},
		maxSessions: cfg.MaxIngestRuns, maxPerClient: cfg.MaxIngestRunsPerClient, perClient: make(map[string]int),
		resumed: make(map[string]*ingestRun), claims: make(map[string]struct{}), starting: make(map[string]struct{}), joining: make(map[string]struct{}),
		export: cfg.Export, debug: make(map[string]*appDebug)}
}

// session returns the session of run id: its open one, or one that ended lately, which its post
// decides about. It fails with CodeNotFound for an unknown run, with CodeConflict for a run no app
// is streaming (the server runs it itself), and with an ingestConflict saying the session ended
// for a run whose session the server does not know (it ended before the server started).
func (in *ingestion) session(id string) (*ingestRun, error) {
	in.mu.Lock()
	run, ok := in.runs[id]
	if !ok {
		run = in.ended.byRun[id]
	}
	in.mu.Unlock()
	if run != nil {
		return run, nil
	}
	rec, err := in.broker.Get(id)
	if err != nil {
		return nil, err
	}
	if rec.Run().Status == traces.StatusRunning {
		if stopped, err := in.broker.OwnerStopped(id); err != nil {
			return nil, err
		} else if stopped {
			return nil, &ingestConflict{ended: true, err: traces.Errorf(traces.CodeConflict, "run %s was recorded by another baton serve "+
				"sharing this database, which has stopped: go on with POST /api/ingest {\"continues\": %q} and the run's secret", id, id)}
		}
		return nil, in.notStreamedHere(id)
	}
	return nil, &ingestConflict{err: endedError(id), ended: true}
}

// elsewhereRetry is the Retry-After of a post of a run another server records: that server may
// have stopped by then, and this one take the run over (see continueRun).
const elsewhereRetry = time.Second

// notStreamedHere is the error of a post to running run id, which no session of this server's
// streams: another server sharing the database records it, or this one runs it itself.
func (in *ingestion) notStreamedHere(id string) error {
	if in.broker.Follows(id) {
		return &ingestRefused{status: http.StatusConflict, retry: elsewhereRetry, msg: fmt.Sprintf("run %s is recorded by another baton "+
			"serve sharing this database: post its events to the server that started it (behind a proxy, keep each app on one "+
			"server); should that server stop, this one takes the run over from the app's next post (Retry-After)", id)}
	}
	return traces.Errorf(traces.CodeConflict,
		"run %s is not streamed by an app: Baton runs it itself; start a new run with POST /api/ingest", id)
}

func endedError(id string) *traces.Error {
	return traces.Errorf(traces.CodeConflict, "run %s has ended; start a new run with POST /api/ingest", id)
}

// watch is a session's goroutine: it ends the session when the app goes quiet for the timeout or
// the server shuts down, and returns as soon as the session ends (ended closes).
func (in *ingestion) watch(run *ingestRun, ended <-chan struct{}) {
	defer in.wg.Done()
	t := time.NewTimer(in.timeout)
	defer t.Stop()
	for {
		select {
		case <-ended:
			return
		case <-in.ctx.Done():
			// Interrupted, not canceled: nobody canceled the run, and the app may go on with it
			// once Baton is back (see continueRun).
			run.end(endedByServer, traces.StatusInterrupted, "Baton shut down while the app was sending this run")
			return
		case <-t.C:
		case <-run.poke: // the app said how the run ends: a shorter quiet suffices
		}
		wait := run.expire(in.timeout, ended)
		if wait <= 0 {
			return
		}
		if !t.Stop() {
			select {
			case <-t.C:
			default:
			}
		}
		t.Reset(wait)
	}
}

// wait refuses new sessions and waits for every watcher to end; cancel the server's context first
// to end the sessions.
func (in *ingestion) wait() {
	in.mu.Lock()
	in.closed = true
	in.mu.Unlock()
	in.wg.Wait()
}

// sessionStart is what a session's first events may be.
type sessionStart int

const (
	startsRun    sessionStart = iota // a new run: run.started may come, first
	resumesRun                       // a run resumed from an interrupt: resumed comes first
	continuesRun                     // a run that goes on after the server lost its session: neither
	takesOverRun                     // a run that goes on here after the server recording it stopped: neither
)

// sessionEnd is how a session ended, which decides what a later post from its app gets.
type sessionEnd int

const (
	stillOpen sessionEnd = iota
	// endedByApp: the app posted run.finished. A later post is told where the session stood.
	endedByApp
	// endedQuiet: the app went quiet for the timeout and the run ended interrupted. A later post
	// reopens the session: the app was away, not gone (see ingestRun.reopenLocked).
	endedQuiet
	// endedByMark: the app went quiet holding an ending, and the run ended as it said. The app's
	// own run.finished, should it still come, is taken as said; anything else is refused.
	endedByMark
	// endedByServer: the server shut down. The app goes on with a new session once it is back.
	endedByServer
)

// ingestRun is one session: the app numbers its events 1, 2, 3... and the server re-emits them
// into rec, which numbers them its own way. Posts to one session are serialized by mu.
type ingestRun struct {
	in  *ingestion
	rec *traces.Recording
	// resumes is the interrupt the session resumes its run from, or "" (see start).
	resumes string
	start   sessionStart
	key     string // the app's own id of the run, or ""
	client  string // who opened it, whose place it holds while open (see reserve)
	secret  string // what every post to the session shows (see runSecretHeader)
	after   int64  // the run's seq before the session's first event: the app's event n is the run's after+n
	moved   bool   // the session took the run over from a server that stopped
	// heard is last as unix nanoseconds, for soonestExpiry, which holds in.mu, not mu.
	heard atomic.Int64

	mu    sync.Mutex
	ended chan struct{} // closed when the session ends; a new one when it reopens
	next  int64         // the seq the app's next event must have
	// dec reads the app's events: those in the compact form refer to earlier ones of the session.
	dec       *traces.EventDecoder
	last      time.Time  // when the app last posted, by the server's clock
	lastEvent time.Time  // the time of the app's latest event, by the app's clock
	over      sessionEnd // stillOpen, or how the session ended
	// ending is how the app said the run ends should nothing follow: posted at the end of what
	// may be the run's last agent, so that an app that exits at once still ends its run right.
	ending *ingestEnding
	poke   chan struct{} // wakes the watcher when ending is set
	// stoppedAt is the id of the last interrupt the app posted: a resume of it ends the session
	// (see endStopped).
	stoppedAt string
	// given are the breakpoints kept for the app's next runs that the start's answer gave the
	// app, once given (see givenAtStart): the app has them as version 1; guarded by in.mu.
	given      []agents.Breakpoint
	givenAsked bool
}

// endingGrace is how long a run whose app said how it ends may stay quiet before it is ended
// that way: the app then has either exited or is about to post its real end, within
// milliseconds, and it heartbeats every second while it holds that mark.
const endingGrace = 3 * time.Second

// expire ends the session when the app has not posted for timeout (endingGrace when it holds an
// ending), and returns 0; otherwise it returns how long until that would be the case. The run
// ends as the ending says, at its time, or else interrupted when the app was last heard from:
// the run's times are the app's, not those of the server's timer. It returns 0 at once when the
// watcher's stretch of the session, the one that closes ended, is over.
func (r *ingestRun) expire(timeout time.Duration, ended <-chan struct{}) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ended != ended {
		return 0 // it ended and reopened: its new watcher watches
	}
	if r.ending != nil {
		timeout = min(timeout, endingGrace)
	}
	if idle := time.Since(r.last); idle < timeout {
		return timeout - idle
	}
	if r.ending != nil {
		r.endAsSaidLocked()
		return 0
	}
	r.endLocked(endedQuiet, r.lastHeard(), traces.StatusInterrupted,
		fmt.Sprintf("the app stopped sending events: nothing for %s (it exited or lost its connection)", timeout))
	return 0
}

// endAsSaidLocked ends the session as the app's ending says: its tail, then run.finished at its
// time. The caller holds r.mu, and r.ending is set.
func (r *ingestRun) endAsSaidLocked() {
	e := r.ending
	at := e.Time
	if at.IsZero() { // an app that does not say when
		at = r.lastHeard()
	}
	for _, t := range e.Tail {
		r.rec.Emit(t)
	}
	r.endLocked(endedByMark, at, e.Status, e.Error)
}

// lastHeard is when the app was last heard from, and never before its latest event. The caller
// holds r.mu.
func (r *ingestRun) lastHeard() time.Time {
	return latest(r.last.UTC(), r.lastEvent)
}

func latest(a, b time.Time) time.Time {
	if a.Before(b) {
		return b
	}
	return a
}

// end ends the session as how says, finishing the run with status and errMsg, unless it has
// ended already.
func (r *ingestRun) end(how sessionEnd, status traces.Status, errMsg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.endLocked(how, time.Time{}, status, errMsg)
}

// endLocked is end for a caller that holds r.mu; at stamps run.finished (now when zero). The
// session is remembered among the ended ones.
func (r *ingestRun) endLocked(how sessionEnd, at time.Time, status traces.Status, errMsg string) {
	if r.over != stillOpen {
		return
	}
	r.over = how
	if how == endedByApp || how == endedByServer {
		r.dec = nil // no later post is read: let its table of inputs go
	}
	if r.start == resumesRun && r.next == 1 {
		// The run was reopened but the app sent nothing: record that it resumed, so the trace
		// reads as one valid story (only resumed may follow an interrupted run.finished).
		r.rec.Emit(traces.Event{Kind: traces.KindResumed,
			Interrupt: &traces.Interrupt{ID: r.resumes, Info: "the app resumed the run but sent no events"}})
	}
	r.rec.FinishAt(at, status, errMsg)
	close(r.ended)
	r.in.mu.Lock()
	if r.in.runs[r.rec.ID()] == r {
		delete(r.in.runs, r.rec.ID())
		delete(r.in.debug, r.rec.ID())
		r.in.ended.add(r)
		r.in.release(r.client)
	}
	if r.key != "" && r.in.keys[r.key] == r {
		delete(r.in.keys, r.key)
	}
	if r.resumes != "" && r.in.resumed[r.resumes] == r {
		// The trace holds the resumed event now (see above): resumedIn refuses a second resume.
		delete(r.in.resumed, r.resumes)
	}
	r.in.mu.Unlock()
}

// reopenedInfo says, in the resumed event that joins the two parts, why a run went on after the
// server had ended it as interrupted.
const reopenedInfo = "the app was heard from again: Baton had ended the run when it went quiet; the run goes on"

// reopenLocked opens the session again after the app went quiet and came back: the run, ended
// interrupted when the app was last heard from, goes on after a resumed event saying so, stamped
// at. The session keeps its numbering and decoder, so the app carries on as if nothing happened.
// It fails with an ingestConflict when the session was forgotten or its run taken up by another
// session, and with CodeUnavailable while the server shuts down. The caller holds r.mu.
func (r *ingestRun) reopenLocked(at time.Time) error {
	in, id := r.in, r.rec.ID()
	in.mu.Lock()
	_, claimed := in.joining[id]
	switch {
	case in.closed || in.ctx.Err() != nil:
		in.mu.Unlock()
		return errShuttingDown
	case in.ended.byRun[id] != r || claimed: // forgotten, or taken up by a continue
		in.mu.Unlock()
		r.over = endedByServer // this session is over for good
		return r.endedConflict()
	}
	if err := in.reserve(r.client); err != nil {
		in.mu.Unlock()
		return err
	}
	in.joining[id] = struct{}{}
	in.mu.Unlock()
	// Resume waits for the writer of the part before: with the run claimed, not holding in.mu.
	err := in.broker.Resume(r.rec)
	in.mu.Lock()
	defer in.mu.Unlock()
	delete(in.joining, id)
	if err != nil {
		in.release(r.client)
		return fmt.Errorf("reopen the session of run %s: %w", id, err)
	}
	r.rec.Emit(traces.Event{Time: at, Kind: traces.KindResumed, Interrupt: &traces.Interrupt{Info: reopenedInfo}})
	if in.closed || in.ctx.Err() != nil { // it shut down meanwhile
		in.release(r.client)
		r.rec.Finish(traces.StatusInterrupted, "Baton shut down while the app was sending this run")
		return errShuttingDown
	}
	in.ended.remove(id)
	r.over = stillOpen
	r.ended = make(chan struct{})
	in.runs[id] = r
	if r.key != "" {
		in.keys[r.key] = r
	}
	if r.resumes != "" && in.resumed[r.resumes] == nil {
		in.resumed[r.resumes] = r
	}
	if in.export != nil {
		in.export(r.rec)
	}
	in.wg.Add(1)
	go in.watch(r, r.ended)
	return nil
}

// endedConflict is the refusal of a post to a session that is over for good: it says where the
// session stood. The caller holds r.mu.
func (r *ingestRun) endedConflict() error {
	return &ingestConflict{err: endedError(r.rec.ID()), next: r.next, ended: true}
}

// endedKeep bounds how many ended sessions the server remembers, the latest ones: enough for the
// apps that come back after a stall, and little memory (a session holds its decoder's table of
// the inputs its run's events share).
const endedKeep = 256

// endedSessions remembers the sessions that ended lately, by run id, so that a post of an app
// that was away is answered with where its session stood, or reopens it (see sessionEnd).
type endedSessions struct {
	byRun map[string]*ingestRun
	order []string // run ids, the oldest ended first
}

func (e *endedSessions) add(r *ingestRun) {
	id := r.rec.ID()
	e.remove(id)
	e.byRun[id] = r
	e.order = append(e.order, id)
	if len(e.order) > endedKeep {
		delete(e.byRun, e.order[0])
		e.order = slices.Delete(e.order, 0, 1)
	}
}

func (e *endedSessions) remove(id string) {
	if _, ok := e.byRun[id]; !ok {
		return
	}
	delete(e.byRun, id)
	e.order = slices.DeleteFunc(e.order, func(o string) bool { return o == id })
}
