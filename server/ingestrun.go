package server

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/baton-dev/baton/traces"
)

// ingestion keeps the runs that apps stream into the server while their sessions go on: one
// session per create call, until the app posts run.finished, stops posting for the timeout, or the
// server shuts down. Each session has one watcher goroutine that ends with it.
type ingestion struct {
	ctx     context.Context // the server's: when it ends, every session ends
	broker  *traces.Broker
	timeout time.Duration

	wg     sync.WaitGroup // one per session's watcher
	mu     sync.Mutex
	runs   map[string]*ingestRun // the open sessions by run id; guarded by mu
	closed bool                  // no new sessions once set; guarded by mu

	// export is Config.Export, handed each run as it starts or resumes; nil for none.
	export func(*traces.Recording)
}

func newIngestion(ctx context.Context, broker *traces.Broker, timeout time.Duration) *ingestion {
	return &ingestion{ctx: ctx, broker: broker, timeout: timeout, runs: make(map[string]*ingestRun)}
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
}

// start opens a session: on the interrupted run whose last interrupt is req.Resumes, reopened
// (resumed is true then), or else on a new running run registered in the broker at once.
func (in *ingestion) start(req ingestStart) (rec *traces.Recording, resumed bool, err error) {
	in.endStopped(req.Resumes)
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.closed || in.ctx.Err() != nil {
		return nil, false, traces.Errorf(traces.CodeConflict, "the server is shutting down; no new runs")
	}
	if req.Resumes != "" {
		if rec = in.resume(req.Resumes); rec != nil {
			for _, a := range req.Agents {
				rec.PutAgent(a)
			}
			in.open(rec, req.Resumes)
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
	in.open(rec, "")
	return rec, false, nil
}

// endStopped ends, as interrupted at its last event, the session still open on a run whose last
// interrupt is id (none when id is ""): the resume of that interrupt proves the run stopped there,
// though its end has not come. An app that exits right after its last event may leave its run's
// end unsent, and another process resume it at once; the resume then goes on in the same run
// (see resume), not in a run of its own. It does so at once: the resuming app may exit as soon as
// its own part ends. (Were the first app still sending the run's tail, it would be refused.)
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

// endIfStopped ends the session, interrupted at its last event, when it is open and its run's
// last interrupt is id.
func (r *ingestRun) endIfStopped(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.over && r.stoppedAt == id {
		r.endLocked(r.lastAt, traces.StatusInterrupted, "")
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

// open registers a session on rec, which resumes the interrupt resumes when that is not empty, and
// starts its watcher. The caller holds in.mu.
func (in *ingestion) open(rec *traces.Recording, resumes string) {
	run := &ingestRun{in: in, rec: rec, resumes: resumes, next: 1, dec: traces.NewEventDecoder(), last: time.Now(), ended: make(chan struct{}), poke: make(chan struct{}, 1)}
	in.runs[rec.ID()] = run
	if in.export != nil {
		in.export(rec)
	}
	in.wg.Add(1)
	go in.watch(run)
}

// session returns the open session of run id. It fails with CodeNotFound for an unknown run and
// CodeConflict for a run no app is streaming (it ended, or the server runs it itself).
func (in *ingestion) session(id string) (*ingestRun, error) {
	in.mu.Lock()
	run, ok := in.runs[id]
	in.mu.Unlock()
	if ok {
		return run, nil
	}
	rec, err := in.broker.Get(id)
	if err != nil {
		return nil, err
	}
	if rec.Run().Status == traces.StatusRunning {
		return nil, traces.Errorf(traces.CodeConflict,
			"run %s is not streamed by an app: Baton runs it itself; start a new run with POST /api/ingest", id)
	}
	return nil, endedError(id)
}

func endedError(id string) error {
	return traces.Errorf(traces.CodeConflict, "run %s has ended; start a new run with POST /api/ingest", id)
}

// watch is a session's goroutine: it ends the session when the app goes quiet for the timeout or
// the server shuts down, and returns as soon as the session ends.
func (in *ingestion) watch(run *ingestRun) {
	defer in.wg.Done()
	t := time.NewTimer(in.timeout)
	defer t.Stop()
	for {
		select {
		case <-run.ended:
			return
		case <-in.ctx.Done():
			run.end(traces.StatusCanceled, "Baton shut down while the app was sending this run")
			return
		case <-t.C:
		case <-run.poke: // the app said how the run ends: a shorter quiet suffices
		}
		wait := run.expire(in.timeout)
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

// ingestRun is one session: the app numbers its events 1, 2, 3... and the server re-emits them
// into rec, which numbers them its own way. Posts to one session are serialized by mu.
type ingestRun struct {
	in  *ingestion
	rec *traces.Recording
	// resumes is the interrupt the session resumes its run from, or "" for a new run. A resumed
	// run's first event must be resumed.
	resumes string
	ended   chan struct{} // closed when the session ends

	mu   sync.Mutex
	next int64 // the seq the app's next event must have
	// dec reads the app's events: those in the compact form refer to earlier ones of the session.
	dec  *traces.EventDecoder
	last time.Time // when the app last posted
	over bool      // the session has ended
	// ending is how the app said the run ends should nothing follow: posted at the run's last
	// synchronous moment, so that an app that exits at once still ends its run right.
	ending *traces.RunMark
	poke   chan struct{} // wakes the watcher when ending is set
	// stoppedAt is the id of the last interrupt the app posted, and lastAt the time of its last
	// event: a resume of that interrupt ends the session then (see endStopped).
	stoppedAt string
	lastAt    time.Time
}

// endingGrace is how long a run whose app said how it ends may stay quiet before it is ended
// that way: the app then has either exited or is about to post its real end, within
// milliseconds, and it heartbeats every second while it holds that mark.
const endingGrace = 3 * time.Second

// expire ends the session as interrupted when the app has not posted for timeout, and returns 0;
// otherwise it returns how long until that would be the case.
func (r *ingestRun) expire(timeout time.Duration) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ending != nil {
		timeout = min(timeout, endingGrace)
	}
	if idle := time.Since(r.last); idle < timeout {
		return timeout - idle
	}
	if r.ending != nil {
		r.endLocked(time.Time{}, r.ending.Status, r.ending.Error)
		return 0
	}
	r.endLocked(time.Time{}, traces.StatusInterrupted,
		fmt.Sprintf("the app stopped sending events: nothing for %s (it exited or lost its connection)", timeout))
	return 0
}

// end ends the session, finishing the run with status and errMsg, unless it has ended already.
func (r *ingestRun) end(status traces.Status, errMsg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.endLocked(time.Time{}, status, errMsg)
}

// endLocked is end for a caller that holds r.mu; at stamps run.finished (now when zero).
func (r *ingestRun) endLocked(at time.Time, status traces.Status, errMsg string) {
	if r.over {
		return
	}
	r.over = true
	if r.resumes != "" && r.next == 1 {
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
	}
	r.in.mu.Unlock()
}
