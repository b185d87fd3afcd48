package server

import (
	"errors"
	"net/http"
	"reflect"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/baton-dev/baton/traces"
)

// Defaults of the ingestion settings of Config.
const (
	DefaultMaxIngestBody = 8 << 20
	DefaultIngestTimeout = 30 * time.Second
)

// Routes that take recorded events or trace files, and so the larger body limit.
const (
	ingestStartRoute = "/api/ingest"
	ingestPostRoute  = "/api/ingest/:id"
	importRoute      = "/api/traces"
)

func (s *Server) ingestRoutes(e *echo.Echo) {
	e.POST(ingestStartRoute, s.startIngest)
	e.POST(ingestPostRoute, s.postIngest)
	e.POST(holdRoute, s.pollHold)
	e.POST(importRoute, s.importTrace)
}

// ingestDefaults checks the ingestion settings of cfg and fills in their defaults.
func ingestDefaults(cfg *Config) error {
	switch {
	case cfg.MaxIngestBody < 0:
		return traces.Errorf(traces.CodeInvalid, "max ingest body %d is negative", cfg.MaxIngestBody)
	case cfg.IngestTimeout < 0:
		return traces.Errorf(traces.CodeInvalid, "ingest timeout %s is negative", cfg.IngestTimeout)
	case cfg.MaxIngestRuns < 0:
		return traces.Errorf(traces.CodeInvalid, "max ingest runs %d is negative", cfg.MaxIngestRuns)
	case cfg.MaxIngestRunsPerClient < 0:
		return traces.Errorf(traces.CodeInvalid, "max ingest runs per client %d is negative", cfg.MaxIngestRunsPerClient)
	}
	if cfg.MaxIngestRuns == 0 {
		cfg.MaxIngestRuns = DefaultMaxIngestRuns
	}
	if cfg.MaxIngestRunsPerClient == 0 {
		cfg.MaxIngestRunsPerClient = min(DefaultMaxIngestRunsPerClient, cfg.MaxIngestRuns)
	}
	if cfg.MaxIngestBody == 0 {
		cfg.MaxIngestBody = DefaultMaxIngestBody
	}
	if cfg.IngestTimeout == 0 {
		cfg.IngestTimeout = DefaultIngestTimeout
	}
	return nil
}

// bodyLimitFor is the body limit of c's route: MaxIngestBody where events or trace files come
// in, MaxBody everywhere else.
func (s *Server) bodyLimitFor(c echo.Context) int64 {
	switch c.Path() {
	case ingestStartRoute, ingestPostRoute, holdRoute, importRoute:
		return s.cfg.MaxIngestBody
	}
	return s.cfg.MaxBody
}

// decodeIngest reads an ingestion request's body into v, as strictly as a trace file is read:
// the events in it are in the trace format.
func decodeIngest(c echo.Context, v any) error {
	data, err := readJSONBody(c)
	if err != nil {
		return err
	}
	return traces.DecodeJSON(data, "request body", v)
}

// ingestCreated is the answer to POST /api/ingest: the run, the seq of the first event the
// app sends, and the session's secret, which each later request for the run shows in the
// runSecretHeader.
type ingestCreated struct {
	ID     string `json:"id"`
	URL    string `json:"url"`
	Next   int64  `json:"next"`
	Secret string `json:"secret"`
	// After is the run's seq before the session's first event (the app's event n is the run's
	// After+n); when Moved, the run's last event the database has: this server took the run over
	// from one that stopped, and the app sends its events after that one.
	After int64 `json:"after"`
	Moved bool  `json:"moved,omitempty"`
	// Breakpoints, on a new run's start, are those kept for the app's next runs of its flow: an
	// app that opts in holds its run at them from then on, as the version 1 of its breakpoints.
	Breakpoints []string `json:"breakpoints,omitempty"`
}

// startIngest serves POST /api/ingest {"run": {"flow", "input", "model", "conversation"},
// "agents": [...], "resumes": "<interrupt id>", "continues": "<run id>", "key": "<app's id>",
// "forked_from", "holdable"}: an app starts streaming a run. "holdable" (its agents carry
// attach.Middleware) makes it a run whose breakpoints can be set at once, before the app's first
// poll brings them. The run is registered at once, so its page and websockets work
// before any event arrives, and 201 {"id", "url", "next": 1} tells the app where to post. When
// "resumes" names the last interrupt of a run that ended interrupted, that run is reopened
// instead, and when "continues" names a run the server ended interrupted while the app went on,
// that run goes on in a new session (see ingestion.continueRun); the answer is then 200 with its
// id. A start sent again with the key of an open session is answered as the first one was. A
// run still streamed whose last interrupt "resumes" names is ended interrupted first (see
// ingestion.endStopped). The answer carries the session's secret (see ingestgate.go); past the
// bounds on sessions, the start is answered 429 or 503 with a Retry-After, and a second resume
// of one interrupt 409.
func (s *Server) startIngest(c echo.Context) error {
	var req ingestStart
	if err := decodeIngest(c, &req); err != nil {
		return err
	}
	if err := traces.ValidateRunInfo(req.Run.Flow, req.Run.Model, req.Run.Conversation); err != nil {
		return err
	}
	if err := traces.ValidateAgentsAdded(s.agentsBefore(req), req.Agents); err != nil {
		return err
	}
	req.secret = c.Request().Header.Get(runSecretHeader)
	run, reopened, err := s.ingest.start(req, ingestClient(c))
	var refused *ingestRefused
	if errors.As(err, &refused) {
		return refused.write(c)
	}
	if err != nil {
		return err
	}
	status := http.StatusCreated
	if reopened {
		status = http.StatusOK
	}
	url := "/runs/" + run.rec.ID()
	c.Response().Header().Set(echo.HeaderLocation, url)
	created := ingestCreated{ID: run.rec.ID(), URL: url, Next: 1, Secret: run.secret, After: run.after, Moved: run.moved}
	if run.start == startsRun {
		created.Breakpoints = s.ingest.givenAtStart(run)
	}
	if req.Holdable {
		s.ingest.optIn(run.rec.ID()) // breakpoints may be set before the app's first poll
	}
	return c.JSON(status, created)
}

// ingestBatch is one post of a session: events numbered by the app from the session's next seq
// on, and agents discovered since the last post. The events are read by the session's decoder:
// in full (format version 1) or in the compact form of version 2, where an input may refer to an
// earlier event of the session.
type ingestBatch struct {
	Events traces.RawJSON `json:"events"`
	Agents []traces.Agent `json:"agents"`
	// Ending, when set, is how the run ends if the app goes quiet now, instead of interrupted. A
	// later post replaces it.
	Ending *ingestEnding `json:"ending"`
}

// ingestEnding is how a run ends should the app go quiet now, and when, by the app's clock: the
// end of what may be the run's last agent. A run ended this way ends then, not when the server
// gave up waiting (an ending without a time ends the run when the app was last heard from),
// after the events its end records (each open agent's agent.finished...), its tail.
type ingestEnding struct {
	Status traces.Status  `json:"status"`
	Error  string         `json:"error"`
	Time   time.Time      `json:"time"`
	Tail   []traces.Event `json:"tail"`
}

// foresees reports whether the ending's tail holds the interrupt id, which the app has not posted
// yet (false for a nil ending).
func (e *ingestEnding) foresees(id string) bool {
	if e == nil {
		return false
	}
	for _, t := range e.Tail {
		if t.Kind == traces.KindInterrupted && t.Interrupt != nil && t.Interrupt.ID == id {
			return true
		}
	}
	return false
}

// check reports what is wrong with an ending, if anything.
func (e *ingestEnding) check() error {
	if !e.Status.Ended() {
		return traces.Errorf(traces.CodeInvalid, "ending.status %q is not a final status: want completed, failed, interrupted or canceled", e.Status)
	}
	for i, t := range e.Tail {
		if err := traces.ValidateEvent(i, t); err != nil {
			return traces.Errorf(traces.CodeInvalid, "ending.tail: %v", err)
		}
		switch {
		case t.Time.IsZero():
			return traces.Errorf(traces.CodeInvalid, "ending.tail[%d] has no time", i)
		case t.Kind == traces.KindRunStarted || t.Kind == traces.KindRunFinished || t.Kind == traces.KindResumed:
			return traces.Errorf(traces.CodeInvalid, "ending.tail[%d] is %s: a tail holds what happens before the run's end", i, t.Kind)
		}
	}
	return nil
}

// same reports whether e and o say the same, both nil included.
func (e *ingestEnding) same(o *ingestEnding) bool {
	if e == nil || o == nil {
		return e == o
	}
	return e.Status == o.Status && e.Error == o.Error && e.Time.Equal(o.Time) && reflect.DeepEqual(e.Tail, o.Tail)
}

// ingestNext is the answer to a post: the seq of the next event the app sends.
type ingestNext struct {
	Next int64 `json:"next"`
}

// ingestConflict refuses a post that the session cannot take as sent, saying where the server
// stands, so that the app goes on from there instead of giving up: a post sent again after its
// answer was lost, or a post to a session that is over.
type ingestConflict struct {
	err   *traces.Error // CodeConflict: what the app reads
	next  int64         // the seq of the session's next event; 0 when the server does not know
	ended bool          // the session is over: the app goes on with POST /api/ingest {"continues"}
}

func (c *ingestConflict) Error() string { return c.err.Error() }
func (c *ingestConflict) Unwrap() error { return c.err }

// ingestConflictAnswer is the body of an ingestConflict's 409.
type ingestConflictAnswer struct {
	Error string `json:"error"`
	Next  int64  `json:"next,omitempty"`
	Ended bool   `json:"ended,omitempty"`
}

// postIngest serves POST /api/ingest/:id {"events": [...], "agents": [...], "ending": {...}}: the
// next events of a run an app streams, checked as a whole before any is stored; 200 {"next"}. An
// empty list is a heartbeat. A run.finished, last in its post, ends the run and the session. A
// post the session cannot take where it stands gets 409 {"error", "next", "ended"} (see
// ingestConflict).
func (s *Server) postIngest(c echo.Context) error {
	next, err := s.postToSession(c)
	var conflict *ingestConflict
	if errors.As(err, &conflict) {
		return c.JSON(http.StatusConflict, ingestConflictAnswer{Error: conflict.err.Message, Next: conflict.next, Ended: conflict.ended})
	}
	var refused *ingestRefused
	if errors.As(err, &refused) {
		return refused.write(c)
	}
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, ingestNext{Next: next})
}

func (s *Server) postToSession(c echo.Context) (next int64, err error) {
	run, err := s.ingest.session(c.Param("id"))
	if err != nil {
		return 0, err
	}
	if !sameSecret(c.Request().Header.Get(runSecretHeader), run.secret) {
		return 0, forbidden(run.rec.ID())
	}
	var b ingestBatch
	if err := decodeIngest(c, &b); err != nil {
		return 0, err
	}
	return run.post(b)
}

// post checks b against the session and then stores it: agents first, then the events, a final
// run.finished through FinishAt. Nothing is stored when any check fails. A session that ended is
// reopened by a post that fits it when the app had only gone quiet (see sessionEnd).
func (r *ingestRun) post(b ingestBatch) (next int64, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.over == endedByApp || r.over == endedByServer {
		return 0, r.endedConflict()
	}
	r.last = time.Now() // any post, even a refused one, shows the app is there
	r.heard.Store(r.last.UnixNano())
	if err := traces.ValidateAgentsAdded(r.rec.Agents(), b.Agents); err != nil { // a parent may have come in an earlier post
		return 0, err
	}
	if n := agentsAfter(r.rec, b.Agents); n > traces.MaxAgents {
		return 0, traces.Errorf(traces.CodeInvalid, "agents: the run would have %d agents: a run may have at most %d", n, traces.MaxAgents)
	}
	if b.Ending != nil {
		if err := b.Ending.check(); err != nil {
			return 0, err
		}
	}
	var events []traces.Event
	if len(b.Events) > 0 { // else a heartbeat
		// Decoded last among the checks: the decoder keeps what it accepts.
		var err error
		events, err = r.dec.DecodeEvents(b.Events, func(events []traces.Event) error {
			return checkBatch(events, r.next, r.start, r.resumes)
		})
		if err != nil {
			return 0, err
		}
	}
	switch r.over {
	case endedByMark:
		switch {
		case len(events) == 0 && r.ending.same(b.Ending):
			return r.next, nil // the app is there, and its run still ends as it had said
		case len(events) == 1 && events[0].Kind == traces.KindRunFinished:
			// The app's own end, late: the run already ended as the app had said.
			r.next++
			r.over = endedByApp
			return r.next, nil
		}
		r.over = endedByServer // its events cannot follow the end it had announced
		return 0, r.endedConflict()
	case endedQuiet:
		at := time.Now().UTC()
		if len(events) > 0 {
			at = events[0].Time
		}
		if err := r.reopenLocked(at); err != nil {
			return 0, err
		}
	}
	r.ending = b.Ending
	if b.Ending != nil {
		select {
		case r.poke <- struct{}{}:
		default:
		}
	}
	putAgents(r.rec, b.Agents)
	for _, e := range events {
		r.next++
		r.lastEvent = e.Time
		if e.Kind == traces.KindInterrupted && e.Interrupt != nil {
			r.stoppedAt = e.Interrupt.ID
		}
		if e.Kind == traces.KindRunFinished {
			r.endLocked(endedByApp, e.Time, e.Run.Status, e.Run.Error)
			break
		}
		r.rec.Emit(e)
	}
	return r.next, nil
}

// agentsAfter is how many agents rec's run has once agents are put into it: an agent it has is
// updated, not added.
func agentsAfter(rec *traces.Recording, agents []traces.Agent) int {
	if len(agents) == 0 {
		return 0
	}
	have := rec.Agents()
	names := make(map[string]bool, len(have))
	for _, a := range have {
		names[a.Name] = true
	}
	n := len(have)
	for _, a := range agents {
		if !names[a.Name] {
			names[a.Name] = true
			n++
		}
	}
	return n
}

// checkBatch checks a post's events: the first numbered next (else an ingestConflict
// saying so), each following +1, each valid on its own (traces.ValidateEvent) and with a time,
// run.started only as a new run's first event, resumed first in a resumed session, naming the
// interrupt it resumes (so that the trace tells a second resume, see resumedIn), and
// run.finished, with a final status, only last. Messages name the event as events[i] of the post.
func checkBatch(events []traces.Event, next int64, start sessionStart, resumes string) error {
	for i, e := range events {
		if i == 0 && e.Seq != next {
			return &ingestConflict{next: next,
				err: traces.Errorf(traces.CodeConflict, "expected event seq %d, got %d: resend from %d", next, e.Seq, next)}
		}
		if want := next + int64(i); e.Seq != want {
			return traces.Errorf(traces.CodeInvalid, "events[%d].seq is %d, want %d: number the events 1, 2, 3... with no gaps", i, e.Seq, want)
		}
		if err := traces.ValidateEvent(i, e); err != nil {
			return err
		}
		if e.Time.IsZero() {
			return traces.Errorf(traces.CodeInvalid, "events[%d] (%s) has no time: give each event the time it happened", i, e.Kind)
		}
		switch {
		case e.Kind == traces.KindRunStarted && (e.Seq != 1 || start != startsRun):
			return traces.Errorf(traces.CodeInvalid, "events[%d] (run.started) is not the first event of a new run: a run starts once", i)
		case start == resumesRun && e.Seq == 1 && e.Kind != traces.KindResumed:
			return traces.Errorf(traces.CodeInvalid, "events[%d] (%s) is the first event of a resumed run: send resumed first", i, e.Kind)
		case start == resumesRun && e.Seq == 1 && (e.Interrupt == nil || e.Interrupt.ID != resumes):
			return traces.Errorf(traces.CodeInvalid, "events[%d] (resumed) does not name interrupt %s, which this session resumes: "+
				"give it the id the start's \"resumes\" gave", i, resumes)
		case e.Kind == traces.KindRunFinished && i != len(events)-1:
			return traces.Errorf(traces.CodeInvalid, "events[%d] (run.finished) is not the last event of its post: run.finished ends the run", i)
		case e.Kind == traces.KindRunFinished && !e.Run.Status.Ended():
			return traces.Errorf(traces.CodeInvalid, "events[%d] (run.finished) has status %q: want completed, failed, interrupted or canceled", i, e.Run.Status)
		}
	}
	return nil
}

// agentsBefore returns the agents of the run a start goes on with, which its agents join (their
// parents may be among them): the run req.Continues names, or the one whose interrupt
// req.Resumes is; nil for a new run, or a run this Baton lacks (start says so).
func (s *Server) agentsBefore(req ingestStart) []traces.Agent {
	var rec *traces.Recording
	switch {
	case req.Continues != "":
		rec, _ = s.broker.Get(req.Continues)
	case req.Resumes != "":
		rec, _ = s.broker.Interrupted(req.Resumes)
	}
	if rec == nil {
		return nil
	}
	return rec.Agents()
}
