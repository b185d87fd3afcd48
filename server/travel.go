package server

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/baton-dev/baton/templates"
	"github.com/baton-dev/baton/traces"
	"github.com/baton-dev/baton/web"
)

// travelRoute serves the run page's parts as of one event, for the page's scrubber: a script's
// request, so its errors are JSON.
const travelRoute = "/runs/:id/at/:seq"

// travelStep is the answer of travelRoute: the fragments that put the run page as of event Seq
// (the same the live socket swaps: header, outcome, tree, session), and the run's newest event.
type travelStep struct {
	Seq       int64                `json:"seq"`
	Head      int64                `json:"head"`
	Fragments []templates.Fragment `json:"fragments"`
}

// travelStep serves GET /runs/:id/at/:seq.
func (s *Server) travelStep(c echo.Context) error {
	rec, err := s.broker.Get(c.Param("id"))
	if err != nil {
		return err
	}
	seq, err := parseSeq(c.Param("seq"))
	if err != nil {
		return err
	}
	f := s.feeds.acquire(rec)
	at, _, head, _, err := f.at(s.feeds.travel(rec), seq, 0)
	s.feeds.release(f)
	if err != nil {
		return err
	}
	frags, err := templates.Parts(c.Request().Context(), at.Redraw())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, travelStep{Seq: seq, Head: head, Fragments: frags})
}

// runPageAt serves GET /runs/:id?at=SEQ: the run page as of event SEQ, with the whole run's
// timeline (its newest rows, as on the page at the head: the script loads the rows around SEQ);
// the page's script follows the run from its newest event without showing it.
func (s *Server) runPageAt(c echo.Context, rec *traces.Recording, opts templates.PageOptions) error {
	seq, err := parseSeq(c.QueryParam("at"))
	if err != nil {
		return err
	}
	f := s.feeds.acquire(rec)
	at, rows, head, status, err := f.at(s.feeds.travel(rec), seq, pageRows)
	s.feeds.release(f)
	if err != nil {
		return err
	}
	v := at.View()
	v.Timeline = rows
	ev := at.Trace().Events
	opts.Travel = &templates.Travel{At: seq, Head: head, Status: status, Kind: ev[len(ev)-1].Kind}
	return render(c, http.StatusOK, templates.RunView(v, opts))
}

// parseSeq reads the seq of an event to travel to.
func parseSeq(v string) (int64, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 1 {
		return 0, traces.Errorf(traces.CodeInvalid, "at must be the seq of an event of the run, an integer from 1, not %q", clip(v, 40))
	}
	return n, nil
}

// at returns the run as of event seq: the view state replayed up to it, with the timeline rows of
// the run's newest rows events, and the run's newest event and status. A seq past the newest
// event is refused: the page would claim a state the run has not reached. The replay, from
// travel's copy nearest before seq, runs without holding the feed, so live viewers never wait
// for it.
func (f *feed) at(travel *web.Travel, seq int64, rows int) (at *web.ViewState, all []web.Row, head int64, status traces.Status, err error) {
	f.mu.Lock()
	head, status = f.view.Seq(), f.view.Status()
	tr := f.view.Trace()
	if rows > 0 && seq <= head {
		var after int64
		if ev := f.view.Events(0, 0); len(ev) > rows {
			after = ev[len(ev)-rows-1].Seq
		}
		all = f.view.Rows(after, 0)
	}
	f.mu.Unlock()
	if head == 0 {
		return nil, nil, 0, status, traces.Errorf(traces.CodeInvalid, "at=%d: the run has no events yet; open the page without at", seq)
	}
	if seq > head {
		return nil, nil, 0, status, traces.Errorf(traces.CodeInvalid, "at=%d is past the run's last event: choose 1 to %d", seq, head)
	}
	return travel.At(tr, seq), all, head, status, nil
}
