package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/gorilla/websocket"
	"github.com/labstack/echo/v4"

	"github.com/baton-dev/baton/templates"
	"github.com/baton-dev/baton/traces"
)

// liveRoute is a websocket, not a page: its errors are JSON.
const liveRoute = "/runs/:id/live"

func (s *Server) liveRoutes(e *echo.Echo) {
	e.GET(liveRoute, s.streamLive)
}

// liveUpdate is one message of the run page's websocket: the HTML fragments that bring the page
// from its previous seq to Seq, and the run's pace (absent for a run not started here), which
// another page may have changed.
type liveUpdate struct {
	Seq       int64                `json:"seq"`
	Status    traces.Status        `json:"status"`
	PaceMS    *int64               `json:"pace_ms,omitempty"`
	Fragments []templates.Fragment `json:"fragments"`
}

// liveDropped is the last message to a page that fell too far behind: reconnect with
// after=ResumeAfter.
type liveDropped struct {
	Error       string `json:"error"`
	ResumeAfter int64  `json:"resume_after"`
}

// streamLive serves GET /runs/:id/live?after=N, the run page's websocket. Each time events arrive
// it takes what is queued as one batch and sends one liveUpdate rendered from a snapshot, as it
// does when the run's pace changes; when the run ends it sends the final state and closes
// normally; a page that falls too far behind gets a liveDropped message and a CloseTooSlow close.
func (s *Server) streamLive(c echo.Context) error {
	return s.serveSubscription(c, s.writeLive)
}

// writeLive is the live socket's writer loop; last is the seq the page shows already.
func (s *Server) writeLive(sk *socket, rec *traces.Recording, sub *traces.Subscription, last int64) {
	ticker := time.NewTicker(pingPeriod)
	defer ticker.Stop()
	page := pageState{seq: last, paceMS: -1}
	pace, paceChanged := s.runs.pace(rec.ID())
	away := sk.away
	for {
		select {
		case <-sk.ctx.Done():
			return // the peer left
		case <-away:
			if sk.goAway(rec, page.seq) {
				return
			}
			away = nil
		case <-ticker.C:
			if sk.ping() != nil {
				return
			}
		case <-paceChanged:
			pace, paceChanged = s.runs.pace(rec.ID())
			if !s.sendLive(sk, rec.Snapshot(), pace, &page) {
				return
			}
		case _, ok := <-sub.C():
			// The events themselves are not needed: the snapshot has them and more.
			if ok && !drain(sub.C()) {
				if !s.sendLive(sk, rec.Snapshot(), pace, &page) {
					return
				}
				continue
			}
			var slow *traces.SlowError
			if errors.As(sub.Err(), &slow) {
				reason := fmt.Sprintf("too slow; resume with after=%d", page.seq)
				msg, _ := json.Marshal(liveDropped{Error: "this page fell too far behind the run; " + reason, ResumeAfter: page.seq})
				if sk.send(msg) == nil {
					sk.closeTooSlow(page.seq)
				}
				return
			}
			// The run ended: the snapshot holds its final state.
			pace, _ = s.runs.pace(rec.ID())
			if s.sendLive(sk, rec.Snapshot(), pace, &page) {
				sk.close(websocket.CloseNormalClosure, "run finished")
			}
			return
		}
	}
}

// pageState is what the page shows, as far as the socket has told it.
type pageState struct {
	seq    int64
	status traces.Status // "" until the first update
	paceMS int64         // -1 until the first update
}

// drain takes every event queued on ch without waiting and reports whether ch is closed.
func drain(ch <-chan traces.Event) (closed bool) {
	for {
		select {
		case _, ok := <-ch:
			if !ok {
				return true
			}
		default:
			return false
		}
	}
}

// sendLive brings the page from its state to tr's and pace, if tr is newer or its status or the
// pace changed: one liveUpdate with the fragments for the events after page.seq. It reports
// whether the socket may go on; when not, it has closed the socket as fits: too slow (with where
// to resume) or an internal error for a rendering failure.
func (s *Server) sendLive(sk *socket, tr traces.Trace, pace runPace, page *pageState) bool {
	seq := page.seq
	if n := len(tr.Events); n > 0 {
		seq = max(seq, tr.Events[n-1].Seq)
	}
	var paceMS *int64
	if pace.known {
		paceMS = new(pace.d.Milliseconds())
	}
	if seq == page.seq && tr.Run.Status == page.status && (paceMS == nil || *paceMS == page.paceMS) {
		return true
	}
	frags, err := templates.Fragments(sk.ctx, tr, page.seq)
	if err == nil {
		if frags == nil {
			frags = []templates.Fragment{}
		}
		var msg []byte
		if msg, err = json.Marshal(liveUpdate{Seq: seq, Status: tr.Run.Status, PaceMS: paceMS, Fragments: frags}); err == nil {
			err = sk.send(msg)
			if err == nil || errors.Is(err, errTooSlow) {
				page.seq, page.status = seq, tr.Run.Status // taken, if late
				if paceMS != nil {
					page.paceMS = *paceMS
				}
			}
			if errors.Is(err, errTooSlow) {
				sk.closeTooSlow(page.seq)
			}
			return err == nil
		}
	}
	if sk.ctx.Err() != nil {
		return false // the peer left; Fragments gave up with it
	}
	s.log.Error("render live fragments", "run", tr.Run.ID, "from", page.seq, "error", err)
	sk.close(websocket.CloseInternalServerErr, "internal error")
	return false
}
