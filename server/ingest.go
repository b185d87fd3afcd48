package server

import (
	"net/http"
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
	e.POST(importRoute, s.importTrace)
}

// ingestDefaults checks the ingestion settings of cfg and fills in their defaults.
func ingestDefaults(cfg *Config) error {
	switch {
	case cfg.MaxIngestBody < 0:
		return traces.Errorf(traces.CodeInvalid, "max ingest body %d is negative", cfg.MaxIngestBody)
	case cfg.IngestTimeout < 0:
		return traces.Errorf(traces.CodeInvalid, "ingest timeout %s is negative", cfg.IngestTimeout)
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
	case ingestStartRoute, ingestPostRoute, importRoute:
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

// ingestCreated is the answer to POST /api/ingest: the run, and the seq of the first event the
// app sends.
type ingestCreated struct {
	ID   string `json:"id"`
	URL  string `json:"url"`
	Next int64  `json:"next"`
}

// startIngest serves POST /api/ingest {"run": {"flow", "input", "model", "conversation"},
// "agents": [...], "resumes": "<interrupt id>"}: an app starts streaming a run. The run is
// registered at once, so its page and websockets work before any event arrives, and 201 {"id",
// "url", "next": 1} tells the app where to post. When "resumes" names the last interrupt of a run
// that ended interrupted, that run is reopened instead and the answer is 200 with its id; a run
// still streamed whose last interrupt it is, is ended interrupted first (see endStopped).
func (s *Server) startIngest(c echo.Context) error {
	var req ingestStart
	if err := decodeIngest(c, &req); err != nil {
		return err
	}
	if err := traces.ValidateAgents(req.Agents); err != nil {
		return err
	}
	rec, resumed, err := s.ingest.start(req)
	if err != nil {
		return err
	}
	status := http.StatusCreated
	if resumed {
		status = http.StatusOK
	}
	url := "/runs/" + rec.ID()
	c.Response().Header().Set(echo.HeaderLocation, url)
	return c.JSON(status, ingestCreated{ID: rec.ID(), URL: url, Next: 1})
}

// ingestBatch is one post of a session: events numbered by the app from the session's next seq
// on, and agents discovered since the last post. The events are read by the session's decoder:
// in full (format version 1) or in the compact form of version 2, where an input may refer to an
// earlier event of the session.
type ingestBatch struct {
	Events traces.RawJSON `json:"events"`
	Agents []traces.Agent `json:"agents"`
	// Ending, when set, is how the run ends if the app goes quiet now: the status (and error) to
	// finish it with at the timeout, instead of interrupted. A later post replaces it.
	Ending *traces.RunMark `json:"ending"`
}

// ingestNext is the answer to a post: the seq of the next event the app sends.
type ingestNext struct {
	Next int64 `json:"next"`
}

// postIngest serves POST /api/ingest/:id {"events": [...], "agents": [...]}: the next events of a
// run an app streams, checked as a whole before any is stored; 200 {"next"}. An empty list is a
// heartbeat. A run.finished, last in its post, ends the run and the session.
func (s *Server) postIngest(c echo.Context) error {
	run, err := s.ingest.session(c.Param("id"))
	if err != nil {
		return err
	}
	var b ingestBatch
	if err := decodeIngest(c, &b); err != nil {
		return err
	}
	next, err := run.post(b)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, ingestNext{Next: next})
}

// post checks b against the session and then stores it: agents first, then the events, a final
// run.finished through FinishAt. Nothing is stored when any check fails.
func (r *ingestRun) post(b ingestBatch) (next int64, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.over {
		return 0, endedError(r.rec.ID())
	}
	r.last = time.Now() // any post, even a refused one, shows the app is there
	if err := traces.ValidateAgents(b.Agents); err != nil {
		return 0, err
	}
	if b.Ending != nil && !b.Ending.Status.Ended() {
		return 0, traces.Errorf(traces.CodeInvalid, "ending.status %q is not a final status: want completed, failed, interrupted or canceled", b.Ending.Status)
	}
	var events []traces.Event
	if len(b.Events) > 0 { // else a heartbeat
		// Decoded last among the checks: the decoder keeps what it accepts.
		var err error
		events, err = r.dec.DecodeEvents(b.Events, func(events []traces.Event) error {
			return checkBatch(events, r.next, r.resumes != "")
		})
		if err != nil {
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
	for _, a := range b.Agents {
		r.rec.PutAgent(a)
	}
	for _, e := range events {
		r.next++
		r.lastAt = e.Time
		if e.Kind == traces.KindInterrupted && e.Interrupt != nil {
			r.stoppedAt = e.Interrupt.ID
		}
		if e.Kind == traces.KindRunFinished {
			r.endLocked(e.Time, e.Run.Status, e.Run.Error)
			break
		}
		r.rec.Emit(e)
	}
	return r.next, nil
}

// checkBatch checks a post's events: the first numbered next, each following +1, each valid on
// its own (traces.ValidateEvent) and with a time, run.started only as a new run's first event,
// resumed first in a resumed run, and run.finished, with a final status, only last. Messages name
// the event as events[i] of the post.
func checkBatch(events []traces.Event, next int64, resumed bool) error {
	for i, e := range events {
		if i == 0 && e.Seq != next {
			return traces.Errorf(traces.CodeConflict, "expected event seq %d, got %d: resend from %d", next, e.Seq, next)
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
		case e.Kind == traces.KindRunStarted && (e.Seq != 1 || resumed):
			return traces.Errorf(traces.CodeInvalid, "events[%d] (run.started) is not the first event of a new run: a run starts once", i)
		case resumed && e.Seq == 1 && e.Kind != traces.KindResumed:
			return traces.Errorf(traces.CodeInvalid, "events[%d] (%s) is the first event of a resumed run: send resumed first", i, e.Kind)
		case e.Kind == traces.KindRunFinished && i != len(events)-1:
			return traces.Errorf(traces.CodeInvalid, "events[%d] (run.finished) is not the last event of its post: run.finished ends the run", i)
		case e.Kind == traces.KindRunFinished && !e.Run.Status.Ended():
			return traces.Errorf(traces.CodeInvalid, "events[%d] (run.finished) has status %q: want completed, failed, interrupted or canceled", i, e.Run.Status)
		}
	}
	return nil
}
