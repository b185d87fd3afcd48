package web

import (
	"cmp"
	"slices"

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

func newOutcome(a *analysis, runError string) Outcome {
	switch a.status {
	case traces.StatusCompleted:
		return a.answer
	case traces.StatusInterrupted:
		return Outcome{Error: runError, ErrorSeq: cmp.Or(a.errorSeq, a.finishedSeq), Paused: a.paused}
	case traces.StatusFailed, traces.StatusCanceled:
		// The event to jump to: the last error event, else run.finished.
		return Outcome{Error: runError, ErrorSeq: cmp.Or(a.errorSeq, a.finishedSeq)}
	}
	return Outcome{}
}

// notePause keeps where the run waits: the first interrupted event since it (last) started or
// resumed, and the interrupted tool call just before it.
func (a *analysis) notePause(e *traces.Event) {
	switch {
	case e.Kind == traces.KindResumed:
		a.paused, a.pausedTool = nil, ""
	case e.Kind == traces.KindToolFinished && e.Tool != nil && e.Tool.Interrupted && a.paused == nil:
		a.pausedTool = e.Tool.Name
	case e.Kind == traces.KindInterrupted && a.paused == nil:
		a.paused = &Paused{Seq: e.Seq, Agent: e.Agent, Tool: a.pausedTool}
		if e.Interrupt != nil {
			a.paused.ID, a.paused.Info = e.Interrupt.ID, e.Interrupt.Info
		}
	}
}

// noteAnswer keeps the newest answer on the Runner's own stream, which a completed run's final
// answer is: an exit's final result, an assistant message in words that calls no tool, or a
// tool's result message (a tool that returns directly ends its agent's turn with it). A
// transfer voids a tool message before it, which only announced the transfer. What is said
// inside an AgentTool call is the call's result, not the run's: even its exit ends only the call.
func (a *analysis) noteAnswer(e *traces.Event) {
	var text string
	switch m := e.Message; {
	case e.Kind == traces.KindTransfer && e.Transfer != nil:
		if a.answerIsTool && !a.insideAgentTool(e) {
			a.answer, a.answerIsTool = Outcome{}, false
		}
		return
	case e.Kind == traces.KindExit && e.Exit != nil:
		text = e.Exit.FinalResult
	case e.Kind == traces.KindMessage && m != nil && len(m.ToolCalls) == 0 && (m.Role == "assistant" || m.Role == "tool"):
		text = m.Content
	}
	if text == "" || a.insideAgentTool(e) {
		return
	}
	a.answer = Outcome{Answer: text, AnswerSeq: e.Seq, AnswerBy: e.Agent}
	a.answerIsTool = e.Message != nil && e.Message.Role == "tool"
}

// insideAgentTool reports whether e happened inside an AgentTool call: its agent is a callee (or
// below one) in the tree, or a call not yet exited ran it, by name or by run path.
func (a *analysis) insideAgentTool(e *traces.Event) bool {
	for m, d := a.roster.byName[e.Agent], 0; m != nil && d <= len(a.roster.list); m, d = a.roster.byName[m.Parent], d+1 {
		if m.Relation == traces.RelationAgentTool && m.Parent != "" {
			return true
		}
	}
	for _, k := range a.open {
		if e.Agent == k.callee || len(k.path) > 0 && len(e.RunPath) >= len(k.path) && slices.Equal(e.RunPath[:len(k.path)], k.path) {
			return true
		}
	}
	return false
}
