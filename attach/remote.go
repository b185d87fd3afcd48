package attach

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
	maxBatch        = 512              // events in one post
	heartbeatEvery  = 5 * time.Second  // an open run says it is alive at least this often
	endingHeartbeat = time.Second      // as often while the server holds its ending mark
	postTimeout     = 10 * time.Second // one post, so a stalled server cannot hold a run forever
	retryMin        = 250 * time.Millisecond
	retryMax        = 5 * time.Second
)

// client streams runs to one Baton server (the ingestion protocol is in the README).
type client struct {
	url, token string
	buffer     int
	http       *http.Client
	log        *slog.Logger
	warned     atomic.Bool // Baton was said to be unreachable
	down       atomic.Bool // the latest post failed to reach Baton

	senders sync.WaitGroup     // one per run being sent
	stop    context.Context    // done when Close gives up on what is left
	abandon context.CancelFunc // ends stop
}

func newClient(cfg Config) *client {
	stop, abandon := context.WithCancel(context.Background())
	return &client{
		url:     strings.TrimSuffix(cfg.URL, "/"),
		token:   cfg.Token,
		buffer:  cfg.Buffer,
		http:    &http.Client{Timeout: postTimeout},
		log:     cfg.Logger,
		stop:    stop,
		abandon: abandon,
	}
}

// close waits until every run is delivered or ctx is done, then stops sending what is left.
func (c *client) close(ctx context.Context) error {
	delivered := make(chan struct{})
	go func() {
		c.senders.Wait()
		close(delivered)
	}()
	select {
	case <-delivered:
		c.abandon()
		return nil
	case <-ctx.Done():
	}
	c.abandon()
	<-delivered
	return fmt.Errorf("baton: runs not delivered to %s: %w", c.url, ctx.Err())
}

// run returns the sink of one run. Nothing is sent before its first event.
func (c *client) run(conversation string) *remoteRun {
	return &remoteRun{c: c, conversation: conversation, wake: make(chan struct{}, 1), senderDone: make(chan struct{})}
}

// remoteRun is a Sink that streams one run to the server. Emit, PutAgent and Finish only queue
// and never wait: one goroutine per run, started by the first event and ended with the run's
// last post, does the sending.
type remoteRun struct {
	c            *client
	conversation string
	wake         chan struct{}

	mu       sync.Mutex
	events   []traces.Event // queued, numbered 1, 2, 3... in this run's stream
	agents   []queuedAgent  // queued tree changes, the latest of each agent
	changes  int            // tree changes so far, to tell a sent agent from a newer one
	seq      int64
	lost     int64 // events dropped since the last one queued
	started  bool
	finished bool
	// ending is how the run ends should nothing follow (see Ending), sent with every post until
	// an event comes after it; endingSent is closed once a post delivered it with the queue.
	ending     *traces.RunMark
	endingSent chan struct{}
	// senderDone is closed when the run's sender has ended (delivered, refused or given up);
	// after is the senderDone of the part before, when this run resumes one sent from this
	// process (see follow).
	senderDone chan struct{}
	after      <-chan struct{}
}

// Emit queues e, or counts it lost when the queue is full: the next event that fits is preceded
// by a lost event saying how many were dropped there.
func (s *remoteRun) Emit(e traces.Event) traces.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.finished {
		return e
	}
	if e.Time.IsZero() {
		e.Time = time.Now().UTC()
	}
	if len(s.events)+btoi(s.lost > 0) >= s.c.buffer {
		s.lost++
		return e
	}
	if s.lost > 0 {
		s.queue(traces.Event{Time: e.Time, Kind: traces.KindLost, Lost: &traces.Lost{Count: s.lost}})
		s.lost = 0
	}
	s.ending = nil // the run went on
	return s.queue(e)
}

// Ending sends everything queued with how the run ends should nothing follow, and waits until it
// is delivered or wait has passed; it does not wait while Baton is unreachable. The recorder
// calls it at the last moment the app cannot yet have seen its run end, so that an app that exits
// at once still has its run delivered and ended right.
func (s *remoteRun) Ending(status traces.Status, errMsg string, wait time.Duration) {
	s.mu.Lock()
	if s.finished || !s.started {
		s.mu.Unlock()
		return
	}
	s.ending = &traces.RunMark{Status: status, Error: errMsg}
	sent := make(chan struct{})
	s.endingSent = sent
	s.signal()
	s.mu.Unlock()
	if s.c.down.Load() {
		return
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-sent:
	case <-t.C:
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

// Finish queues run.finished, past the buffer's bound if need be: the end is never dropped.
func (s *remoteRun) Finish(status traces.Status, errMsg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.finished {
		return
	}
	e := traces.Event{Time: time.Now().UTC(), Kind: traces.KindRunFinished, Run: &traces.RunMark{Status: status, Error: errMsg}}
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

// pending returns what waits to be sent (at most maxBatch events, and the tree changes) and
// whether it ends the run. The queue keeps it until sent says it was delivered.
func (s *remoteRun) pending() (b ingestBatch, agents []queuedAgent, last bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := min(len(s.events), maxBatch)
	agents = slices.Clone(s.agents)
	b = ingestBatch{Events: s.events[:n:n], Agents: agentsOf(agents)}
	if n == len(s.events) {
		b.Ending = s.ending
	}
	return b, agents, s.finished && n == len(s.events)
}

// sent drops what a post delivered from the queue: its events, and its agents unless they
// changed again meanwhile; it tells a waiting Ending when its mark went out.
func (s *remoteRun) sent(b ingestBatch, agents []queuedAgent) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = s.events[len(b.Events):]
	s.agents = slices.DeleteFunc(s.agents, func(q queuedAgent) bool {
		return slices.ContainsFunc(agents, func(d queuedAgent) bool { return d.change == q.change })
	})
	if b.Ending != nil && b.Ending == s.ending && s.endingSent != nil {
		close(s.endingSent)
		s.endingSent = nil
	}
}

// agentsOf returns the agents of queued changes.
func agentsOf(qs []queuedAgent) []traces.Agent {
	out := make([]traces.Agent, len(qs))
	for i, q := range qs {
		out[i] = q.Agent
	}
	return out
}

// send is the run's sender: it registers the run (once the part before it is delivered, when it
// resumes one sent from this process), then posts what is queued until run.finished is
// delivered. It retries while the server is unreachable; a server that refuses the run ends it.
func (s *remoteRun) send(first traces.Event) {
	if !s.awaitPredecessor() {
		return
	}
	id := ""
	var w wire
	retry := retryMin
	heartbeat := time.NewTimer(heartbeatEvery)
	defer heartbeat.Stop()
	for {
		batch, agents, last := s.pending()
		var err error
		if id == "" {
			id, err = s.create(first, batch.Agents)
			if err == nil {
				s.sent(ingestBatch{}, agents)
				continue
			}
		} else {
			if batch.Wire, err = w.array(batch.Events); err != nil {
				err = &refusal{msg: "encode: " + err.Error()}
			} else {
				err = s.c.post("/api/ingest/"+id, batch, nil)
			}
			if err == nil {
				w.sent(len(batch.Events))
				s.sent(batch, agents)
				if last {
					return
				}
				retry = retryMin
				if len(batch.Events) == maxBatch {
					continue
				}
			}
		}
		var refused *refusal
		switch {
		case errors.As(err, &refused):
			s.c.log.Warn("baton refused this run; it is no longer recorded", "url", s.c.url, "error", refused.msg)
			s.drop()
			return
		case s.c.stop.Err() != nil:
			return
		case err != nil:
			s.c.unreachable(err)
			select {
			case <-time.After(retry):
			case <-s.c.stop.Done():
				return
			}
			retry = min(2*retry, retryMax)
			continue
		}
		every := heartbeatEvery
		if batch.Ending != nil {
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

// drop discards the run after the server refused it.
func (s *remoteRun) drop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.finished = true
	s.events, s.agents = nil, nil
}

// ingestRun is the body of POST /api/ingest.
type ingestRun struct {
	Run     ingestLabels   `json:"run"`
	Agents  []traces.Agent `json:"agents"`
	Resumes string         `json:"resumes,omitempty"`
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
	Events []traces.Event  `json:"-"`      // what the post delivers
	Wire   json.RawMessage `json:"events"` // Events in the compact form (see wire)
	Agents []traces.Agent  `json:"agents,omitempty"`
	Ending *traces.RunMark `json:"ending,omitempty"`
}

// wire is the sender's encoding of a run's events in the compact form of the trace format's
// current version, which the server reads: an input that extends an earlier event's refers to
// it, so a growing conversation is sent in size linear in its messages. Each event is encoded
// once, in order, and kept until delivered, so that a post sent again carries the same bytes.
type wire struct {
	enc     traces.EventEncoder
	encoded [][]byte // the queue's first events, encoded
}

// array returns events, the queue's first ones, as a JSON array, encoding those not yet encoded.
func (w *wire) array(events []traces.Event) ([]byte, error) {
	out := []byte{'['}
	for i, e := range events {
		if i == len(w.encoded) {
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
func (w *wire) sent(n int) { w.encoded = w.encoded[n:] }

// create registers the run with the server, from its first event: run.started, or resumed when
// it continues an interrupted run, which the server then reopens.
func (s *remoteRun) create(first traces.Event, agents []traces.Agent) (string, error) {
	req := ingestRun{Run: ingestLabels{Model: "app", Conversation: s.conversation}, Agents: agents}
	if first.Run != nil {
		req.Run.Flow, req.Run.Input = first.Run.Flow, first.Run.Input
	}
	if first.Kind == traces.KindResumed && first.Interrupt != nil {
		req.Resumes = first.Interrupt.ID
	}
	if req.Agents == nil {
		req.Agents = []traces.Agent{}
	}
	var created struct {
		ID string `json:"id"`
	}
	if err := s.c.post("/api/ingest", req, &created); err != nil {
		return "", err
	}
	if created.ID == "" {
		return "", &refusal{msg: "the server answered without a run id"}
	}
	return created.ID, nil
}

// refusal is a 4xx answer: the server understood and said no; sending again will not help.
type refusal struct{ msg string }

func (e *refusal) Error() string { return e.msg }

// post sends body as JSON and decodes the answer into out (when not nil).
func (c *client) post(path string, body, out any) error {
	data, err := json.Marshal(body)
	if err != nil {
		return &refusal{msg: "encode: " + err.Error()}
	}
	req, err := http.NewRequestWithContext(c.stop, http.MethodPost, c.url+path, bytes.NewReader(data))
	if err != nil {
		return &refusal{msg: err.Error()}
	}
	req.Header.Set("Content-Type", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	c.down.Store(err != nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode >= 400 && resp.StatusCode < 500 && resp.StatusCode != http.StatusTooManyRequests {
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(answer, &e) != nil || e.Error == "" {
			e.Error = strings.TrimSpace(string(answer))
		}
		return &refusal{msg: fmt.Sprintf("%s: %s", resp.Status, e.Error)}
	}
	if resp.StatusCode >= 300 {
		return fmt.Errorf("%s answered %s", c.url, resp.Status)
	}
	if out != nil {
		return json.Unmarshal(answer, out)
	}
	return nil
}

// unreachable says once that Baton cannot be reached.
func (c *client) unreachable(err error) {
	if c.warned.CompareAndSwap(false, true) {
		c.log.Warn("baton is unreachable; the app runs on and runs are sent when it answers (events beyond the buffer are dropped and counted)",
			"url", c.url, "error", err.Error())
	}
}
