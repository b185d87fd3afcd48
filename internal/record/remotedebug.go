package record

import (
	"context"
	"errors"
	"time"

	"github.com/baton-dev/baton/traces"
)

// An app's run held at the breakpoints set on it in Baton. The app opts in (attach.Middleware
// calls OptIn); its run's recorder then holds it through the run's Debugger, armed by the
// breakpoints Baton sends, and one poller per run keeps a long poll open on
// POST /api/ingest/:id/hold: it carries the breakpoints the app has and where the run is held,
// and its answer the breakpoints set since, or the decision at the hold. A run whose Baton or
// page goes away goes on by itself after the app's timeout (Debugger.SetTimeout).

// Tuning of the long poll.
const (
	// holdPollTimeout bounds one poll: longer than the server keeps one open (25 s, see
	// server/ingestdebug.go), so that a server that answers is never cut.
	holdPollTimeout = 40 * time.Second
	// holdPollAfter is how long into a run the poller starts asking: no one sets a breakpoint on
	// a run in its first moments, and a run over by then (a fast app's, a test's) costs nothing.
	holdPollAfter = 50 * time.Millisecond
	// startWait bounds how long a run that opts in waits for its start's answer, which may give
	// it breakpoints (see awaitStart).
	startWait = 250 * time.Millisecond
)

// What a client knows of the breakpoints Baton gives its runs at their start (client.atStart).
const (
	startUnknown   int32 = iota // no start answered yet
	startGives                  // the last start's answer gave breakpoints
	startGivesNone              // it gave none, or no answer came in time
)

// holdPoll is the body of POST /api/ingest/:id/hold.
type holdPoll struct {
	// Version is the version of the breakpoints the app has, 0 for none yet.
	Version int64 `json:"version"`
	// Hold numbers the hold the run is at, 0 when it is not held; Stop is where.
	Hold int64 `json:"hold,omitempty"`
	Stop *Stop `json:"stop,omitempty"`
}

// holdAnswer is the answer to a holdPoll: the breakpoints, when their version is not the app's,
// and the decision at the hold numbered Hold, when one came.
type holdAnswer struct {
	Version     int64    `json:"version"`
	Breakpoints []string `json:"breakpoints,omitempty"`
	Hold        int64    `json:"hold,omitempty"`
	Resume      *Resume  `json:"resume,omitempty"`
}

// OptIn lets the breakpoints set on the run ctx is part of in Baton hold it, in this process,
// each hold for at most timeout (0 for no bound): the run goes on by itself after it, and says so
// in its trace and in the log. Only a run streamed to a Baton server can be; for the others OptIn
// does nothing. The first call of a run starts its poller; later ones cost an atomic load.
func OptIn(ctx context.Context, timeout time.Duration) {
	v := visitIn(ctx)
	if v == nil {
		return
	}
	s, ok := v.rec.out.sink.(*remoteRun)
	if !ok || s.opted.Load() || !s.opted.CompareAndSwap(false, true) {
		return
	}
	s.debug.SetTimeout(timeout, s.expired)
	s.mu.Lock()
	given := s.given
	s.mu.Unlock()
	if given != nil {
		s.debug.SetBreakpoints(given)
	}
	s.awaitStart()
	s.c.senders.Add(1) // Close waits for it as for the run's sender, with which it ends
	go func() {
		defer s.c.senders.Done()
		s.pollHolds()
	}()
}

// awaitStart waits, at most startWait, for the run's start to be answered, unless the client
// knows Baton gives no breakpoints at the start: a run whose flow has breakpoints kept for the
// next runs is held from its first moment. So the first run of a client, and those after a start
// that gave breakpoints, wait for one answer of Baton; the others do not.
func (s *remoteRun) awaitStart() {
	if s.c.atStart.Load() == startGivesNone {
		return
	}
	t := time.NewTimer(startWait)
	defer t.Stop()
	select {
	case <-s.opened:
	case <-t.C:
		s.c.atStart.Store(startGivesNone) // Baton is slow or away: the next runs do not wait
	case <-s.senderDone:
	case <-s.c.stop.Done():
	}
}

// startWith takes the breakpoints the start's answer gave (those Baton keeps for the app's next
// runs): the run holds at them from now on once it opts in, here or in OptIn, whichever comes
// last, and its poller asks Baton at once.
func (s *remoteRun) startWith(written []string) {
	if len(written) == 0 {
		s.c.atStart.Store(startGivesNone)
		return
	}
	s.c.atStart.Store(startGives)
	points, ok := s.parseBreakpoints(written)
	if !ok {
		return
	}
	s.mu.Lock()
	s.given = points
	opted := s.opted.Load()
	s.mu.Unlock()
	if opted {
		s.debug.SetBreakpoints(points)
	}
}

// debugger is the run's Debugger, which the recorder holds the run with.
func (s *remoteRun) debugger() *Debugger { return s.debug }

// heldAt is the Debugger's notify: the run is held at stop.
func (s *remoteRun) heldAt(stop Stop) {
	s.mu.Lock()
	s.holdID++
	s.holdStop = &stop
	s.mu.Unlock()
	s.wakeHolds()
}

// letGo is the Debugger's released: the run is no longer held.
func (s *remoteRun) letGo() {
	s.mu.Lock()
	s.holdStop = nil
	s.mu.Unlock()
	s.wakeHolds()
}

func (s *remoteRun) wakeHolds() {
	select {
	case s.holdWake <- struct{}{}:
	default:
	}
}

// expired says in the log that no decision came at stop within the app's timeout.
func (s *remoteRun) expired(stop Stop) {
	s.c.log.Warn("baton: no decision came at a breakpoint within the app's timeout; the run goes on by itself",
		"breakpoint", stop.Break, "agent", stop.Agent, "target", stop.Target)
}

// noteSession keeps the run's session on the server, which the poller posts to.
func (s *remoteRun) noteSession(ss ingestSession) {
	if ss.id == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.session == [2]string{ss.id, ss.secret} {
		return
	}
	first := s.session[0] == ""
	s.session = [2]string{ss.id, ss.secret}
	if first {
		close(s.opened)
	}
}

// pollHolds is the run's poller: from holdPollAfter into the run (at once when the start's answer
// gave breakpoints), once it has a session, until its sender ends, it keeps a long poll open that tells Baton the breakpoints the app has and where the run is held, and
// applies what the answer brings. A new hold, or the end of one, cuts the poll short: Baton
// learns of it at once.
func (s *remoteRun) pollHolds() {
	start := time.NewTimer(holdPollAfter)
	defer start.Stop()
	opened := s.opened
	for started := false; !started; {
		select {
		case <-start.C:
			started = true
		case <-opened:
			// A run the start's answer gave breakpoints to asks at once.
			s.mu.Lock()
			started = s.given != nil
			s.mu.Unlock()
			opened = nil
		case <-s.senderDone:
			return
		case <-s.c.stop.Done():
			return
		}
	}
	select {
	case <-s.opened:
	case <-s.senderDone:
		return
	case <-s.c.stop.Done():
		return
	}
	var version, answered int64 // the breakpoints had; the last hold a decision was applied to
	s.mu.Lock()
	if s.given != nil {
		version = 1 // the start's answer's
	}
	s.mu.Unlock()
	retry := retryMin
	for {
		s.mu.Lock()
		if s.finished { // run.finished is queued: nothing more to hold
			s.mu.Unlock()
			return
		}
		req := holdPoll{Version: version}
		if s.holdStop != nil && s.holdID != answered {
			req.Hold, req.Stop = s.holdID, s.holdStop
		}
		session := s.session
		s.mu.Unlock()
		ans, err := s.poll(session, req)
		switch {
		case s.c.stop.Err() != nil:
			return
		case err != nil:
			select {
			case <-time.After(retry):
			case <-s.holdWake:
			case <-s.senderDone:
				return
			case <-s.c.stop.Done():
				return
			}
			retry = min(2*retry, retryMax)
			continue
		}
		retry = retryMin
		if ans.Version != version {
			if points, ok := s.parseBreakpoints(ans.Breakpoints); ok {
				s.debug.SetBreakpoints(points)
				version = ans.Version
			}
		}
		if ans.Resume != nil && req.Hold != 0 && ans.Hold == req.Hold {
			answered = req.Hold
			// Refused only when the hold ended meanwhile (the app's timeout): nothing to apply.
			_ = s.debug.Continue(*ans.Resume)
		}
		select {
		case <-s.senderDone:
			return
		default:
		}
	}
}

// poll makes one long poll, cut short when the run is held or let go, or its sender ends. A poll
// cut short so answers nothing, with no error.
func (s *remoteRun) poll(session [2]string, req holdPoll) (holdAnswer, error) {
	ctx, cancel := context.WithCancel(s.c.stop)
	defer cancel()
	cut := make(chan struct{})
	go func() {
		defer close(cut)
		select {
		case <-s.holdWake:
			cancel()
		case <-s.senderDone:
			cancel()
		case <-ctx.Done():
		}
	}()
	ans := holdAnswer{Version: req.Version}
	err := s.c.postWith(ctx, s.c.poll, "/api/ingest/"+session[0]+"/hold", session[1], req, &ans)
	cancel()
	<-cut
	if err != nil && ctx.Err() != nil && s.c.stop.Err() == nil {
		return holdAnswer{Version: req.Version}, nil // cut short: ask again at once
	}
	var refused *refusal
	if errors.As(err, &refused) && s.c.warnedHolds.CompareAndSwap(false, true) {
		s.c.log.Warn("baton refused to tell this app its breakpoints; the app runs on and tries again", "url", s.c.url, "error", refused.msg)
	}
	return ans, err
}

// parseBreakpoints reads the breakpoints Baton sent; ok is false, and the log says why once,
// when one is not understood (a newer server's kind, say).
func (s *remoteRun) parseBreakpoints(written []string) ([]Breakpoint, bool) {
	points := make([]Breakpoint, 0, len(written))
	for _, w := range written {
		b, err := ParseBreakpoint(w)
		if err != nil {
			if s.c.warnedHolds.CompareAndSwap(false, true) {
				s.c.log.Warn("baton sent a breakpoint this app does not know; it keeps the ones it had", "breakpoint", w, "error", traces.ErrorMessage(err))
			}
			return nil, false
		}
		points = append(points, b)
	}
	return points, true
}
