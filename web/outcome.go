package web

import "github.com/baton-dev/baton/traces"

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

// Held is the breakpoint a running run is held at (its paused event, not continued yet): what is
// about to happen, and the reply that decided it.
type Held struct {
	Seq     int64  // the paused event
	Agent   string // the agent acting
	Break   string // the breakpoint's kind, or step
	On      string // for a step, the kind of moment it held the run at ("" in older traces)
	OwnFeed string // before a transfer, how the run feeds the target its own way ("" for eino's default)
	Target  string // the transfer's target, the tool's or callee's name, the session key
	Detail  string // what is about to happen
	At      int64  // the deciding reply's model.finished, 0 for none
	// Reply is the deciding reply (At's), when there is one: what an edit starts from.
	Reply *traces.Message
	// Input is what the held model call is to receive (the agent's latest model input, as the
	// paused event's agent will be fed), for a model breakpoint.
	Input []traces.Message
	// Args is, at a tool call held before the tool runs, its arguments: a result may be given in
	// the tool's place. nil where it cannot.
	Args *string
	// Value is, at a session breakpoint, the value just written (JSON), which may be replaced.
	Value string
	// Feed is, before a transfer, what its target will be fed, with origins (heldFeed), under
	// FeedTitle; FeedNote says instead why Baton cannot tell.
	Feed      []FedMessage
	FeedTitle string
	FeedNote  string
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
