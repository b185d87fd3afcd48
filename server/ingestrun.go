package server

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/baton-dev/baton/traces"
)

// ingestion keeps the runs that apps stream into the server while their sessions go on: one
// session per create call, until the app posts run.finished, stops posting for the timeout, or the
// server shuts down. Each session has one watcher goroutine that ends with it. Sessions that
// ended are remembered for a while (see endedSessions), so that an app that was away, not gone,
// goes on from where the server stands.
type ingestion struct {
	ctx     context.Context // the server's: when it ends, every session ends
	broker  *traces.Broker
	timeout time.Duration

	wg     sync.WaitGroup // one per session's watcher
	mu     sync.Mutex
	runs   map[string]*ingestRun // the open sessions by run id; guarded by mu
	keys   map[string]*ingestRun // the open sessions by the key the app gave its run; guarded by mu
	ended  endedSessions         // sessions that ended lately; guarded by mu
	closed bool                  // no new sessions once set; guarded by mu

	// export is Config.Export, handed each run as it starts or resumes; nil for none.
	export func(*traces.Recording)
}

func newIngestion(ctx context.Context, broker *traces.Broker, timeout time.Duration) *ingestion {
	return &ingestion{ctx: ctx, broker: broker, timeout: timeout, runs: make(map[string]*ingestRun),
		keys: make(map[string]*ingestRun), ended: endedSessions{byRun: make(map[string]*ingestRun)}}
}

// ingestStart is what an app says of a run when it starts streaming it.
type ingestStart struct {
	Run struct {
		Flow         string `json:"flow"`
		Input        string `json:"input"`
		Model        string `json:"model"`
		Conversation string `json:"conversation"`
	} `json:"run"`
	Agents []traces.Agent `json:"agents"`
	// Resumes is the id of the interrupt the run resumes, when it does.
	Resumes string `json:"resumes"`
	// Continues is the id of a run the app goes on sending after the server lost its session.
	Continues string `json:"continues"`
	// Key is the app's own id of the run, so that a start sent again because its answer was
	// lost gets the session the first one opened, not a second run.
	Key string `json:"key"`
}

// start opens a session: on the run req.Continues names (see continueRun), or on the
// interrupted run whose last interrupt is req.Resumes, reopened (reopened is true then), or else
// on a new running run registered in the broker at once. A start whose key has an open session
// gets that session again. A run still streamed whose last interrupt req.Resumes is, is ended
// first (see endStopped).
func (in *ingestion) start(req ingestStart) (rec *traces.Recording, reopened bool, err error) {
	in.endStopped(req.Resumes)
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.closed || in.ctx.Err() != nil {
		return nil, false, errShuttingDown
	}
	if r := in.keys[req.Key]; req.Key != "" && r != nil {
		return r.rec, r.start != startsRun, nil
	}
	switch {
	case req.Resumes != "" && req.Continues != "":
		return nil, false, traces.Errorf(traces.CodeInvalid, "a run either resumes an interrupt or continues a run, not both")
	case req.Continues != "":
		rec, err := in.continueRun(req.Continues, req.Key)
		if err != nil {
			return nil, false, err
		}
		putAgents(rec, req.Agents)
		return rec, true, nil
	case req.Resumes != "":
		if rec = in.resume(req.Resumes); rec != nil {
			putAgents(rec, req.Agents)
			in.open(rec, req.Resumes, resumesRun, req.Key)
			return rec, true, nil
		}
	}
	run := traces.Run{Flow: req.Run.Flow, Input: req.Run.Input, Model: req.Run.Model, Conversation: req.Run.Conversation}
	if run.Flow == "" {
		run.Flow = "app"
	}
	if run.Conversation == "" {
		// A resumption Baton has not seen the start of still belongs with what it resumes.
		run.Conversation = req.Resumes
	}
	rec, err = addFresh(in.broker, func(id string) *traces.Recording {
		run.ID = id
		return traces.NewRecording(run, req.Agents)
	})
	if err != nil {
		return nil, false, err
	}
	in.open(rec, "", startsRun, req.Key)
	return rec, false, nil
}

// endStopped ends the session still open on a run whose last interrupt is id (none when id is
// ""), posted or foreseen in the app's ending: the resume of that interrupt proves the run stopped
// there, though its end has not come. An app that exits right after its last event may leave its
// run's end unsent, and another process resume it at once; the resume then goes on in the same
// run (see resume), not in a run of its own. It does so at once, ending the run as the watcher
// would once the app went quiet: the resuming app may exit as soon as its own part ends. (An app
// still sending the first part would find its session over.)
func (in *ingestion) endStopped(id string) {
	if id == "" {
		return
	}
	in.mu.Lock()
	open := make([]*ingestRun, 0, len(in.runs))
	for _, r := range in.runs {
		open = append(open, r)
	}
	in.mu.Unlock()
	// A session's lock is taken before in.mu (see endLocked), so never while holding it.
	for _, r := range open {
		r.endIfStopped(id)
	}
}

// endIfStopped ends the session when it is open on a run whose last interrupt is id: as its
// ending says, or else interrupted at its last event.
func (r *ingestRun) endIfStopped(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.over != stillOpen || r.stoppedAt != id && !r.ending.foresees(id) {
		return
	}
	if r.ending != nil {
		r.endAsSaidLocked()
		return
	}
	at := r.lastEvent
	if at.IsZero() {
		at = r.lastHeard()
	}
	r.endLocked(endedByMark, at, traces.StatusInterrupted, "")
}

func putAgents(rec *traces.Recording, agents []traces.Agent) {
	for _, a := range agents {
		rec.PutAgent(a)
	}
}

// resume reopens the newest run that ended interrupted at interrupt id, or returns nil; with a
// store, also a run of an earlier process.
func (in *ingestion) resume(id string) *traces.Recording {
	rec, err := in.broker.Interrupted(id)
	if err != nil || rec == nil || in.broker.Resume(rec) != nil {
		return nil
	}
	return rec
}

// continuedInfo says, in the resumed event that joins the two parts, why a run went on after the
// server had ended it.
const continuedInfo = "the app came back: Baton had ended the run while it was not hearing from it (a stall, " +
	"a lost connection or a restart of Baton); the run goes on"

// continueRun reopens run id for an app whose session the server no longer has (it restarted,
// or forgot the session) while the app's run went on. The run must have ended interrupted, as
// the server ends a run it stops hearing from, and have no open session. A resumed event says
// why the run goes on, and the new session counts the app's events from 1. The caller holds
// in.mu.
func (in *ingestion) continueRun(id, key string) (*traces.Recording, error) {
	if _, open := in.runs[id]; open {
		return nil, traces.Errorf(traces.CodeConflict, "run %s has an open session: post its events to it", id)
	}
	rec, err := in.broker.Get(id)
	if err != nil {
		return nil, err
	}
	switch st := rec.Run().Status; st {
	case traces.StatusRunning:
		return nil, notStreamedError(id)
	case traces.StatusInterrupted:
	default:
		return nil, traces.Errorf(traces.CodeConflict, "run %s ended %s and cannot go on: only a run that ended interrupted does", id, st)
	}
	if err := in.broker.Resume(rec); err != nil {
		return nil, fmt.Errorf("continue run %s: %w", id, err)
	}
	rec.Emit(traces.Event{Kind: traces.KindResumed, Interrupt: &traces.Interrupt{Info: continuedInfo}})
	in.open(rec, "", continuesRun, key)
	return rec, nil
}

// open registers a new session on rec, which starts as start says (resuming the interrupt
// resumes when it does) for the app's run key ("" for none), and starts its watcher. The caller
// holds in.mu.
func (in *ingestion) open(rec *traces.Recording, resumes string, start sessionStart, key string) {
	run := &ingestRun{in: in, rec: rec, resumes: resumes, start: start, key: key, next: 1, dec: traces.NewEventDecoder(),
		last: time.Now(), ended: make(chan struct{}), poke: make(chan struct{}, 1)}
	in.ended.remove(rec.ID())
	in.runs[rec.ID()] = run
	if key != "" {
		in.keys[key] = run
	}
	if in.export != nil {
		in.export(rec)
	}
	in.wg.Add(1)
	go in.watch(run, run.ended)
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
		return nil, notStreamedError(id)
	}
	return nil, &ingestConflict{err: endedError(id), ended: true}
}

func notStreamedError(id string) error {
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
		r.in.ended.add(r)
	}
	if r.key != "" && r.in.keys[r.key] == r {
		delete(r.in.keys, r.key)
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
	defer in.mu.Unlock()
	if in.closed || in.ctx.Err() != nil {
		return errShuttingDown
	}
	if in.ended.byRun[id] != r {
		r.over = endedByServer // this session is over for good
		return r.endedConflict()
	}
	if err := in.broker.Resume(r.rec); err != nil {
		return fmt.Errorf("reopen the session of run %s: %w", id, err)
	}
	in.ended.remove(id)
	r.rec.Emit(traces.Event{Time: at, Kind: traces.KindResumed, Interrupt: &traces.Interrupt{Info: reopenedInfo}})
	r.over = stillOpen
	r.ended = make(chan struct{})
	in.runs[id] = r
	if r.key != "" {
		in.keys[r.key] = r
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
