package server

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/baton-dev/baton/internal/story"
	"github.com/baton-dev/baton/templates"
	"github.com/baton-dev/baton/traces"
)

// diffPage serves GET /diff?a=RUN&b=RUN (or ?run=RUN&run=RUN, as the runs list's picks send it):
// the two runs' turns aligned by agent and handoff, the first divergence named.
func (s *Server) diffPage(c echo.Context) error {
	ids := []string{c.QueryParam("a"), c.QueryParam("b")}
	if picked := c.QueryParams()["run"]; len(picked) > 0 {
		ids = picked
	}
	if len(ids) != 2 || ids[0] == "" || ids[1] == "" {
		return traces.Errorf(traces.CodeInvalid, "a diff compares two runs: /diff?a=RUN&b=RUN, or pick two in the runs list (%d picked)", len(c.QueryParams()["run"]))
	}
	var trs [2]traces.Trace
	for i, id := range ids {
		rec, err := s.broker.Get(id)
		if err != nil {
			return err
		}
		trs[i] = rec.Snapshot()
	}
	cmp := story.Compare(story.Of(trs[0]), story.Of(trs[1]))
	cmp.Price(s.cfg.Prices.Run(trs[0].Run.Model), s.cfg.Prices.Run(trs[1].Run.Model))
	return render(c, http.StatusOK, templates.DiffPage(trs[0].Run, trs[1].Run, cmp, s.pageOptions("")))
}
