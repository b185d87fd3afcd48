package server

import (
	"encoding/json"
	"slices"
	"sync"
	"time"

	"github.com/gorilla/websocket"
	"github.com/labstack/echo/v4"
)

// typingRoute is the run page's websocket of the replies being streamed.
const typingRoute = "/runs/:id/typing"

func (s *Server) typingRoutes(e *echo.Echo) {
	e.GET(typingRoute, s.streamTyping)
}

// typedReply is a streamed reply as the typing socket sends it: agent's text so far.
type typedReply struct {
	Agent string `json:"agent"`
	Text  string `json:"text"`
}

// typing holds a running run's replies that are being streamed, by agent, for its pages. Safe
// for concurrent use.
type typing struct {
	mu      sync.Mutex
	replies map[string]string
	changed chan struct{} // closed, and replaced, at each change
}

func newTyping() *typing {
	return &typing{replies: map[string]string{}, changed: make(chan struct{})}
}

// set is agents.Typing: agent's reply reads text so far; a done reply is no longer shown.
func (t *typing) set(agent, text string, done bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if done {
		delete(t.replies, agent)
	} else {
		t.replies[agent] = text
	}
	close(t.changed)
	t.changed = make(chan struct{})
}

// now returns the replies being streamed, sorted by agent, and a channel closed at the next change.
func (t *typing) now() ([]typedReply, <-chan struct{}) {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]typedReply, 0, len(t.replies))
	for a, text := range t.replies {
		out = append(out, typedReply{Agent: a, Text: text})
	}
	slices.SortFunc(out, func(a, b typedReply) int {
		if a.Agent < b.Agent {
			return -1
		}
		return 1
	})
	return out, t.changed
}

// typingMinGap spaces the messages of a typing socket: a page needs no more than about 30 a
// second, and a fast stream's chunks are coalesced, never queued.
const typingMinGap = 30 * time.Millisecond

// streamTyping serves GET /runs/:id/typing, a websocket: while the run goes on, a JSON array of
// the replies being streamed ([{"agent","text"}], the text so far; [] when none) each time it
// changes, at most every 30 ms. It closes normally when the run ends, and at once for a run that
// is over or not started here. The replies reach the trace only once complete; this is the
// preview.
func (s *Server) streamTyping(c echo.Context) error {
	rec, err := s.broker.Get(c.Param("id"))
	if err != nil {
		return err
	}
	t := s.runs.typing(rec.ID())
	sk, err := s.openSocket(c)
	if err != nil {
		return err
	}
	defer sk.end()
	if t == nil {
		sk.close(websocket.CloseNormalClosure, "run not running")
		return nil
	}
	ticker := time.NewTicker(pingPeriod)
	defer ticker.Stop()
	var last []typedReply
	for sent := false; ; sent = true {
		replies, changed := t.now()
		if !sent || !slices.Equal(replies, last) {
			data, err := json.Marshal(replies)
			if err != nil {
				return err
			}
			if err := sk.send(data); err != nil {
				return nil
			}
			last = replies
		}
		select {
		case <-sk.ctx.Done():
			return nil
		case <-sk.away:
			sk.close(websocket.CloseGoingAway, "server shutting down")
			return nil
		case <-rec.Done():
			sk.close(websocket.CloseNormalClosure, "run finished")
			return nil
		case <-ticker.C:
			if sk.ping() != nil {
				return nil
			}
		case <-changed:
			time.Sleep(typingMinGap) // coalesce a burst of chunks into one message
		}
	}
}
