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
	var ans rowsAnswer
	if kept := s.feeds.keptRows(rec); kept != nil {
		ans = keptRowsAnswer(kept, rec, filter, after, before, int(limit), dir == "forward", count)
	} else {
		f := s.feeds.acquire(rec)
		ans = f.findRows(filter, after, before, int(limit), dir == "forward", count)
		s.feeds.release(f)
	}
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

// keptRows returns the rows kept of rec's page (keptFetches) as of its newest event, when no
// feed holds rec: the page's feed has gone, and its rows are served without taking the run in
// again. nil when none are kept, or a feed holds the run (which has its search texts made).
func (fs *feeds) keptRows(rec *traces.Recording) *web.KeptRows {
	fs.mu.Lock()
	held := fs.m[rec] != nil
	fs.mu.Unlock()
	if held {
		return nil
	}
	if kf := fs.digests.fetchesOf(rec, rec.Len()); kf != nil {
		return kf.rows
	}
	return nil
}

// keptRowsAnswer is feed.findRows's answer, from rows kept of rec's run (web.KeptRows).
func keptRowsAnswer(kept *web.KeptRows, rec *traces.Recording, filter web.RowFilter, after, before int64, limit int, forward, count bool) rowsAnswer {
	p := kept.FindRows(rec, filter, after, before, limit, forward)
	ans := rowsAnswer{Reached: p.Reached, Head: kept.Seq(), rows: p.Rows}
	if count {
		ans.Matches, ans.Events = kept.CountRows(rec, filter)
	}
	return ans
}
