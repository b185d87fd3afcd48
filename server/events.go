package server

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/gorilla/websocket"
	"github.com/labstack/echo/v4"

	"github.com/baton-dev/baton/traces"
)

func (s *Server) eventRoutes(e *echo.Echo) {
	e.GET("/api/runs/:id/events", s.streamEvents)
}

// streamEvents serves GET /api/runs/:id/events?after=N, a websocket: every event with seq > N
// (all when after is absent) as one JSON text message in the trace format's event shape, then the
// live ones. When the run ends the socket closes normally after run.finished; a viewer that falls
// too far behind is closed with CloseTooSlow and "too slow; resume with after=N", N being the
// last event it was sent, so reconnecting with that after loses and repeats nothing.
func (s *Server) streamEvents(c echo.Context) error {
	return s.serveSubscription(c, s.writeEvents)
}

// serveSubscription answers a run's websocket route: it upgrades the request and subscribes to
// the run's events after ?after=N (0 when absent), then lets write serve the socket. Unknown runs
// and bad values of after are answered before the upgrade, as JSON errors.
func (s *Server) serveSubscription(c echo.Context, write func(sk *socket, rec *traces.Recording, sub *traces.Subscription, after int64)) error {
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
	sub := rec.Subscribe(after)
	defer sub.Cancel()
	write(sk, rec, sub, after)
	return nil
}

// writeEvents is the events socket's writer loop; last is the seq the viewer has already.
func (s *Server) writeEvents(sk *socket, rec *traces.Recording, sub *traces.Subscription, last int64) {
	ticker := time.NewTicker(pingPeriod)
	defer ticker.Stop()
	away := sk.away
	for {
		select {
		case <-sk.ctx.Done():
			return // the peer left
		case <-away:
			if sk.goAway(rec, last) {
				return
			}
			away = nil
		case <-ticker.C:
			if sk.ping() != nil {
				return
			}
		case ev, ok := <-sub.C():
			if !ok {
				var slow *traces.SlowError
				if errors.As(sub.Err(), &slow) {
					sk.closeTooSlow(last)
				} else {
					sk.close(websocket.CloseNormalClosure, "run finished")
				}
				return
			}
			if ev.Seq <= last {
				continue // after was beyond the end of the run when the viewer subscribed
			}
			data, err := json.Marshal(ev)
			if err != nil {
				s.log.Error("encode event", "seq", ev.Seq, "error", err)
				sk.close(websocket.CloseInternalServerErr, "internal error")
				return
			}
			if err := sk.send(data); err != nil {
				if errors.Is(err, errTooSlow) {
					sk.closeTooSlow(ev.Seq)
				}
				return
			}
			last = ev.Seq
		}
	}
}
