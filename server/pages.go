package server

import (
	"cmp"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/baton-dev/baton/internal/live"
	"github.com/baton-dev/baton/static"
	"github.com/baton-dev/baton/templates"
	"github.com/baton-dev/baton/traces"
	"github.com/baton-dev/baton/web"
)

// inspectorRoute serves an HTML fragment, not a page: its errors are JSON.
const inspectorRoute = "/runs/:id/inspector"

func (s *Server) pageRoutes(e *echo.Echo) {
	e.GET("/", s.indexPage)
	e.GET("/runs/:id", s.runPage)
	e.GET(inspectorRoute, s.inspector)
	e.GET(travelRoute, s.travelStep)
	e.GET(sequenceRoute, s.sequenceData)
	e.GET(historiesRoute, s.histories)
	e.GET(rowsRoute, s.rows)
	e.GET(reportRoute, s.report)
	e.GET("/compare", s.comparePage)
	e.GET("/diff", s.diffPage)
	e.StaticFS("/static/", static.FS)
}

// pageOptions are the settings every page gets: the token, which the client script sends with
// each request and link it follows (no cookie carries it: see checkToken), and the pace slider:
// run id's own pace (fixed once the run is over, absent for a run not started here), or the
// server's default on the index page.
func (s *Server) pageOptions(id string) templates.PageOptions {
	opts := templates.PageOptions{Token: s.token, PaceMS: int(s.cfg.DefaultPace.Milliseconds()), Prices: s.cfg.Prices}
	if id != "" {
		pace, _ := s.runs.pace(id)
		opts.PaceMS, opts.PaceFixed, opts.NoPace = int(pace.d.Milliseconds()), !pace.running, !pace.known
		if d, err := s.debuggerOf(id); err == nil {
			held := heldRunOf(id, d)
			opts.Breakpoints, opts.Pending = held.Breakpoints, held.Pending
			if _, app := d.(*appDebug); app {
				if rec, err := s.broker.Get(id); err == nil {
					opts.AppRun, opts.NextRuns = true, s.ingest.keptForNext(rec.Run().Flow)
				}
			}
		}
	}
	return opts
}

// indexPage serves GET /?flow=&status=&q=&after=: the flows to start and one page of the runs
// the query selects (as GET /api/runs lists them).
func (s *Server) indexPage(c echo.Context) error {
	q, err := runQuery(c)
	if err != nil {
		return err
	}
	page, err := s.broker.List(q)
	if err != nil {
		return err
	}
	idx := web.Index{Flows: s.flowInfos(), Groups: flowGroups(), Start: startHere, Models: s.modelInfos(), Runs: web.NewRunRows(page.Runs, time.Now(), web.WithPrices(s.cfg.Prices)), Query: q}
	if page.Next != "" {
		next := c.Request().URL.Query()
		next.Set("after", page.Next)
		idx.Next = next.Encode()
	}
	return render(c, http.StatusOK, templates.IndexPage(idx, s.pageOptions("")))
}

// runPage serves GET /runs/:id: the run as it stands, or with ?at=SEQ as of event SEQ; the
// page's script follows it live.
func (s *Server) runPage(c echo.Context) error {
	rec, loaded, err := s.broker.GetLoaded(c.Param("id"))
	if err != nil {
		return err
	}
	// A run just read back from the store (a server restarted on it): its page's feed takes the
	// events read rather than read them back from the recording.
	s.feeds.warmRun(rec, loaded)
	opts := s.pageOptions(rec.ID())
	opts.ConversationID, opts.Conversation = s.conversation(rec.Run())
	opts.ForkedFrom, opts.Forks = rec.ForkedFrom(), s.forksOf(rec.ID(), opts.Conversation)
	_, unknown := s.lookupFlow(rec.Run().Flow)
	opts.Runnable = unknown == nil // Run again and Replay start the flow here
	if c.QueryParams().Has("at") {
		return s.runPageAt(c, rec, opts)
	}
	// The run's feed holds its view state, shared with the page's websocket and other viewers;
	// a finished run's page is kept once made.
	var v web.View
	var deferred bool
	o, d, kept := s.feeds.digests.opened(rec)
	if kept {
		v, deferred = o.view, o.deferred
	} else {
		f := s.feeds.acquire(rec)
		v, deferred = f.page(pageRows)
		d = f.digest()
		s.feeds.release(f)
	}
	opts.Findings, opts.Story = d.findings, d.story
	if sequenceDeferred(v) {
		opts.SequenceSrc = "/runs/" + rec.ID() + "/sequence"
	}
	if deferred {
		opts.HistoriesSrc = "/runs/" + rec.ID() + "/histories"
	}
	return render(c, http.StatusOK, templates.RunView(v, opts))
}

// deferSequenceOver is the number of events past which the page of a finished run leaves the
// Sequence and Waterfall views' data (about 35 bytes an event) for its script to fetch from
// sequenceRoute when one of them is first shown: most visits never open them, and a page must
// open fast at any size. A run going on carries it, as live deltas extend it.
const deferSequenceOver = 20_000

// sequenceRoute serves the #seq-data element of a run as it stands, whole (see
// deferSequenceOver).
const sequenceRoute = "/runs/:id/sequence"

// sequenceData serves GET /runs/:id/sequence.
func (s *Server) sequenceData(c echo.Context) error {
	rec, err := s.broker.Get(c.Param("id"))
	if err != nil {
		return err
	}
	if kf := s.feeds.digests.fetchesOf(rec, rec.Len()); kf != nil && kf.sequence != nil {
		return serveTab(c, kf.sequence)
	}
	f := s.feeds.acquire(rec)
	seq := f.sequence()
	s.feeds.release(f)
	return render(c, http.StatusOK, templates.SequenceHTML(seq))
}

// historiesRoute serves the session panel's histories of a run as it stands (see
// deferHistoriesOver).
const historiesRoute = "/runs/:id/histories"

// histories serves GET /runs/:id/histories.
func (s *Server) histories(c echo.Context) error {
	rec, err := s.broker.Get(c.Param("id"))
	if err != nil {
		return err
	}
	if kf := s.feeds.digests.fetchesOf(rec, rec.Len()); kf != nil && kf.histories != nil {
		return serveTab(c, kf.histories)
	}
	f := s.feeds.acquire(rec)
	hs := f.histories()
	s.feeds.release(f)
	return render(c, http.StatusOK, templates.HistoriesHTML(hs))
}

// conversation returns the id of run's conversation and its runs, oldest first: the runs of
// run.Conversation, or, for a run that has none, the runs replayed or forked from it (which take
// its id as theirs), with the run first. None when the run stands alone.
func (s *Server) conversation(run traces.Run) (id string, runs []traces.Run) {
	id = cmp.Or(run.Conversation, run.ID)
	page, err := s.broker.List(live.RunQuery{Conversation: id, Limit: live.MaxPageSize})
	if err != nil {
		s.log.Error("list the runs of a conversation", "conversation", id, "err", err)
		return "", nil
	}
	if len(page.Runs) == 0 {
		return "", nil
	}
	runs = make([]traces.Run, len(page.Runs))
	for i, r := range page.Runs { // newest first
		runs[len(runs)-1-i] = r.Run
	}
	if !slices.ContainsFunc(runs, func(r traces.Run) bool { return r.ID == id }) {
		if origin, err := s.broker.Get(id); err == nil { // the run they were made of
			runs = append([]traces.Run{origin.Run()}, runs...)
		}
	}
	return id, runs
}

// forksOf returns the runs of conv (the run's conversation) forked from run id, each with the
// model call it changed. Only the runs whose model says they are forks of it are read.
func (s *Server) forksOf(id string, conv []traces.Run) []traces.ForkOrigin {
	var forks []traces.ForkOrigin
	for _, r := range conv {
		if r.ID == id || !strings.HasPrefix(r.Model, "fork of "+id+" ") {
			continue
		}
		rec, err := s.broker.Get(r.ID)
		if err != nil {
			continue
		}
		if f := rec.ForkedFrom(); f != nil && f.Run == id {
			forks = append(forks, traces.ForkOrigin{Run: r.ID, Seq: f.Seq})
		}
	}
	return forks
}

// inspector serves GET /runs/:id/inspector?seq=N: the inspector panel's HTML for event N; with
// ?agent=NAME instead, the summary of that agent, as of event at when the page stands there
// (&at=N, time travel). Both are read from the run's feed, whose view state the page was made
// from: a click in a long run's page costs what it shows, not a new analysis of the whole run.
func (s *Server) inspector(c echo.Context) error {
	rec, err := s.broker.Get(c.Param("id"))
	if err != nil {
		return err
	}
	agent := c.QueryParam("agent")
	var seq int64
	if agent == "" {
		if c.QueryParam("seq") == "" {
			return traces.Errorf(traces.CodeInvalid, "seq or agent is required: the number of the event, or the name of the agent, to inspect")
		}
		if seq, err = queryInt(c, "seq", 1, 0); err != nil {
			return err
		}
	}
	f := s.feeds.acquire(rec)
	defer s.feeds.release(f)
	if agent != "" {
		sum, err := s.agentSummary(c, f, rec, agent)
		if err != nil {
			return err
		}
		return render(c, http.StatusOK, templates.AgentPanel(sum))
	}
	in, err := f.inspection(seq)
	if traces.ErrorCode(err) == traces.CodeNotFound && seq <= rec.Len() {
		// The feed follows the recording and has not taken this event in yet.
		in, err = web.NewInspection(rec.Snapshot(), seq, web.WithPrices(s.cfg.Prices))
	}
	if err != nil {
		return err
	}
	run, agents := rec.Run(), rec.Agents()
	flow, unknown := s.lookupFlow(run.Flow)
	switch {
	case unknown != nil: // an app's run: Baton gives the command that forks it
		return render(c, http.StatusOK, templates.AppInspectionPanel(in, agents))
	case run.Status.Ended():
		return render(c, http.StatusOK, templates.InspectionPanel(in, agents, &templates.Fork{Models: s.forkModels(flow)}))
	}
	return render(c, http.StatusOK, templates.InspectionPanel(in, agents, nil))
}

// agentSummary returns agent's summary as the run stands, or as of event at when the request
// asks for one (a page put there by time travel).
func (s *Server) agentSummary(c echo.Context, f *feed, rec *traces.Recording, agent string) (web.AgentSummary, error) {
	if !c.QueryParams().Has("at") {
		return f.agentSummary(agent)
	}
	at, err := parseSeq(c.QueryParam("at"))
	if err != nil {
		return web.AgentSummary{}, err
	}
	t, err := f.at(s.feeds.travel(rec), at, 0)
	if err != nil {
		return web.AgentSummary{}, err
	}
	return t.view.AgentSummary(agent)
}
