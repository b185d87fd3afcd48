package record

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/baton-dev/baton/traces"
)

// ingestSession is the sender's side of the run's current ingestion session: the run on the server,
// and how the session numbers the run's events (the ingestion protocol is in docs/api.md).
type ingestSession struct {
	id     string // the run on the server; "" until created
	secret string // the session's secret, shown with every later request for the run
	open   bool   // a session is open on it
	offset int64  // the run's numbering minus the session's
	after  int64  // the server's seq of the run before the session's first event
	wire   wire
}

// runSecretHeader carries a session's secret on each request for its run: only the app that
// started the run may post to it.
const runSecretHeader = "Baton-Run-Secret"

// ingestCreated is the answer to POST /api/ingest.
type ingestCreated struct {
	ID     string `json:"id"`
	Secret string `json:"secret"`
	After  int64  `json:"after"` // the server's seq of the run before the session's first event
	Moved  bool   `json:"moved"` // the server took the run over from one that stopped, which had it up to After
	// Breakpoints are those Baton keeps for the app's next runs: the run has them, as version 1,
	// once it opts in (see remotedebug.go).
	Breakpoints []string `json:"breakpoints,omitempty"`
}

// send is the run's sender: it registers the run (once the part before it is delivered, when it
// resumes one sent from this process), then posts what is queued until the server has the whole
// run. It retries while the server is unreachable; when a post's answer was lost or the server
// lost the session, it goes on from where the server stands; a server that refuses the run ends
// it.
func (s *remoteRun) send(first traces.Event) {
	defer s.letEndingGo() // nothing more is sent: its waiter, if any, waits no longer
	if !s.awaitPredecessor() {
		return
	}
	var ss ingestSession
	retry := retryMin
	heartbeat := time.NewTimer(heartbeatEvery)
	defer heartbeat.Stop()
	for {
		o := s.pending()
		again, err := s.deliver(&ss, first, o)
		s.noteSession(ss)
		var refused *refusal
		switch {
		case err == nil && s.whole():
			return
		case errors.As(err, &refused):
			s.c.log.Warn("baton refused this run; it is no longer recorded", "url", s.c.url, "error", refused.msg)
			s.c.refused.Add(1)
			s.drop()
			return
		case s.c.stop.Err() != nil:
			return
		case err != nil:
			wait := retry
			var busy *busyServer
			if errors.As(err, &busy) {
				// Baton is there but full: it says when a place frees; the queue holds the events
				// meanwhile, within its bound.
				s.c.busyOnce(busy)
				wait = busy.after
			} else {
				s.c.unreachable(err)
			}
			select {
			case <-time.After(wait):
			case <-s.c.stop.Done():
				return
			}
			retry = min(2*retry, retryMax)
			continue
		}
		retry = retryMin
		if again {
			continue
		}
		every := heartbeatEvery
		if o.ending != nil {
			every = endingHeartbeat // the server ends a quiet run that holds an ending sooner
		}
		heartbeat.Reset(every)
		select {
		case <-s.wake:
		case <-heartbeat.C: // an empty post tells the server the app is alive
		case <-s.c.stop.Done():
			return
		}
	}
}

// deliver takes the next step of the run's delivery of o: it creates the run, continues it in a
// new session after the server lost the last one, or posts o. again says the next step is due at
// once (more is queued, or the server said where it stands). It fails with a *refusal when the
// server refuses the run.
func (s *remoteRun) deliver(ss *ingestSession, first traces.Event, o outbox) (again bool, err error) {
	switch {
	case ss.id == "":
		created, err := s.create(first, agentsOf(o.agents))
		if err != nil {
			return false, err
		}
		s.startWith(created.Breakpoints) // before the session is noted: the poller reads them then
		*ss = ingestSession{id: created.ID, secret: created.Secret, open: true, after: created.After}
		s.sent(outbox{agents: o.agents})
		return true, nil
	case !ss.open:
		// The secret of the last session proves to a server that still knows it that this is
		// the run's app.
		req := ingestRun{Run: s.labels(first), Agents: agentsOf(o.agents), Continues: ss.id, Key: s.key}
		var created ingestCreated
		if err := s.c.post("/api/ingest", ss.secret, req, &created); err != nil {
			return false, fmt.Errorf("continue run %s: %w", ss.id, err)
		}
		if created.Moved {
			// The server that had the run stopped, and the one that took it over has it up to
			// created.After: what the app delivered after that is sent again.
			if lost := s.rewind(max(created.After-ss.after, 0) + ss.offset); lost > 0 {
				s.c.log.Warn("baton's server stopped before writing events the app no longer holds; they are lost",
					"url", s.c.url, "run", ss.id, "events", lost)
			}
		}
		// A new session numbers the events from 1, and its decoder knows no earlier input.
		*ss = ingestSession{id: ss.id, secret: created.Secret, open: true, offset: s.firstUndelivered() - 1, after: created.After}
		s.sent(outbox{agents: o.agents})
		return true, nil
	}
	body := ingestBatch{Agents: agentsOf(o.agents), Ending: o.ending}
	if body.Events, err = ss.wire.array(o.events, ss.offset); err != nil {
		return false, &refusal{msg: "encode: " + err.Error()}
	}
	err = s.c.post("/api/ingest/"+ss.id, ss.secret, body, nil)
	var stands *sessionStands
	switch {
	case errors.As(err, &stands):
		return true, s.goOnFrom(ss, stands)
	case err != nil:
		return false, err
	}
	ss.wire.sent(len(o.events))
	s.sent(o)
	return len(o.events) == maxBatch, nil
}

// goOnFrom brings the run's delivery to where the server says its session stands: the events it
// has, though their post's answer was lost, leave the queue; when the session is over and the run
// is not whole on the server, the next step continues it in a new session.
func (s *remoteRun) goOnFrom(ss *ingestSession, stands *sessionStands) error {
	if stands.Next > 0 {
		n, err := s.taken(stands.Next - 1 + ss.offset)
		if err != nil {
			return err
		}
		if n == 0 && !stands.Ended {
			return &refusal{msg: "the server refused the post where it stands: " + stands.Message}
		}
		ss.wire.sent(n)
	}
	if stands.Ended {
		ss.open = false
	}
	return nil
}

// labels returns what the run is called in the server's list, from its first event.
func (s *remoteRun) labels(first traces.Event) ingestLabels {
	l := ingestLabels{Model: "app", Conversation: s.conversation}
	if first.Run != nil {
		l.Flow, l.Input = first.Run.Flow, first.Run.Input
	}
	return l
}

// create registers the run with the server, from its first event: run.started, or resumed when
// it continues an interrupted run, which the server then reopens.
func (s *remoteRun) create(first traces.Event, agents []traces.Agent) (ingestCreated, error) {
	req := ingestRun{Run: s.labels(first), Agents: agents, Key: s.key, Holdable: middlewareInUse.Load()}
	if first.Kind == traces.KindResumed && first.Interrupt != nil {
		req.Resumes = first.Interrupt.ID
	}
	if s.fork != nil && first.Kind == traces.KindRunStarted {
		req.ForkedFrom = &traces.ForkOrigin{Run: s.fork.spec.Run, Seq: s.fork.spec.At}
	}
	var created ingestCreated
	err := s.c.post("/api/ingest", "", req, &created)
	var refused *refusal
	if req.Resumes != "" && errors.As(err, &refused) && refused.status == http.StatusConflict {
		// The interrupt was resumed already (a run goes on from an interrupt once): this part
		// is recorded as a run of its own, in the conversation of the interrupt.
		s.c.log.Warn("baton refused to join this resume to its run; it is recorded as a run of its own",
			"url", s.c.url, "interrupt", req.Resumes, "error", refused.msg)
		req.Resumes = ""
		if req.Run.Conversation == "" {
			req.Run.Conversation = first.Interrupt.ID
		}
		err = s.c.post("/api/ingest", "", req, &created)
	}
	if err != nil {
		return created, fmt.Errorf("register the run: %w", err)
	}
	if created.ID == "" {
		return created, &refusal{msg: "the server answered without a run id"}
	}
	return created, nil
}

// agentsOf returns the agents of queued changes, never nil.
func agentsOf(qs []queuedAgent) []traces.Agent {
	out := make([]traces.Agent, len(qs))
	for i, q := range qs {
		out[i] = q.Agent
	}
	return out
}

// ingestRun is the body of POST /api/ingest.
type ingestRun struct {
	Run       ingestLabels   `json:"run"`
	Agents    []traces.Agent `json:"agents"`
	Resumes   string         `json:"resumes,omitempty"`
	Continues string         `json:"continues,omitempty"`
	Key       string         `json:"key"`
	// ForkedFrom is, for a run that carries out a fork (see fork.go), the run and the model call
	// it forks: the server records it and files the run in that run's conversation.
	ForkedFrom *traces.ForkOrigin `json:"forked_from,omitempty"`
	// Holdable says the process's agents carry attach.Middleware: Baton offers breakpoints on
	// the run from its start, which the run's first poll brings.
	Holdable bool `json:"holdable,omitempty"`
}

// ingestLabels is what a new run is called in the server's list.
type ingestLabels struct {
	Flow         string `json:"flow"`
	Input        string `json:"input"`
	Model        string `json:"model"`
	Conversation string `json:"conversation,omitempty"`
}

// ingestBatch is the body of POST /api/ingest/:id.
type ingestBatch struct {
	Events json.RawMessage `json:"events"` // in the compact form (see wire)
	Agents []traces.Agent  `json:"agents,omitempty"`
	Ending *ingestEnding   `json:"ending,omitempty"`
}

// ingestEnding is how the run ends should nothing follow, when the app said so, and the events
// its end records (each open agent's agent.finished...), which the server appends then.
type ingestEnding struct {
	Status traces.Status  `json:"status"`
	Error  string         `json:"error,omitempty"`
	Time   time.Time      `json:"time"`
	Tail   []traces.Event `json:"tail,omitempty"`
}

// wire is the sender's encoding of a session's events in the compact form of the trace format's
// current version, which the server reads: an input that extends an earlier event's refers to
// it, so a growing conversation is sent in size linear in its messages. Each event is encoded
// once, in order, and kept until delivered, so that a post sent again carries the same bytes.
// A new session starts a new wire: its server side knows no earlier input.
type wire struct {
	enc     traces.EventEncoder
	encoded [][]byte // the queue's first events, encoded
}

// array returns events, the queue's first ones, as a JSON array numbered in the session (the
// run's seq minus offset), encoding those not yet encoded.
func (w *wire) array(events []traces.Event, offset int64) ([]byte, error) {
	out := []byte{'['}
	for i, e := range events {
		if i == len(w.encoded) {
			e.Seq -= offset
			data, err := w.enc.AppendEvent(nil, e)
			if err != nil {
				return nil, err
			}
			w.encoded = append(w.encoded, data)
		}
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, w.encoded[i]...)
	}
	return append(out, ']'), nil
}

// sent drops the first n events, delivered.
func (w *wire) sent(n int) { w.encoded = w.encoded[min(n, len(w.encoded)):] }

// refusal is a 4xx answer: the server understood and said no; sending again will not help.
type refusal struct {
	msg    string
	status int // the answer's, when it came from the server
}

func (e *refusal) Error() string { return e.msg }

// sessionStands is a 409 to a post that says where the session stands: the seq of its next
// event (0 when the server does not know), and whether it is over.
type sessionStands struct {
	Message string `json:"error"`
	Next    int64  `json:"next"`
	Ended   bool   `json:"ended"`
}

func (e *sessionStands) Error() string { return e.Message }

// busyServer is a 429 or 503: Baton answers but takes no more now; after is when to try again
// (its Retry-After, bounded).
type busyServer struct {
	msg   string
	after time.Duration
}

func (e *busyServer) Error() string { return e.msg }

// Bounds on a busy server's Retry-After: never a tight loop, never longer than a quiet run
// takes to expire on the server (30 s by default), which frees a place.
const (
	busyWaitMin = retryMin
	busyWaitMax = 30 * time.Second
)

// retryAfter reads a Retry-After in seconds (an HTTP date is read as well), bounded; retryMax
// when there is none.
func retryAfter(h http.Header) time.Duration {
	v := h.Get("Retry-After")
	d := retryMax
	if secs, err := strconv.Atoi(v); err == nil {
		d = time.Duration(secs) * time.Second
	} else if at, err := http.ParseTime(v); err == nil {
		d = time.Until(at)
	}
	return min(max(d, busyWaitMin), busyWaitMax)
}

// busyOnce says once that Baton is busy, and why.
func (c *client) busyOnce(b *busyServer) {
	if c.warnedBusy.CompareAndSwap(false, true) {
		c.log.Warn("baton is busy; the app runs on and runs are sent when it takes them (events beyond the buffer are dropped and counted)",
			"url", c.url, "error", b.msg, "retry_after", b.after)
	}
}

// post sends body as JSON, with the session's secret when not "", and decodes the answer into
// out (when not nil). Any answer tells the client Baton answers; no answer, that it does not.
func (c *client) post(path, secret string, body, out any) error {
	return c.postWith(c.stop, c.http, path, secret, body, out)
}

// postWith is post on hc, for as long as ctx lasts: a post that ctx ends says nothing of Baton.
func (c *client) postWith(ctx context.Context, hc *http.Client, path, secret string, body, out any) error {
	data, err := json.Marshal(body)
	if err != nil {
		return &refusal{msg: "encode: " + err.Error()}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url+path, bytes.NewReader(data))
	if err != nil {
		return &refusal{msg: err.Error()}
	}
	req.Header.Set("Content-Type", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if secret != "" {
		req.Header.Set(runSecretHeader, secret)
	}
	resp, err := hc.Do(req)
	if err != nil {
		if ctx.Err() == nil {
			c.health.lost()
		}
		return err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		c.health.lost()
		return fmt.Errorf("read the answer of %s: %w", path, err)
	}
	c.health.answered()
	switch {
	case resp.StatusCode == http.StatusConflict && resp.Header.Get("Retry-After") != "":
		// Another server sharing Baton's database records the run: retried as a busy server's
		// answer, as that server may stop and this one take the run over.
		return &busyServer{msg: fmt.Sprintf("%s: %s", resp.Status, errorOf(answer)), after: retryAfter(resp.Header)}
	case resp.StatusCode == http.StatusConflict:
		var stands sessionStands
		if json.Unmarshal(answer, &stands) == nil && (stands.Next > 0 || stands.Ended) {
			return &stands
		}
		return &refusal{msg: fmt.Sprintf("%s: %s", resp.Status, errorOf(answer)), status: resp.StatusCode}
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable:
		return &busyServer{msg: fmt.Sprintf("%s: %s", resp.Status, errorOf(answer)), after: retryAfter(resp.Header)}
	case resp.StatusCode >= 400 && resp.StatusCode < 500:
		return &refusal{msg: fmt.Sprintf("%s: %s", resp.Status, errorOf(answer)), status: resp.StatusCode}
	case resp.StatusCode >= 300:
		return fmt.Errorf("%s answered %s", c.url, resp.Status)
	case out != nil:
		return json.Unmarshal(answer, out)
	}
	return nil
}

// errorOf returns the message of an error answer: its "error", or else its text.
func errorOf(answer []byte) string {
	var e struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(answer, &e) != nil || e.Error == "" {
		return strings.TrimSpace(string(answer))
	}
	return e.Error
}
