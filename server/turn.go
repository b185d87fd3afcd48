package server

import (
	"cmp"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/baton-dev/baton/internal/story"
	"github.com/baton-dev/baton/traces"
)

// conversationTurn is where a new run goes: the conversation it joins (none when id is empty) and
// what it is fed before its input, the turns before it.
type conversationTurn struct {
	id      string
	history []traces.Message
	forkOf  *traces.ForkOrigin // a fork's origin, recorded on its run.started
}

// turnRun serves POST /api/runs/:id/turn {"input", "pace_ms"}: the next user turn of the run's
// conversation, a run of its flow on its model, fed the conversation so far (each earlier turn's
// input and final answer, up to this run) before input. It joins the conversation, so that each
// turn's page links the others. 409 while the run goes on or waits at an interrupt.
func (s *Server) turnRun(c echo.Context) error {
	var input string
	var ms int64
	present, err := decodeJSON(c,
		jsonField{"input", &input, "a string"},
		jsonField{"pace_ms", &ms, "an integer number of milliseconds"})
	if err != nil {
		return err
	}
	if strings.TrimSpace(input) == "" {
		return traces.Errorf(traces.CodeInvalid, "input is empty: write the next thing the user says")
	}
	rec, err := s.broker.Get(c.Param("id"))
	if err != nil {
		return err
	}
	run := rec.Run()
	switch {
	case !run.Status.Ended():
		return traces.Errorf(traces.CodeConflict, "run %s is still going on: its conversation goes on once it has ended", run.ID)
	case run.Status == traces.StatusInterrupted:
		return traces.Errorf(traces.CodeConflict, "run %s waits for a decision at its interrupt: resume it, and its conversation goes on once it has ended", run.ID)
	}
	flow, err := s.lookupFlow(run.Flow)
	if err != nil {
		return traces.Errorf(traces.CodeInvalid, "run %s is of flow %q, which this server does not run, so its conversation cannot go on here", run.ID, clip(run.Flow, 60))
	}
	model, err := s.pickModel(run.Model, flow)
	if err != nil { // a replay's or a fork's model answers only its recording: the server's default goes on
		if model, err = s.pickModel("", flow); err != nil {
			return err
		}
	}
	pace := s.cfg.DefaultPace
	if present["pace_ms"] {
		if pace, err = paceOf(ms); err != nil {
			return err
		}
	}
	id, runs := s.conversation(run)
	turn := conversationTurn{id: cmp.Or(id, run.ID)}
	if len(runs) == 0 {
		runs = []traces.Run{run}
	}
	for _, r := range runs {
		turn.history = append(turn.history, s.turnOf(r)...)
		if r.ID == run.ID {
			break // the conversation as this run left it, not the turns taken after it
		}
	}
	next, err := s.runs.start(flow, input, turn, model, pace, nil)
	if err != nil {
		return err
	}
	return created(c, next)
}

// turnOf is what run adds to its conversation: the user's input and the run's final answer.
func (s *Server) turnOf(run traces.Run) []traces.Message {
	turn := []traces.Message{{Role: "user", Content: run.Input}}
	rec, err := s.broker.Get(run.ID)
	if err != nil {
		return turn
	}
	if answer := story.Of(rec.Snapshot()).Answer; answer != "" {
		turn = append(turn, traces.Message{Role: "assistant", Content: answer})
	}
	return turn
}
