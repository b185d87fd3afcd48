package server

import (
	"errors"
	"time"

	"github.com/gorilla/websocket"
	"github.com/labstack/echo/v4"
)

func (s *Server) eventRoutes(e *echo.Echo) {
	e.GET("/api/runs/:id/events", s.streamEvents)
}

// streamEvents serves GET /api/runs/:id/events?after=N, a websocket: the events with seq > N
// (all when after is absent), then the live ones, in the trace format's event shape, as JSON
// arrays of one or more events per message: all that arrived since the previous message, up to
// about maxFrame bytes, never held back to wait for more. When the run ends the socket closes
// normally after run.finished; a viewer that takes too long to accept a message is closed with
// CloseTooSlow and "too slow; resume with after=N", N being the last event it was sent, so
// reconnecting with that after loses and repeats nothing.
func (s *Server) streamEvents(c echo.Context) error {
	return s.serveFeed(c, s.writeEvents)
}

// serveFeed answers a run's websocket route: it upgrades the request and lets write serve the
// socket from the run's feed, from ?after=N (0 when absent). Unknown runs and bad values of after
// are answered before the upgrade, as JSON errors.
func (s *Server) serveFeed(c echo.Context, write func(sk *socket, f *feed, after int64)) error {
	rec, err := s.broker.Get(c.Param("id"))
	if err != nil {
		return err
	}
	after, err := queryInt(c, "after", 0, 0)
	if err != nil {
		return err
	}
	sk, err := s.openSocket(c)
	if err != nil {
		return err
	}
	defer sk.end()
	f := s.feeds.acquire(rec)
	defer s.feeds.release(f)
	write(sk, f, after)
	return nil
}

// writeEvents is the events socket's writer loop; last is the seq the viewer has already.
func (s *Server) writeEvents(sk *socket, f *feed, last int64) {
	since := last
	ticker := time.NewTicker(pingPeriod)
	defer ticker.Stop()
	away := sk.away
	for {
		msg, through, over, wake := f.events(since, last)
		if msg != nil {
			if err := sk.send(msg); err != nil {
				if errors.Is(err, errTooSlow) {
					sk.closeTooSlow(through) // it has them, if late
				}
				return
			}
			last = through
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
			if sk.goAway(f.rec, last) {
				return
			}
			away = nil
		case <-ticker.C:
			if sk.ping() != nil {
				return
			}
		case <-wake:
		}
	}
}
