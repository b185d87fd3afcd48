package server

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/traces"
)

// Breakpoints on the runs of apps that opted in (attach.Middleware): the app holds its run in its
// own process, and keeps a long poll open on POST /api/ingest/:id/hold, which tells it the
// breakpoints set on the run and the decision where it is held. The server keeps a mirror of the
// app's hold in an agents.Debugger, so that the routes, the page and Continue's checks are those
// of Baton's own runs.

// Tuning of the hold route.
const (
	holdRoute = "/api/ingest/:id/hold"
	// holdPollWait is how long a poll with nothing to answer stays open.
	holdPollWait = 25 * time.Second
	// appAckWait bounds how long setting an app's breakpoints waits for the app to have them.
	appAckWait = 2 * time.Second
	// appHoldWait bounds how long a continue waits for the app to report the hold its trace shows:
	// the paused event and the app's poll are two requests, either may come first.
	appHoldWait = 2 * time.Second
)

// runDebugger is what the breakpoint routes act on: the Debugger of a run going on here, or the
// mirror of an app's (appDebug).
type runDebugger interface {
	Breakpoints() []agents.Breakpoint
	SetBreakpoints([]agents.Breakpoint)
	Held() (agents.Stop, bool)
	Continue(agents.Resume) error
}

// debuggerOf returns the debugger of run id: a run going on here with breakpoints, or an app's
// run whose app opted in. It fails with CodeConflict saying why neither is.
func (s *Server) debuggerOf(id string) (runDebugger, error) {
	d, err := s.runs.debugger(id)
	if err == nil {
		return d, nil
	}
	if a, streamed, aerr := s.ingest.debugger(id); streamed {
		if aerr != nil {
			return nil, aerr
		}
		return a, nil
	}
	return nil, err
}

// holdPoll is the body of POST /api/ingest/:id/hold: the version of the breakpoints the app has,
// and the hold it is at (its number, 0 for none, and where).
type holdPoll struct {
	Version int64        `json:"version"`
	Hold    int64        `json:"hold"`
	Stop    *agents.Stop `json:"stop"`
}

// holdAnswer is the answer to a holdPoll: the breakpoints when their version is not the app's,
// and the decision at the app's hold when one came.
type holdAnswer struct {
	Version     int64          `json:"version"`
	Breakpoints []string       `json:"breakpoints,omitempty"`
	Hold        int64          `json:"hold,omitempty"`
	Resume      *agents.Resume `json:"resume,omitempty"`
}

// pollHold serves POST /api/ingest/:id/hold {"version", "hold", "stop"} for the app streaming run
// id, with its session's secret: the app says it opted in, which breakpoints it has, and where
// its run is held. The answer, 200 {"version", "breakpoints", "hold", "resume"}, comes as soon as
// there is something to say (breakpoints set since, a decision at the hold), or after
// holdPollWait with nothing. 403 without the secret, 409 once the session has ended.
func (s *Server) pollHold(c echo.Context) error {
	run, err := s.ingest.session(c.Param("id"))
	if err != nil {
		var conflict *ingestConflict
		if errors.As(err, &conflict) {
			return conflict.err
		}
		return err
	}
	if !sameSecret(c.Request().Header.Get(runSecretHeader), run.secret) {
		return forbidden(run.rec.ID()).(*ingestRefused).write(c)
	}
	var req holdPoll
	if err := decodeIngest(c, &req); err != nil {
		return err
	}
	if err := req.check(); err != nil {
		return err
	}
	run.mu.Lock()
	ended, over := run.ended, run.over
	run.mu.Unlock()
	if over != stillOpen {
		return endedError(run.rec.ID())
	}
	a := s.ingest.optIn(run.rec.ID())
	ctx, cancel := context.WithTimeout(c.Request().Context(), holdPollWait)
	defer cancel()
	return c.JSON(http.StatusOK, a.poll(ctx, req, ended))
}

// check reports what is wrong with a poll.
func (p *holdPoll) check() error {
	switch {
	case p.Version < 0 || p.Hold < 0:
		return traces.Errorf(traces.CodeInvalid, "version and hold count from 0")
	case (p.Hold > 0) != (p.Stop != nil):
		return traces.Errorf(traces.CodeInvalid, "hold and stop go together: give both when the run is held, neither when not")
	case p.Stop != nil && p.Stop.Break != traces.BreakStep && !slices.Contains(traces.Breaks, p.Stop.Break):
		return traces.Errorf(traces.CodeInvalid, "stop.break %q is not a kind of breakpoint (%s, or %s)", clip(p.Stop.Break, 40), strings.Join(traces.Breaks, ", "), traces.BreakStep)
	}
	return nil
}

// appDebug is the server's side of an app's breakpoints: a mirror of its run's debugger.
type appDebug struct {
	// Debugger holds the breakpoints set, the stop the app reported it is held at, and checks
	// each Continue against it.
	*agents.Debugger

	mu      sync.Mutex
	version int64         // of the breakpoints, bumped each time they are set
	acked   int64         // the version the app last said it has
	changed chan struct{} // closed, and replaced, at each change of the above or of the hold
	hold    int64         // the app's number of the hold mirrored, 0 for none
	answer  <-chan agents.Resume
	decided *agents.Resume // the decision at hold, once taken from answer
}

func newAppDebug() *appDebug {
	return &appDebug{Debugger: agents.NewDebugger(nil, nil), changed: make(chan struct{})}
}

// changedLocked wakes everyone waiting on a. Callers hold a.mu.
func (a *appDebug) changedLocked() {
	close(a.changed)
	a.changed = make(chan struct{})
}

// SetBreakpoints sets the breakpoints and waits, at most appAckWait, until the app has them.
func (a *appDebug) SetBreakpoints(points []agents.Breakpoint) {
	a.Debugger.SetBreakpoints(points)
	a.mu.Lock()
	a.version++
	want := a.version
	a.changedLocked()
	a.mu.Unlock()
	deadline := time.NewTimer(appAckWait)
	defer deadline.Stop()
	for {
		a.mu.Lock()
		acked, changed := a.acked >= want, a.changed
		a.mu.Unlock()
		if acked {
			return
		}
		select {
		case <-changed:
		case <-deadline.C:
			return
		}
	}
}

// pending reports whether the app has not said it has the breakpoints set last.
func (a *appDebug) pending() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.acked != a.version
}

// Continue lets the app's held run go on, waiting at most appHoldWait for the app to report the
// hold when it has not yet.
func (a *appDebug) Continue(r agents.Resume) error {
	deadline := time.NewTimer(appHoldWait)
	defer deadline.Stop()
	for {
		a.mu.Lock()
		changed := a.changed
		a.mu.Unlock()
		err := a.Debugger.Continue(r)
		if traces.ErrorCode(err) != traces.CodeConflict {
			return err
		}
		select {
		case <-changed:
		case <-deadline.C:
			return err
		}
	}
}

// poll answers one poll of the app (see pollHold): it mirrors the app's hold, then waits until
// there is something to say, ctx ends or the session does.
func (a *appDebug) poll(ctx context.Context, req holdPoll, ended <-chan struct{}) holdAnswer {
	a.mu.Lock()
	defer a.mu.Unlock()
	if req.Version == a.version && a.acked != a.version {
		a.acked = a.version
		a.changedLocked()
	}
	switch {
	case req.Hold == 0 && a.hold != 0: // the run went on without a decision (the app's timeout)
		a.Debugger.Release()
		a.hold, a.answer, a.decided = 0, nil, nil
		a.changedLocked()
	case req.Hold != 0 && req.Hold != a.hold:
		a.hold, a.decided = req.Hold, nil
		a.answer = a.Debugger.HoldFor(*req.Stop)
		a.changedLocked()
	}
	for {
		out := holdAnswer{Version: a.version}
		if a.version != req.Version {
			out.Breakpoints = make([]string, 0)
			for _, b := range a.Debugger.Breakpoints() {
				out.Breakpoints = append(out.Breakpoints, b.String())
			}
		}
		if req.Hold != 0 && a.hold == req.Hold && a.decided != nil {
			out.Hold, out.Resume = req.Hold, a.decided
		}
		if out.Breakpoints != nil || out.Resume != nil {
			return out
		}
		changed, answer := a.changed, a.answer
		if a.hold != req.Hold {
			answer = nil // a newer poll took the hold over
		}
		a.mu.Unlock()
		select {
		case r := <-answer:
			a.mu.Lock()
			if a.hold == req.Hold {
				a.decided = &r
				a.changedLocked() // another poll of the same hold answers it too
			}
			continue
		case <-changed:
		case <-ctx.Done():
		case <-ended:
		}
		a.mu.Lock()
		if ctx.Err() != nil || isClosed(ended) {
			return holdAnswer{Version: a.version}
		}
	}
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// optIn returns the mirror of run id's breakpoints, made at the app's first poll: with the
// breakpoints its start's answer gave the app, as version 1, which it has.
func (in *ingestion) optIn(id string) *appDebug {
	in.mu.Lock()
	defer in.mu.Unlock()
	a := in.debug[id]
	if a == nil {
		a = newAppDebug()
		if r := in.runs[id]; r != nil && len(r.given) > 0 {
			a.Debugger.SetBreakpoints(r.given)
			a.version++
		}
		in.debug[id] = a
	}
	return a
}

// givenAtStart returns the breakpoints kept for the next runs of run's flow, written, for its
// start's answer to give the app, which has them from then on as version 1 (see optIn); the same
// to a start sent again. Kept breakpoints the store cannot give now are not given.
func (in *ingestion) givenAtStart(run *ingestRun) []string {
	in.mu.Lock()
	asked, given := run.givenAsked, run.given
	in.mu.Unlock()
	if !asked {
		written, _ := in.broker.NextBreakpoints(run.rec.Run().Flow)
		for _, w := range written {
			if b, err := agents.ParseBreakpoint(w); err == nil {
				given = append(given, b)
			}
		}
		in.mu.Lock()
		if run.givenAsked { // a start sent again asked meanwhile
			given = run.given
		}
		run.given, run.givenAsked = given, true
		in.mu.Unlock()
	}
	var out []string
	for _, b := range given {
		out = append(out, b.String())
	}
	return out
}

// keepForNext keeps points for the next runs of flow that opt in (none: forgets them), in the
// store: they outlast the server and reach every server on a shared database.
func (in *ingestion) keepForNext(flow string, points []agents.Breakpoint) error {
	written := make([]string, len(points))
	for i, b := range points {
		written[i] = b.String()
	}
	return in.broker.SetNextBreakpoints(flow, written)
}

// keptForNext reports whether breakpoints are kept for the next runs of flow.
func (in *ingestion) keptForNext(flow string) bool {
	points, err := in.broker.NextBreakpoints(flow)
	return err == nil && len(points) > 0
}

// debugger returns the mirror of run id's breakpoints; streamed is false when no app streams the
// run. It fails with CodeConflict for an app that did not opt in.
func (in *ingestion) debugger(id string) (a *appDebug, streamed bool, err error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if _, ok := in.runs[id]; !ok {
		return nil, false, nil
	}
	if a = in.debug[id]; a == nil {
		return nil, true, traces.Errorf(traces.CodeConflict, "run %s is an app's run that Baton cannot hold: "+
			"the app holds its runs at breakpoints only with attach.Middleware() in its ChatModelAgents' Handlers", id)
	}
	return a, true, nil
}
