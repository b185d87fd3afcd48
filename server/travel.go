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
	t, err := f.at(s.feeds.travel(rec), seq, 0)
	s.feeds.release(f)
	if err != nil {
		return err
	}
	u := t.view.Redraw()
	u.Stats.Away = t.away
	frags, err := templates.Parts(c.Request().Context(), u)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, travelStep{Seq: seq, Head: t.head, Fragments: frags})
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
	t, err := f.at(s.feeds.travel(rec), seq, pageRows)
	d := f.digest()
	opts.Findings, opts.Story = d.findings, d.story
	s.feeds.release(f)
	if err != nil {
		return err
	}
	v := t.view.View()
	v.Timeline, v.Stats.Away = t.rows, t.away
	ev := t.view.Trace().Events
	opts.Travel = &templates.Travel{At: seq, Head: t.head, Status: t.status, Kind: ev[len(ev)-1].Kind}
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

// travelled is a run as of one of its events, for a page put there.
type travelled struct {
	view   *web.ViewState // the run as of the event
	rows   []web.Row      // the timeline rows of the run's newest events, when asked for
	head   int64          // the run's newest event
	status traces.Status  // the run's status as of head
	away   *web.Away      // where the page stands in the run; nil at head
}

// at returns the run as of event seq: the view state replayed up to it, with the timeline rows of
// the run's newest rows events, the run's newest event and status, and where a page at seq
// stands. A seq past the newest event is refused: the page would claim a state the run has not
// reached. The replay, from travel's copy nearest before seq, runs without holding the feed, so
// live viewers never wait for it.
func (f *feed) at(travel *web.Travel, seq int64, rows int) (travelled, error) {
	f.mu.Lock()
	t := travelled{head: f.view.Seq(), status: f.view.Status(), away: f.view.AwayAt(seq)}
	tr := f.view.Trace()
	if rows > 0 && seq <= t.head {
		var after int64
		if ev := f.view.Events(0, 0); len(ev) > rows {
			after = ev[len(ev)-rows-1].Seq
		}
		t.rows = f.view.Rows(after, 0)
	}
	f.mu.Unlock()
	if t.head == 0 {
		return t, traces.Errorf(traces.CodeInvalid, "at=%d: the run has no events yet; open the page without at", seq)
	}
	if seq > t.head {
		return t, traces.Errorf(traces.CodeInvalid, "at=%d is past the run's last event: choose 1 to %d", seq, t.head)
	}
	t.view = travel.At(tr, seq)
	return t, nil
}
