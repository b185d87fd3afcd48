package server

import (
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/internal/live"
	"github.com/baton-dev/baton/traces"
	"github.com/baton-dev/baton/web"
)

func (s *Server) runRoutes(e *echo.Echo) {
	e.GET("/api/runs", s.listRuns)
	e.POST("/api/runs", s.createRun)
	e.GET("/api/runs/:id/trace", s.getTrace)
	e.DELETE("/api/runs/:id", s.deleteRun)
	e.POST("/api/runs/:id/pace", s.setPace)
	e.POST("/api/runs/:id/resume", s.resumeRun)
	e.POST("/api/runs/:id/replay", s.replayRun)
	e.POST("/api/runs/:id/fork", s.forkRun)
	e.POST("/api/runs/:id/turn", s.turnRun)
	e.POST("/api/runs/:id/continue", s.continueRun)
	e.POST("/api/runs/:id/breakpoints", s.setBreakpoints)
}

// maxComment bounds a reviewer's comment, in bytes.
const maxComment = 2000

// resumeRun serves POST /api/runs/:id/resume {"approve", "comment"}: a person's decision on the
// interrupt a run started here ended at. The run resumes in the background, in the same trace;
// 202 {"id", "url"} once it is running again. "approve" (true or false) is required; "comment"
// is optional. 404 for an unknown run, 409 for a run that is not waiting for a decision here.
func (s *Server) resumeRun(c echo.Context) error {
	id := c.Param("id")
	if _, err := s.broker.Get(id); err != nil {
		return err
	}
	var d agents.Decision
	present, err := decodeJSON(c,
		jsonField{"approve", &d.Approve, "true or false"},
		jsonField{"comment", &d.Comment, "a string"},
	)
	if err != nil {
		return err
	}
	if !present["approve"] {
		return traces.Errorf(traces.CodeInvalid, `approve is required: true to approve what the run asks, false to reject it (with a "comment" saying why)`)
	}
	if len(d.Comment) > maxComment {
		return traces.Errorf(traces.CodeInvalid, "comment is %d bytes long; keep it under %d", len(d.Comment), maxComment)
	}
	if err := s.runs.resume(id, d); err != nil {
		return err
	}
	url := "/runs/" + id
	return c.JSON(http.StatusAccepted, createdRun{ID: id, URL: url})
}

// createdRun is the answer to POST /api/runs.
type createdRun struct {
	ID  string `json:"id"`
	URL string `json:"url"`
}

// createRun serves POST /api/runs {"flow", "input", "model", "pace_ms", "breakpoints"}: it starts
// a run in the background and answers 201 {"id", "url"} once the run is registered, so the URL
// works at once.
//
// "flow" is required. "model" is one of the server's models (see pickModel), its default when
// left out. Leaving "input" out (or null) runs the flow's default input; an "input"
// that is empty or only white space is a mistake and refused. "pace_ms" (0 to MaxPace) is the
// scripted model's delay before each reply; Config.DefaultPace when left out. "breakpoints" (see
// parseBreakpoints) makes the run one a person can hold and continue, from the start or later.
func (s *Server) createRun(c echo.Context) error {
	var req struct {
		flow, input, model string
		paceMS             int64
		breakpoints        []string
	}
	present, err := decodeJSON(c,
		jsonField{"flow", &req.flow, "a string"},
		jsonField{"input", &req.input, "a string"},
		jsonField{"model", &req.model, "a string"},
		jsonField{"pace_ms", &req.paceMS, "an integer number of milliseconds"},
		jsonField{"breakpoints", &req.breakpoints, `a list of breakpoints such as "transfer:math_agent"`},
	)
	if err != nil {
		return err
	}
	flow, err := s.lookupFlow(req.flow)
	if err != nil {
		return err
	}
	var debug *agents.Debugger
	if present["breakpoints"] {
		points, err := parseBreakpoints(&flow, req.breakpoints)
		if err != nil {
			return err
		}
		debug = agents.NewDebugger(points, nil)
	}
	model, err := s.pickModel(req.model, flow)
	if err != nil {
		return err
	}
	input := flow.DefaultInput
	if _, replayed, ok := model.Replays(); ok {
		input = replayed // the input the recorded replies answer
	}
	if present["input"] {
		if strings.TrimSpace(req.input) == "" {
			return traces.Errorf(traces.CodeInvalid,
				"input is empty: write what the flow should work on, or leave \"input\" out to use the flow's default input")
		}
		input = req.input
	}
	pace := s.cfg.DefaultPace
	if present["pace_ms"] {
		if pace, err = paceOf(req.paceMS); err != nil {
			return err
		}
	}
	run, err := s.runs.start(flow, input, conversationTurn{}, model, pace, debug)
	if err != nil {
		return err
	}
	return created(c, run)
}

// paceOf checks a pace in milliseconds.
func paceOf(ms int64) (time.Duration, error) {
	if ms < 0 || ms > MaxPace {
		return 0, traces.Errorf(traces.CodeInvalid, "pace_ms must be between 0 and %d, not %d", MaxPace, ms)
	}
	return time.Duration(ms) * time.Millisecond, nil
}

// setPace serves POST /api/runs/:id/pace {"pace_ms"}: 204 once the running run uses the new
// pace; 409 when the run is over.
func (s *Server) setPace(c echo.Context) error {
	id := c.Param("id")
	if _, err := s.broker.Get(id); err != nil {
		return err
	}
	var ms int64
	present, err := decodeJSON(c, jsonField{"pace_ms", &ms, "an integer number of milliseconds"})
	if err != nil {
		return err
	}
	if !present["pace_ms"] {
		return traces.Errorf(traces.CodeInvalid, "pace_ms is required: the new pace in milliseconds, 0 to %d", MaxPace)
	}
	pace, err := paceOf(ms)
	if err != nil {
		return err
	}
	if err := s.runs.setPace(id, pace); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// runItem is a run as GET /api/runs lists it: its summary, how long it ran (so far), and what its
// model calls cost when that is known (web.RunCost).
type runItem struct {
	live.RunSummary
	DurationMS int64    `json:"duration_ms"`
	CostUSD    *float64 `json:"cost_usd,omitempty"`
	Cost       string   `json:"cost,omitempty"`
}

// listRuns serves GET /api/runs?flow=&status=&q=&conversation=&limit=&after=: one page of run
// summaries, newest first, as a JSON array. When more follow, the Link header names the next
// page (rel="next"), which is the same query with after set.
func (s *Server) listRuns(c echo.Context) error {
	q, err := runQuery(c)
	if err != nil {
		return err
	}
	page, err := s.broker.List(q)
	if err != nil {
		return err
	}
	items := make([]runItem, len(page.Runs))
	now := time.Now()
	for i, r := range page.Runs {
		end := now
		if r.EndedAt != nil {
			end = *r.EndedAt
		}
		items[i] = runItem{RunSummary: r, DurationMS: max(0, end.Sub(r.StartedAt).Milliseconds())}
		usd, text, ok := web.RunCost(r, web.WithPrices(s.cfg.Prices))
		if ok {
			items[i].CostUSD = &usd
		}
		items[i].Cost = text // "no price for gpt-5", with no cost_usd, when a call's model has no price
	}
	if page.Next != "" {
		next := c.Request().URL.Query()
		next.Set("after", page.Next)
		c.Response().Header().Set("Link", fmt.Sprintf(`</api/runs?%s>; rel="next"`, next.Encode()))
	}
	return c.JSON(http.StatusOK, items)
}

// runQuery reads the list query of GET /api/runs and of the index page.
func runQuery(c echo.Context) (live.RunQuery, error) {
	q := live.RunQuery{Flow: c.QueryParam("flow"), Status: traces.Status(c.QueryParam("status")),
		Text: c.QueryParam("q"), Conversation: c.QueryParam("conversation"), After: c.QueryParam("after")}
	switch v := c.QueryParam("findings"); v {
	case "", "0":
	case "1":
		q.Findings = true
	default:
		return q, traces.Errorf(traces.CodeInvalid, "findings must be 1 (runs with handoff findings) or 0, not %q", clip(v, 20))
	}
	if v := c.QueryParam("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return q, traces.Errorf(traces.CodeInvalid, "limit must be a number of runs, 1 to %d, not %q", live.MaxPageSize, clip(v, 20))
		}
		q.Limit = n
	}
	return q, q.Check()
}

// deleteRun serves DELETE /api/runs/:id: 204 once the run is gone, here and from the store; 409
// while it goes on.
func (s *Server) deleteRun(c echo.Context) error {
	if err := s.broker.Delete(c.Param("id")); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// getTrace serves GET /api/runs/:id/trace: the trace so far in the trace file format;
// ?download=1 makes it an attachment named baton-{flow}-{id}.json.
func (s *Server) getTrace(c echo.Context) error {
	rec, err := s.broker.Get(c.Param("id"))
	if err != nil {
		return err
	}
	download := false
	if v := c.QueryParam("download"); v != "" {
		if download, err = strconv.ParseBool(v); err != nil {
			return traces.Errorf(traces.CodeInvalid, "download must be 1 or 0, not %q", clip(v, 20))
		}
	}
	tr, n, ended := endedRun(rec)
	if !ended {
		tr = rec.Snapshot()
	}
	if download {
		c.Response().Header().Set(echo.HeaderContentDisposition,
			fmt.Sprintf("attachment; filename=%q", "baton-"+fileSafe(tr.Run.Flow)+"-"+fileSafe(tr.Run.ID)+".json"))
	}
	// Written as it is made: a million-event trace is some 250 MB of text, which need never be
	// whole in memory. An error past the first block can only cut the body short.
	c.Response().Header().Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
	c.Response().WriteHeader(http.StatusOK)
	if ended {
		next, stop := readAhead(rec, n)
		err = traces.EncodeEvents(c.Response(), tr, next)
		stop()
	} else {
		err = traces.Encode(c.Response(), tr)
	}
	if err != nil {
		return fmt.Errorf("get trace of run %s: %w", tr.Run.ID, err)
	}
	return nil
}

var unsafeFileChars = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// fileSafe keeps a name to characters any file system and header accepts.
func fileSafe(s string) string {
	s = unsafeFileChars.ReplaceAllString(s, "_")
	if s == "" {
		return "run"
	}
	return s
}
