package web

import (
	"cmp"

	"github.com/baton-dev/baton/traces"
)

// Outcome is how a finished run ended, for the run page's header: why it failed, with the event
// that shows it, or a completed run's final answer. It is empty while the run goes on.
type Outcome struct {
	// Error is the failure reason in full; ErrorSeq the event to jump to for it: the last error
	// event, else run.finished (0 when the trace has neither).
	Error    string
	ErrorSeq int64
	// Answer is a completed run's final answer: what the Runner's own stream ended with (see
	// noteAnswer). AnswerSeq is its event and AnswerBy the agent that said it ("" for an exit
	// that names none).
	Answer    string
	AnswerSeq int64
	AnswerBy  string
	// Paused is where an interrupted run waits for a decision; nil for other runs.
	Paused *Paused
}

// Paused is the interrupt an interrupted run stopped at: eino's root cause, the first interrupted
// event since the run (last) started or resumed.
type Paused struct {
	Seq   int64  // the interrupted event
	Agent string // the agent it stopped
	Tool  string // the tool call that interrupted, when one did
	ID    string // eino's interrupt id
	Info  string // what the interrupt asks
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
