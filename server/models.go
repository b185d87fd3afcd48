package server

import (
	"cmp"
	"net/http"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/traces"
	"github.com/baton-dev/baton/web"
)

// modelChoices are the models a run may pick: configured, the first being the default, then the
// scripted one unless configured. Two models with one spec are a CodeInvalid error.
func modelChoices(configured []*agents.Model) ([]*agents.Model, error) {
	var out []*agents.Model
	seen := map[string]bool{}
	for _, m := range append(configured, agents.Scripted()) {
		if m == nil {
			continue
		}
		if seen[m.Spec()] {
			if m.Spec() == agents.SpecScripted {
				continue
			}
			return nil, traces.Errorf(traces.CodeInvalid, "model %s is given twice", m.Spec())
		}
		seen[m.Spec()] = true
		out = append(out, m)
	}
	return out, nil
}

// pickModel returns the model spec names for a run of flow: the default when spec is "". An
// unknown model, a real one without its key, the scripted one for a flow without scripts, and a
// replay of another flow are CodeInvalid errors saying what to do.
func (s *Server) pickModel(spec string, flow agents.Flow) (*agents.Model, error) {
	var m *agents.Model
	specs := make([]string, len(s.models))
	for i, c := range s.models {
		specs[i] = c.Spec()
		if c.Spec() == spec || (spec == "" && i == 0) {
			m = c
		}
	}
	if m == nil {
		return nil, traces.Errorf(traces.CodeInvalid, "unknown model %q; this server offers %s (start it with --model to offer more)",
			clip(spec, 60), strings.Join(specs, ", "))
	}
	if err := m.CanRun(flow); err != nil {
		return nil, err
	}
	if replayed, _, ok := m.Replays(); ok && replayed != flow.Name {
		return nil, traces.Errorf(traces.CodeInvalid, "model %s replays a run of flow %s, not %s: pick that flow", m.Spec(), replayed, flow.Name)
	}
	return m, nil
}

// modelInfos are the model choices as the index page draws them.
func (s *Server) modelInfos() []web.ModelInfo {
	out := make([]web.ModelInfo, len(s.models))
	for i, m := range s.models {
		out[i] = web.ModelInfo{Spec: m.Spec()}
		if err := m.Ready(); err != nil {
			out[i].Problem = traces.ErrorMessage(err)
		}
		out[i].Flow, _, _ = m.Replays()
	}
	return out
}

// forkModels are the models a fork of a run of flow may go on with, as the fork form offers
// them: the one POST /api/runs/:id/fork takes when given none first (the scripted one, but for a
// flow without scripts, which cannot use it), then the others that run flow.
func (s *Server) forkModels(flow agents.Flow) []web.ModelInfo {
	var out []web.ModelInfo
	for _, m := range s.modelInfos() {
		switch {
		case m.Flow != "" && m.Flow != flow.Name, m.Spec == agents.SpecScripted && flow.NoScript:
		case m.Spec == agents.SpecScripted:
			out = append([]web.ModelInfo{m}, out...)
		default:
			out = append(out, m)
		}
	}
	return out
}

// replayRun serves POST /api/runs/:id/replay {"pace_ms"}: a new run of the run's flow and input
// whose model replays the run's recorded model calls; 201 {"id", "url"} as POST /api/runs. 409
// while the run goes on; 400 when this server does not run its flow or it made no model call.
func (s *Server) replayRun(c echo.Context) error {
	var ms int64
	present, err := decodeJSON(c, jsonField{"pace_ms", &ms, "an integer number of milliseconds"})
	if err != nil {
		return err
	}
	return s.rerun(c, "replayed", 0, present["pace_ms"], ms, func(tr traces.Trace, _ agents.Flow) (*agents.Model, error) {
		return agents.ReplayOf(tr)
	})
}

// forkRun serves POST /api/runs/:id/fork {"at","reply","transfer_to","input","model","pace_ms"}:
// a new run of the run's flow and input with the model call whose model.started is at answered
// otherwise (a reply, a transfer, or both), every call before it answered from the recording,
// those after it by "model" (one of the server's, checked as POST /api/runs checks it), or when
// it is left out by the scripted model (the server's default model for a flow without scripts).
// For the run of an app (a flow this server does not run), it answers 200 with the environment
// that makes the app's next run that fork (see forkApp), where "input" may replace what the call
// is given instead.
func (s *Server) forkRun(c echo.Context) error {
	var (
		at               int64
		ms               int64
		reply, to, after string
		input            []traces.Message
	)
	present, err := decodeJSON(c,
		jsonField{"at", &at, "the seq of a model.started event"},
		jsonField{"reply", &reply, "a string"},
		jsonField{"transfer_to", &to, "an agent's name"},
		jsonField{"input", &input, `a list of messages ({"role", "content"})`},
		jsonField{"model", &after, "a string"},
		jsonField{"pace_ms", &ms, "an integer number of milliseconds"})
	if err != nil {
		return err
	}
	if at <= 0 || (reply == "" && to == "" && !present["input"]) {
		return traces.Errorf(traces.CodeInvalid, "a fork needs \"at\", the seq of the model call to change, and what it answers instead: \"reply\", \"transfer_to\" or both")
	}
	rec, err := s.broker.Get(c.Param("id"))
	if err != nil {
		return err
	}
	if _, unknown := s.lookupFlow(rec.Run().Flow); unknown != nil {
		if present["model"] {
			return traces.Errorf(traces.CodeInvalid, "\"model\" picks what Baton's own run goes on with: an app's fork goes on with the app's own model")
		}
		if input == nil && present["input"] {
			input = []traces.Message{}
		}
		return forkApp(c, rec.Snapshot(), agents.AppFork{At: at, Reply: reply, TransferTo: to, Input: input})
	}
	if present["input"] {
		return traces.Errorf(traces.CodeInvalid, "input edits fork an app's run: a fork of Baton's own run answers the call otherwise, with \"reply\", \"transfer_to\" or both")
	}
	edit := agents.Reply{Text: reply}
	if to != "" {
		edit.ToolCalls = []agents.ToolCall{agents.Transfer(to)}
	}
	return s.rerun(c, "forked", at, present["pace_ms"], ms, func(tr traces.Trace, flow agents.Flow) (*agents.Model, error) {
		if to != "" && !slices.ContainsFunc(tr.Agents, func(a traces.Agent) bool { return a.Name == to }) {
			return nil, traces.Errorf(traces.CodeInvalid, "transfer_to %q is no agent of run %s", clip(to, 60), tr.Run.ID)
		}
		var live *agents.Model // the scripted model, but for a flow that has no scripts
		switch {
		case present["model"]:
			m, err := s.pickModel(after, flow)
			if err != nil {
				return nil, err
			}
			live = m
		case flow.NoScript:
			live = s.models[0]
		}
		return agents.ForkOf(tr, agents.Fork{At: at, Reply: edit}, live)
	})
}

// rerun starts a new run of the ended run :id's flow on its input, answered by the model
// modelOf makes of its trace (a replay, a fork), at the pace given or the server's default.
// forkAt, when not 0, is the seq of the model call a fork changes: the new run records where it
// was forked from.
func (s *Server) rerun(c echo.Context, done string, forkAt int64, paced bool, ms int64, modelOf func(traces.Trace, agents.Flow) (*agents.Model, error)) error {
	rec, err := s.broker.Get(c.Param("id"))
	if err != nil {
		return err
	}
	pace := s.cfg.DefaultPace
	if paced {
		if pace, err = paceOf(ms); err != nil {
			return err
		}
	}
	tr := rec.Snapshot()
	if !tr.Run.Status.Ended() {
		return traces.Errorf(traces.CodeConflict, "run %s is still going on: it can be %s once it has ended", tr.Run.ID, done)
	}
	flow, err := s.lookupFlow(tr.Run.Flow)
	if err != nil {
		return traces.Errorf(traces.CodeInvalid, "run %s is of flow %q, which this server does not run, so it cannot be %s here", tr.Run.ID, clip(tr.Run.Flow, 60), done)
	}
	m, err := modelOf(tr, flow)
	if err != nil {
		return err
	}
	if err := m.CanRun(flow); err != nil {
		return err
	}
	// A replay or a fork joins its run's conversation (the run's own id when it has none), so that
	// each page links the other, with their diff.
	turn := conversationTurn{id: cmp.Or(tr.Run.Conversation, tr.Run.ID)}
	if forkAt > 0 {
		turn.forkOf = &traces.ForkOrigin{Run: tr.Run.ID, Seq: forkAt}
	}
	run, err := s.runs.start(flow, tr.Run.Input, turn, m, pace, nil)
	if err != nil {
		return err
	}
	return created(c, run)
}

// created answers 201 {"id", "url"} for a run just started, with its page as Location.
func created(c echo.Context, run traces.Run) error {
	url := "/runs/" + run.ID
	c.Response().Header().Set(echo.HeaderLocation, url)
	return c.JSON(http.StatusCreated, createdRun{ID: run.ID, URL: url})
}
