package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/gorilla/websocket"
	"github.com/labstack/echo/v4"

	"github.com/baton-dev/baton/traces"
)

// liveRoute is a websocket, not a page: its errors are JSON.
const liveRoute = "/runs/:id/live"

func (s *Server) liveRoutes(e *echo.Echo) {
	e.GET(liveRoute, s.streamLive)
}

// liveDropped is the last message to a page that took too long to accept one: reconnect with
// after=ResumeAfter.
type liveDropped struct {
	Error       string `json:"error"`
	ResumeAfter int64  `json:"resume_after"`
}

// streamLive serves GET /runs/:id/live?after=N, the run page's websocket. Whenever the run's feed
// has news, or the run's pace changes, the page gets one message that brings it to the feed's
// newest event (in parts when it is far behind); when the run has ended and the page has it all,
// the socket closes normally. A page that takes too long to accept a message gets a liveDropped
// message and a CloseTooSlow close, both saying where to resume.
func (s *Server) streamLive(c echo.Context) error {
	return s.serveFeed(c, s.writeLive)
}

// writeLive is the live socket's writer loop; after is the seq the page shows already.
func (s *Server) writeLive(sk *socket, f *feed, after int64) {
	ticker := time.NewTicker(pingPeriod)
	defer ticker.Stop()
	page := pageState{seq: after, paceMS: -1}
	pace, paceChanged := s.runs.pace(f.rec.ID())
	away := sk.away
	for {
		var paceMS *int64
		if pace.known {
			paceMS = new(pace.d.Milliseconds())
		}
		msg, next, over, wake, err := f.liveMessage(sk.ctx, page, paceMS)
		if err != nil {
			if sk.ctx.Err() == nil {
				s.log.Error("render live fragments", "run", f.rec.ID(), "from", page.seq, "error", err)
				sk.close(websocket.CloseInternalServerErr, "internal error")
			}
			return
		}
		if msg != nil {
			err := sk.sendPieces(msg)
			if err == nil || errors.Is(err, errTooSlow) {
				page = next // taken, if late
			}
			if errors.Is(err, errTooSlow) {
				reason := fmt.Sprintf("too slow; resume with after=%d", page.seq)
				drop, _ := json.Marshal(liveDropped{Error: "this page took too long to accept an update; " + reason, ResumeAfter: page.seq})
				if sk.send(drop) == nil {
					sk.closeTooSlow(page.seq)
				}
			}
			if err != nil {
				return
			}
			continue
		}
		if over {
			sk.close(websocket.CloseNormalClosure, "run finished")
			return
		}
		select {
		case <-sk.ctx.Done():
			return // the peer left
		case <-away:
			if sk.goAway(f.rec, page.seq) {
				return
			}
			away = nil
		case <-ticker.C:
			if sk.ping() != nil {
				return
			}
		case <-paceChanged:
			pace, paceChanged = s.runs.pace(f.rec.ID())
		case <-wake:
		}
	}
}

// pageState is what the page shows, as far as the socket has told it.
type pageState struct {
	seq    int64
	status traces.Status // "" until the first update
	paceMS int64         // -1 until the first update
}
