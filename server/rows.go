package server

import (
	"net/http"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/baton-dev/baton/templates"
	"github.com/baton-dev/baton/traces"
	"github.com/baton-dev/baton/web"
)

// rowsRoute serves timeline rows a run page has not loaded: a script's request, so its errors
// are JSON.
const rowsRoute = "/runs/:id/rows"

// pageRows is how many timeline rows a run page opens with, its newest; static/rows.js loads
// the rest on demand, as many at a time.
const pageRows = 400

// maxRowsLimit is the most rows one request of rowsRoute may ask for.
const maxRowsLimit = 2000

// rowsAnswer is the answer of rowsRoute: the rows' HTML (oldest first), how far the search went
// (web.RowPage's Reached) and the run's newest event when it was made; with count=1, how many
// rows of the run pass the filters (Matches) among how many (Events).
type rowsAnswer struct {
	HTML    string `json:"html"`
	Reached int64  `json:"reached"`
	Head    int64  `json:"head"`
	Matches int    `json:"matches"`
	Events  int    `json:"events"`
	rows    []web.Row
}

// rows serves GET /runs/:id/rows?after=A&before=B&limit=N&dir=forward|backward and the
// timeline's filters (agent, kind=a,b, failed=1, q): at most N rows that pass the filters among
// the events after A and before B (B 0 or absent: to the newest), the first ones forward, else
// the last ones; with count=1, how many rows pass them in the whole run.
func (s *Server) rows(c echo.Context) error {
	rec, err := s.broker.Get(c.Param("id"))
	if err != nil {
		return err
	}
	after, err := queryInt(c, "after", 0, 0)
	if err != nil {
		return err
	}
	before, err := queryInt(c, "before", 0, 0)
	if err != nil {
		return err
	}
	limit, err := queryInt(c, "limit", 1, pageRows)
	if err != nil {
		return err
	}
	if limit > maxRowsLimit {
		return traces.Errorf(traces.CodeInvalid, "limit must be at most %d, not %d: ask for the rest with after or before", maxRowsLimit, limit)
	}
	if before > 0 && before <= after+1 {
		return traces.Errorf(traces.CodeInvalid, "before (%d) must be more than after (%d) + 1: no event lies between them", before, after)
	}
	dir := c.QueryParam("dir")
	if dir != "" && dir != "forward" && dir != "backward" {
		return traces.Errorf(traces.CodeInvalid, "dir must be forward or backward, not %q", clip(dir, 40))
	}
	filter, err := rowFilter(c)
	if err != nil {
		return err
	}
	count := c.QueryParam("count") == "1"
	f := s.feeds.acquire(rec)
	ans := f.findRows(filter, after, before, int(limit), dir == "forward", count)
	s.feeds.release(f)
	html, err := templates.Rows(c.Request().Context(), ans.rows)
	if err != nil {
		return err
	}
	ans.HTML, ans.rows = strings.Join(html, ""), nil
	return c.JSON(http.StatusOK, ans)
}

// rowFilter reads the timeline's filters from the query: agent, kind (kind groups, comma
// separated), failed=1 and q.
func rowFilter(c echo.Context) (web.RowFilter, error) {
	f := web.RowFilter{Agent: c.QueryParam("agent"), Text: c.QueryParam("q")}
	if k := c.QueryParam("kind"); k != "" {
		for g := range strings.SplitSeq(k, ",") {
			if g == "" {
				continue
			}
			if !slices.Contains(web.KindGroups(), g) {
				return f, traces.Errorf(traces.CodeInvalid, "kind %q is not a kind group: use %s", clip(g, 40), strings.Join(web.KindGroups(), ", "))
			}
			f.Groups = append(f.Groups, g)
		}
	}
	switch c.QueryParam("failed") {
	case "", "0":
	case "1":
		f.Failed = true
	default:
		return f, traces.Errorf(traces.CodeInvalid, "failed must be 1 or 0, not %q", clip(c.QueryParam("failed"), 40))
	}
	return f, nil
}
