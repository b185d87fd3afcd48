package web

import (
	"cmp"
	"time"

	"github.com/baton-dev/baton/internal/prices"
	"github.com/baton-dev/baton/traces"
)

// runState is the header's piece of the analysis: the run's status, counters and times, and the
// outcome's candidates (the answer, where an interrupted run waits). It holds no pointer another
// copy could change, so a copy is a clone.
type runState struct {
	metaStatus traces.Status // the run's status before any event: its metadata's
	status     traces.Status
	errors     int
	tools      int
	models     int
	tokens     int
	cost       prices.Sum // what the model calls reported cost, each at its rate
	pricing    prices.Run

	lastSeq     int64
	flow, input string // the run's, else its run.started event's
	firstTime   time.Time
	lastTime    time.Time
	// idle is the time the run spent stopped between a run.finished and the resume after it;
	// stoppedAt the time of a run.finished not yet followed by anything.
	idle         time.Duration
	stoppedAt    time.Time
	runErr       string  // of the newest run.finished that has one
	finishedSeq  int64   // the newest run.finished
	settled      bool    // a run.finished with a valid status came: the status no longer is the run's own
	errorSeq     int64   // the newest error event
	answer       Outcome // the newest answer on the Runner's own stream (noteAnswer)
	answerIsTool bool    // answer is a tool's result message
	paused       *Paused // where an interrupted run waits; never changed once made
	pausedTool   string  // the interrupted tool call before the interrupted event
	held         *Held   // the breakpoint the run is held at; never changed once made
}

// newRunState starts the summary of run with no events yet. The run's status is its status
// until an event says otherwise (run.finished, or an event after it, which resumes it).
// Its model calls cost what pricing says.
func newRunState(run traces.Run, pricing prices.Run) *runState {
	s := &runState{metaStatus: run.Status, flow: run.Flow, input: run.Input, cost: pricing.Sum(), pricing: pricing}
	if !s.metaStatus.Valid() {
		s.metaStatus = traces.StatusRunning
	}
	s.status = s.metaStatus
	return s
}

func (s *runState) clone() *runState {
	c := *s
	return &c
}

// add takes in e, which the tree (t) has taken in already and changed as c says: what the
// header and the outcome need of it.
func (s *runState) add(e *traces.Event, t *treeState, c treeChange) {
	s.count(e, c)
	s.lastSeq = max(s.lastSeq, e.Seq)
	if s.firstTime.IsZero() {
		s.firstTime = e.Time
	}
	if e.Time.After(s.lastTime) {
		s.lastTime = e.Time
	}
	if !s.stoppedAt.IsZero() && e.Kind != traces.KindRunFinished {
		s.idle += max(0, e.Time.Sub(s.stoppedAt))
		s.stoppedAt = time.Time{}
	}
	if e.Kind == traces.KindRunFinished {
		s.stoppedAt = e.Time
	}
	switch {
	case e.Kind == traces.KindRunFinished && e.Run != nil && e.Run.Status.Valid():
		s.status, s.finishedSeq, s.settled = e.Run.Status, e.Seq, true
		if e.Run.Error != "" {
			s.runErr = e.Run.Error
		}
	case e.Kind == traces.KindRunFinished:
		s.finishedSeq = e.Seq
	case s.finishedSeq > 0:
		// An event after run.finished: the run was resumed.
		s.status = s.metaStatus
		if s.status.Ended() {
			s.status = traces.StatusRunning
		}
	}
	if e.Run != nil && e.Kind == traces.KindRunStarted {
		s.flow, s.input = firstNonEmpty(s.flow, e.Run.Flow), firstNonEmpty(s.input, e.Run.Input)
	}
	if e.Kind == traces.KindError {
		s.errorSeq = e.Seq
	}
	s.noteAnswer(e, t)
	s.notePause(e)
	s.noteHeld(e)
}

// count keeps the header's counters: the tree counts each model call once, whichever of its
// events came (c.newCall).
func (s *runState) count(e *traces.Event, c treeChange) {
	if c.newCall {
		s.models++
	}
	switch {
	case e.Kind == traces.KindModelFinished && e.Model != nil && e.Model.Usage != nil:
		s.tokens += e.Model.Usage.TotalTokens
		addCost(&s.cost, s.pricing, e.Model)
	case e.Kind == traces.KindToolStarted && e.Tool != nil:
		s.tools++
	case e.Kind == traces.KindError && e.Error != nil:
		s.errors++
	}
}

// endAs gives s, made on its run as running, the run's own status once it has taken in the run's
// last event: what newRunState(run, ...) and the same events would have made.
func (s *runState) endAs(run traces.Run) {
	s.metaStatus = newRunState(run, s.pricing).metaStatus
	if !s.settled {
		s.status = s.metaStatus // no run.finished said otherwise
	}
}

// runError is the run's failure reason: its run.finished event's (a live snapshot may carry it
// before the run's metadata does), else own, the run's own.
func (s *runState) runError(own string) string {
	return firstNonEmpty(s.runErr, own)
}

// outcome returns how the run ended as of the newest event, runError being why it failed.
func (s *runState) outcome(runError string) Outcome {
	switch s.status {
	case traces.StatusCompleted:
		return s.answer
	case traces.StatusInterrupted:
		return Outcome{Error: runError, ErrorSeq: cmp.Or(s.errorSeq, s.finishedSeq), Paused: s.paused}
	case traces.StatusFailed, traces.StatusCanceled:
		// The event to jump to: the last error event, else run.finished.
		return Outcome{Error: runError, ErrorSeq: cmp.Or(s.errorSeq, s.finishedSeq)}
	}
	return Outcome{}
}

// noteHeld keeps the breakpoint the run is held at: its newest paused event until a continued.
func (s *runState) noteHeld(e *traces.Event) {
	switch {
	case e.Kind == traces.KindPaused && e.Pause != nil:
		p := e.Pause
		s.held = &Held{Seq: e.Seq, Agent: e.Agent, Break: p.Break, On: p.On, OwnFeed: p.Feed, Target: p.Target, Detail: p.Detail, At: p.At, Input: p.Input, Args: p.Args, Value: string(p.Value)}
	case e.Kind == traces.KindContinued, e.Kind == traces.KindRunFinished:
		s.held = nil
	}
}

// notePause keeps where the run waits: the first interrupted event since it (last) started or
// resumed, and the interrupted tool call just before it.
func (s *runState) notePause(e *traces.Event) {
	switch {
	case e.Kind == traces.KindResumed:
		s.paused, s.pausedTool = nil, ""
	case e.Kind == traces.KindToolFinished && e.Tool != nil && e.Tool.Interrupted && s.paused == nil:
		s.pausedTool = e.Tool.Name
	case e.Kind == traces.KindInterrupted && s.paused == nil:
		p := &Paused{Seq: e.Seq, Agent: e.Agent, Tool: s.pausedTool}
		if e.Interrupt != nil {
			p.ID, p.Info = e.Interrupt.ID, e.Interrupt.Info
		}
		s.paused = p
	}
}

// noteAnswer keeps the newest answer on the Runner's own stream, which a completed run's final
// answer is: an exit's final result, an assistant message in words that calls no tool, or a
// tool's result message (a tool that returns directly ends its agent's turn with it). A
// transfer voids a tool message before it, which only announced the transfer. What is said
// inside an AgentTool call is the call's result, not the run's: even its exit ends only the call.
func (s *runState) noteAnswer(e *traces.Event, t *treeState) {
	var text string
	switch m := e.Message; {
	case e.Kind == traces.KindTransfer && e.Transfer != nil:
		if s.answerIsTool && !t.insideAgentTool(e) {
			s.answer, s.answerIsTool = Outcome{}, false
		}
		return
	case e.Kind == traces.KindExit && e.Exit != nil:
		text = e.Exit.FinalResult
	case e.Kind == traces.KindMessage && m != nil && len(m.ToolCalls) == 0 && (m.Role == "assistant" || m.Role == "tool"):
		text = m.Content
	}
	if text == "" || t.insideAgentTool(e) {
		return
	}
	s.answer = Outcome{Answer: text, AnswerSeq: e.Seq, AnswerBy: e.Agent}
	s.answerIsTool = e.Message != nil && e.Message.Role == "tool"
}
