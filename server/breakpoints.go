package server

import (
	"encoding/json"
	"net/http"
	"slices"

	"github.com/labstack/echo/v4"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/traces"
	"github.com/baton-dev/baton/web"
)

// maxBreakpoints bounds the breakpoints of one run.
const maxBreakpoints = 50

// parseBreakpoints reads breakpoints written KIND[:TARGET][@AGENT] for a run of flow: a known
// kind, and the agents they name (source, and the target of a transfer, an AgentTool call or a
// model call) agents of the flow. For an app's run (a nil flow) or a flow that lists no agents
// (a registered one that declares none), whose agents show as it goes, any names. Problems are CodeInvalid errors naming the breakpoint.
func parseBreakpoints(flow *agents.Flow, written []string) ([]agents.Breakpoint, error) {
	if len(written) > maxBreakpoints {
		return nil, traces.Errorf(traces.CodeInvalid, "%d breakpoints: set at most %d", len(written), maxBreakpoints)
	}
	if flow != nil && len(flow.Agents) == 0 {
		flow = nil // a registered flow that declares no agents: they show as it runs, as an app's do
	}
	var names []string
	example := "AGENT"
	if flow != nil {
		for _, a := range flow.Agents {
			names = append(names, a.Name)
		}
		example = names[len(names)-1]
	}
	points := make([]agents.Breakpoint, 0, len(written))
	for i, w := range written {
		b, err := agents.ParseBreakpoint(w)
		if err != nil {
			return nil, traces.Errorf(traces.CodeInvalid, "breakpoints[%d] %q: %s (write KIND[:TARGET][@AGENT], e.g. transfer:%s)", i, clip(w, 60), traces.ErrorMessage(err), example)
		}
		if flow == nil {
			points = append(points, b)
			continue
		}
		if b.Agent != "" && !slices.Contains(names, b.Agent) {
			return nil, traces.Errorf(traces.CodeInvalid, "breakpoints[%d] %q: flow %s has no agent %q (its agents: %v)", i, clip(w, 60), flow.Name, clip(b.Agent, 60), names)
		}
		namesAgent := b.Kind == traces.BreakTransfer || b.Kind == traces.BreakAgentTool || b.Kind == traces.BreakModel
		if namesAgent && b.Target != "" && !slices.Contains(names, b.Target) {
			return nil, traces.Errorf(traces.CodeInvalid, "breakpoints[%d] %q: flow %s has no agent %q (its agents: %v)", i, clip(w, 60), flow.Name, clip(b.Target, 60), names)
		}
		points = append(points, b)
	}
	return points, nil
}

// heldRun is the answer to the breakpoint routes: the run, its breakpoints, and where it is held.
type heldRun struct {
	ID          string   `json:"id"`
	URL         string   `json:"url"`
	Breakpoints []string `json:"breakpoints"`
	// Pending says, for an app's run, that the app has not yet said it has the breakpoints.
	Pending bool `json:"pending,omitempty"`
	// NextRuns says, for an app's run, that breakpoints are kept for its flow's next runs.
	NextRuns bool    `json:"next_runs,omitempty"`
	Held     *heldAt `json:"held,omitempty"`
}

type heldAt struct {
	Break  string `json:"break"`
	Agent  string `json:"agent,omitempty"`
	Target string `json:"target,omitempty"`
	Detail string `json:"detail,omitempty"`
	// Args is, at a tool call held before it runs, its arguments: a result may be given instead.
	Args *string `json:"args,omitempty"`
	// Value is, at a session breakpoint, the value written, which may be replaced.
	Value json.RawMessage `json:"value,omitempty"`
	// Feed is, before a transfer, what its target will be fed, in order, its system message
	// first when the trace holds it (see web.Held); FeedNote says instead why Baton cannot tell.
	Feed     []fedMessage `json:"feed,omitempty"`
	FeedNote string       `json:"feed_note,omitempty"`
}

// fedMessage is a message a held transfer's target will be fed, and where it comes from.
type fedMessage struct {
	traces.Message
	// Injected is, on a system message, eino's transfer instruction at its end, which Content
	// then leaves out.
	Injected string `json:"injected,omitempty"`
	Origin   string `json:"origin"`         // user input, for context, own turn, instruction...
	From     string `json:"from,omitempty"` // the agent it came from
}

// withFeed adds to out, the answer of a breakpoint route on run id, what the target of the
// transfer it is held before will be fed, as the run's page shows it.
func (s *Server) withFeed(id string, out heldRun) heldRun {
	if out.Held == nil {
		return out
	}
	rec, err := s.broker.Get(id)
	if err != nil {
		return out
	}
	h := web.NewStats(rec.Snapshot(), web.WithPrices(s.cfg.Prices)).Held
	if h == nil || h.Target != out.Held.Target || h.Break != out.Held.Break {
		return out // the trace is not there yet: the page shows it
	}
	out.Held.FeedNote = h.FeedNote
	for _, m := range h.Feed {
		out.Held.Feed = append(out.Held.Feed, fedMessage{Message: traces.Message{Role: m.Role, Content: m.Content, ToolCalls: m.ToolCalls,
			ToolCallID: m.ToolCallID, ToolName: m.ToolName}, Injected: m.Injected, Origin: string(m.Origin), From: m.From})
	}
	return out
}

func heldRunOf(id string, d runDebugger) heldRun {
	out := heldRun{ID: id, URL: "/runs/" + id, Breakpoints: []string{}}
	if a, ok := d.(*appDebug); ok {
		out.Pending = a.pending()
	}
	for _, b := range d.Breakpoints() {
		out.Breakpoints = append(out.Breakpoints, b.String())
	}
	if s, ok := d.Held(); ok {
		out.Held = &heldAt{Break: s.Break, Agent: s.Agent, Target: s.Target, Detail: s.Detail, Args: s.Args, Value: s.Value}
	}
	return out
}

// continueRun serves POST /api/runs/:id/continue {"action", "reply", "input", "by", "step"}: a run
// held at a breakpoint goes on. "action" is continue (the default), step (on to the next handoff,
// or with "step" to the next moment of that kind: transfer, agenttool, model, tool...) or abort
// (the run ends canceled). "reply" (a message: "content", "tool_calls" with "name" and
// "arguments") replaces the reply that decided a transfer; "input" (a list of messages, each with
// its "role") replaces what the held model call receives; "result" (a string), at a tool or
// agenttool breakpoint held before the tool runs, is given in the tool's place (the tool is not
// run); "value" (JSON), at a session breakpoint, replaces the value written. "by" says who (page, api; api when left
// out). 200 with the run's breakpoints; 404 for an unknown run, 409 for a run not held here,
// 400 for an edit the stop has nothing for.
func (s *Server) continueRun(c echo.Context) error {
	id := c.Param("id")
	if _, err := s.broker.Get(id); err != nil {
		return err
	}
	var res agents.Resume
	if _, err := decodeJSON(c,
		jsonField{"action", &res.Action, "continue, step or abort"},
		jsonField{"reply", &res.Reply, `a message such as {"content": "...", "tool_calls": [{"name": "transfer_to_agent", "arguments": "{\"agent_name\":\"math_agent\"}"}]}`},
		jsonField{"input", &res.Input, `a list of messages such as [{"role": "user", "content": "..."}]`},
		jsonField{"by", &res.By, "a string"},
		jsonField{"result", &res.Result, `a string: the held tool's result, given in its place (the tool is not run)`},
		jsonField{"value", &res.Value, "the session value, as JSON"},
		jsonField{"step", &res.Step, "a kind of moment: transfer, agenttool, model, tool, error, session or interrupt"},
	); err != nil {
		return err
	}
	switch res.By {
	case "":
		res.By = "api"
	case "page", "api":
	default:
		return traces.Errorf(traces.CodeInvalid, "by %q is not page or api", clip(res.By, 40))
	}
	d, err := s.debuggerOf(id)
	if err != nil {
		return err
	}
	if err := d.Continue(res); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, s.withFeed(id, heldRunOf(id, d)))
}

// setBreakpoints serves POST /api/runs/:id/breakpoints {"breakpoints": [...], "next_runs"}: the
// breakpoints of a run going on here, replaced from its next moment on. For an app's run,
// "next_runs": true also keeps them for the app's next runs (of the same flow name) that opt in,
// which start with them; false forgets those. 200 with them; 404 for an unknown run, 409 for a
// run not going on here or started without breakpoints, 400 for next_runs on Baton's own run.
func (s *Server) setBreakpoints(c echo.Context) error {
	id := c.Param("id")
	rec, err := s.broker.Get(id)
	if err != nil {
		return err
	}
	var (
		written []string
		next    bool
	)
	present, err := decodeJSON(c, jsonField{"breakpoints", &written, `a list of breakpoints such as "transfer:math_agent"`},
		jsonField{"next_runs", &next, "true or false"})
	if err != nil {
		return err
	}
	if !present["breakpoints"] {
		return traces.Errorf(traces.CodeInvalid, `breakpoints is required: a list such as ["transfer:math_agent"], [] for none`)
	}
	d, err := s.debuggerOf(id)
	if err != nil {
		return err
	}
	var flow *agents.Flow
	if _, app := d.(*appDebug); !app {
		f, err := s.lookupFlow(rec.Run().Flow)
		if err != nil {
			return err
		}
		flow = &f
	}
	if present["next_runs"] && flow != nil {
		return traces.Errorf(traces.CodeInvalid, "next_runs keeps breakpoints for an app's next runs; run %s is Baton's own: give its breakpoints when starting the next one (POST /api/runs with breakpoints)", id)
	}
	points, err := parseBreakpoints(flow, written)
	if err != nil {
		return err
	}
	if present["next_runs"] {
		kept := points
		if !next {
			kept = nil
		}
		if err := s.ingest.keepForNext(rec.Run().Flow, kept); err != nil {
			return err
		}
	}
	d.SetBreakpoints(points)
	out := s.withFeed(id, heldRunOf(id, d))
	if flow == nil {
		out.NextRuns = s.ingest.keptForNext(rec.Run().Flow)
	}
	return c.JSON(http.StatusOK, out)
}
