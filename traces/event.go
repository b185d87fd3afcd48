package traces

import (
	"encoding/json"
	"time"
)

// Kind names what an event records.
type Kind string

// Event kinds. Each kind fills the payload field named in its comment.
const (
	KindRunStarted     Kind = "run.started"       // Run
	KindRunFinished    Kind = "run.finished"      // Run
	KindAgentStarted   Kind = "agent.started"     // AgentRun
	KindAgentFinished  Kind = "agent.finished"    // AgentRun
	KindModelStarted   Kind = "model.started"     // Model
	KindModelFinished  Kind = "model.finished"    // Model
	KindToolStarted    Kind = "tool.started"      // Tool
	KindToolFinished   Kind = "tool.finished"     // Tool
	KindMessage        Kind = "message"           // Message
	KindTransfer       Kind = "transfer"          // Transfer
	KindAgentToolEnter Kind = "agenttool.entered" // AgentTool
	KindAgentToolExit  Kind = "agenttool.exited"  // AgentTool
	KindSessionSet     Kind = "session.set"       // Session
	KindInterrupted    Kind = "interrupted"       // Interrupt
	KindResumed        Kind = "resumed"           // Interrupt
	KindExit           Kind = "exit"              // Exit
	KindBreakLoop      Kind = "breakloop"         // BreakLoop
	KindError          Kind = "error"             // Error (ErrorDetail)
	KindLost           Kind = "lost"              // Lost
	KindPaused         Kind = "paused"            // Pause
	KindContinued      Kind = "continued"         // Pause
)

// Kinds lists every event kind of the format, in the order of the constants above.
var Kinds = []Kind{
	KindRunStarted, KindRunFinished, KindAgentStarted, KindAgentFinished,
	KindModelStarted, KindModelFinished, KindToolStarted, KindToolFinished,
	KindMessage, KindTransfer, KindAgentToolEnter, KindAgentToolExit, KindSessionSet,
	KindInterrupted, KindResumed, KindExit, KindBreakLoop, KindError, KindLost,
	KindPaused, KindContinued,
}

// Known reports whether k is a kind of the format.
func (k Kind) Known() bool {
	for _, known := range Kinds {
		if k == known {
			return true
		}
	}
	return false
}

// Event is one thing that happened during a run. Seq numbers a run's events 1, 2, 3... with no
// gaps; Agent is the agent acting, RunPath eino's run path at that moment (a history of agents,
// not a call stack). Exactly the payload its Kind names is set.
type Event struct {
	Seq     int64     `json:"seq"`
	Time    time.Time `json:"time"`
	Kind    Kind      `json:"kind"`
	Agent   string    `json:"agent,omitempty"`
	RunPath []string  `json:"run_path,omitempty"`

	Run       *RunMark       `json:"run,omitempty"`
	AgentRun  *AgentRun      `json:"agent_run,omitempty"`
	Model     *ModelCall     `json:"model,omitempty"`
	Tool      *ToolCall      `json:"tool,omitempty"`
	Message   *Message       `json:"message,omitempty"`
	Transfer  *Transfer      `json:"transfer,omitempty"`
	AgentTool *AgentToolCall `json:"agenttool,omitempty"`
	Session   *SessionSet    `json:"session,omitempty"`
	Interrupt *Interrupt     `json:"interrupt,omitempty"`
	Exit      *Exit          `json:"exit,omitempty"`
	BreakLoop *BreakLoop     `json:"breakloop,omitempty"`
	Error     *ErrorDetail   `json:"error,omitempty"`
	Lost      *Lost          `json:"lost,omitempty"`
	Pause     *Pause         `json:"pause,omitempty"`
}

// RunMark is the payload of run.started and run.finished.
type RunMark struct {
	Flow   string `json:"flow,omitempty"`
	Input  string `json:"input,omitempty"`
	Status Status `json:"status"`
	Error  string `json:"error,omitempty"`
	// ForkedFrom is, on run.started of a fork, the run it was forked from and the seq of the
	// model call it changed.
	ForkedFrom *ForkOrigin `json:"forked_from,omitempty"`
}

// ForkOrigin is where a fork was made: the run, and the seq of its model.started the fork
// answered otherwise.
type ForkOrigin struct {
	Run string `json:"run"`
	Seq int64  `json:"seq"`
}

// AgentRun is the payload of agent.started and agent.finished. Input is the history the agent
// was fed, after eino rewrote other agents' messages ("For context: ..."); it is empty on resume.
type AgentRun struct {
	Input   []Message `json:"input,omitempty"`
	Resumed bool      `json:"resumed,omitempty"`
	// Via says how control reached the agent: "run" (the root), "transfer", "agenttool",
	// "workflow" (a sequential, parallel or loop agent ran it, or a wrapper agent of its own name
	// ran the agent it wraps), or "resume" (the run was resumed and eino passed through the agent
	// on the way back to the interrupt: no transfer brought control there).
	Via string `json:"via,omitempty"`
	// Error is set on agent.finished when the agent's own work failed.
	Error string `json:"error,omitempty"`
	// Interrupted is set on agent.finished when the agent stopped at an interrupt: not a failure.
	Interrupted bool `json:"interrupted,omitempty"`
	// Iteration is set on agent.started when a loop agent runs the agent: its iteration, from 1.
	Iteration int `json:"iteration,omitempty"`
}

// ModelCall is the payload of model.started (Input, Tools) and model.finished (Output, Usage,
// DurationMS, Error). ID pairs the two. Name is the model's name as its provider reported it
// (eino's model.Config.Model), on both, when it did: what prices the call.
type ModelCall struct {
	ID         string    `json:"id"`
	Name       string    `json:"name,omitempty"`
	Input      []Message `json:"input,omitempty"`
	Tools      []string  `json:"tools,omitempty"`
	Output     *Message  `json:"output,omitempty"`
	Usage      *Usage    `json:"usage,omitempty"`
	DurationMS float64   `json:"duration_ms,omitempty"`
	Error      string    `json:"error,omitempty"`
}

// Usage is a model call's token count.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// ToolCall is the payload of tool.started (Name, CallID, Arguments) and tool.finished (Result or
// Error, DurationMS).
type ToolCall struct {
	Name       string  `json:"name"`
	CallID     string  `json:"call_id,omitempty"`
	Arguments  string  `json:"arguments,omitempty"`
	Result     string  `json:"result,omitempty"`
	Error      string  `json:"error,omitempty"`
	DurationMS float64 `json:"duration_ms,omitempty"`
	// Interrupted is set on tool.finished when the tool interrupted the run instead of returning.
	Interrupted bool `json:"interrupted,omitempty"`
}

// Message is a chat message as an agent emitted or received it.
type Message struct {
	Role       string         `json:"role"`
	Content    string         `json:"content,omitempty"`
	ToolCalls  []ToolCallSpec `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
	ToolName   string         `json:"tool_name,omitempty"`
}

// ToolCallSpec is a tool call requested by a model.
type ToolCallSpec struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Transfer modes.
const (
	// TransferLLM: the model chose the target by calling transfer_to_agent, or, in eino's host
	// multi-agent, the tool named after the specialist (a handoff).
	TransferLLM = "llm"
	// TransferDeterministic: a deterministic-transfer wrapper sent control on by construction.
	TransferDeterministic = "deterministic"
)

// TransferFailed is a transfer's outcome when eino refused it: no agent of that name was
// reachable from the source (only its sub-agents and its parent are).
const TransferFailed = "failed"

// Whose words a refused transfer's Error is, as Transfer.ErrorBy says.
const (
	// ErrorByEino: eino's own error, as eino raised it.
	ErrorByEino = "eino"
	// ErrorByRecorder: the recorder's words. eino (as of v0.9.21) reports a refused transfer
	// only on the Runner's event stream, which callbacks do not see, unless a workflow or an
	// AgentTool around the agent passes it on; a recorder that sees neither says what it saw.
	ErrorByRecorder = "recorder"
)

// Transfer is the payload of a transfer: control passed From one agent To another. Outcome is
// empty for a transfer made, TransferFailed with Error for one eino refused; ErrorBy says whose
// words Error is (empty in traces written before it was recorded).
type Transfer struct {
	From    string `json:"from"`
	To      string `json:"to"`
	Mode    string `json:"mode"`
	CallID  string `json:"call_id,omitempty"`
	Outcome string `json:"outcome,omitempty"`
	Error   string `json:"error,omitempty"`
	ErrorBy string `json:"error_by,omitempty"`
}

// AgentTool input modes: what eino fed the callee of an AgentTool call.
const (
	// AgentToolInputRequest: the request the caller's model wrote, as a user message.
	AgentToolInputRequest = "request"
	// AgentToolInputFullHistory: the caller's history rewritten ("For context: ..."), the
	// request dropped (adk.WithFullChatHistoryAsInput).
	AgentToolInputFullHistory = "full-history"
)

// How the recorder learnt of the events inside an AgentTool call (AgentToolCall.InnerEvents).
const (
	// InnerEventsStream: from callbacks, and the caller's event stream carried them too (eino's
	// ToolsConfig.EmitInternalEvents).
	InnerEventsStream = "stream"
	// InnerEventsCallbacks: from callbacks only; the caller's event stream showed just the call
	// and its result.
	InnerEventsCallbacks = "callbacks"
)

// AgentToolCall is the payload of agenttool.entered (Request, InputMode) and agenttool.exited
// (Result, InnerEvents): Caller's model ran Callee as a tool, in a history of its own. InputMode
// says what the callee was fed (its agent.started input holds it): the Request, or, with
// full-history, the caller's history without it. InnerEvents says whether the call's inner
// events were on the caller's event stream or known from callbacks only; empty when the
// recorder could not tell (the call failed or was interrupted).
type AgentToolCall struct {
	Caller      string `json:"caller"`
	Callee      string `json:"callee"`
	CallID      string `json:"call_id"`
	Request     string `json:"request,omitempty"`
	InputMode   string `json:"input_mode,omitempty"`
	Result      string `json:"result,omitempty"`
	InnerEvents string `json:"inner_events,omitempty"`
}

// SessionSet is the payload of session.set: Key now holds Value, set by SetBy.
type SessionSet struct {
	Key   string          `json:"key"`
	Value json.RawMessage `json:"value"`
	SetBy string          `json:"set_by,omitempty"`
}

// Interrupt is the payload of interrupted and resumed.
type Interrupt struct {
	ID      string `json:"id,omitempty"`
	Address string `json:"address,omitempty"`
	Info    string `json:"info,omitempty"`
}

// Exit is the payload of exit: the agent ended the whole run.
type Exit struct {
	FinalResult string `json:"final_result,omitempty"`
}

// BreakLoop is the payload of breakloop: From ended its loop after Iterations.
type BreakLoop struct {
	From       string `json:"from"`
	Iterations int    `json:"iterations"`
}

// ErrorDetail is the payload of error. Agent is empty when eino did not say which agent failed
// and the recorder could not tell either.
type ErrorDetail struct {
	Message string `json:"message"`
}

// Lost is the payload of lost: Count events were dropped at this point by the recorder in the app
// because Baton was unreachable or too slow to take them. The trace has a gap there.
type Lost struct {
	Count int64 `json:"count"`
}

// Pause is the payload of paused and continued: a breakpoint held the run before something
// happened (paused), and a person let it go on (continued), perhaps with an edit.
type Pause struct {
	// Break is the kind of breakpoint that held the run (one of the Break constants), or
	// BreakStep when a step did.
	Break string `json:"break"`
	// On is, when a step held the run, the kind of moment it held it at (one of Breaks).
	On string `json:"on,omitempty"`
	// Target is what the breakpoint is about: a transfer's target agent, the tool's or AgentTool
	// callee's name, the session key.
	Target string `json:"target,omitempty"`
	// At is the seq of the event that decided what is about to happen (the model.finished of
	// the deciding reply), 0 for none; on continued too, so that the reply edited is found.
	At int64 `json:"at,omitempty"`
	// Detail says what is about to happen, for a person (paused).
	Detail string `json:"detail,omitempty"`
	// Feed says, before a transfer (paused), why what its target will be fed cannot be told from
	// the history: the run rebuilds the target's input its own way. Empty when it can be.
	Feed string `json:"feed,omitempty"`
	// Action is how the run went on (continued): one of the Action constants.
	Action string `json:"action,omitempty"`
	// By says who let it go on (continued): "page", "api", "cli", "timeout" when an app went on
	// by itself (no decision came within its timeout), or "baton" when the run ended
	// while held.
	By string `json:"by,omitempty"`
	// Edited says what the person changed before it went on (continued), for a person; empty
	// when nothing was.
	Edited string `json:"edited,omitempty"`
	// Reply is the deciding reply as edited (continued), when it was.
	Reply *Message `json:"reply,omitempty"`
	// Input is what the model call held is about to receive (paused, at a model breakpoint),
	// or those messages as edited (continued), when they were.
	Input []Message `json:"input,omitempty"`
	// Args is, on paused at a tool or AgentTool call held before it runs, the call's arguments:
	// its presence says a result may be given in its place. Absent where the call is held at its
	// start (a tool no wrapper holds), where it runs whatever is decided.
	Args *string `json:"args,omitempty"`
	// Result is, on continued, the result given in the tool's place: the tool was not run, and
	// the model sees this result.
	Result *string `json:"result,omitempty"`
	// Value is, on paused at a session breakpoint, the value just written under Target; on
	// continued, the value written there instead, when it was edited.
	Value json.RawMessage `json:"value,omitempty"`
}

// Kinds of breakpoint (Pause.Break).
const (
	BreakTransfer  = "transfer"  // before a transfer takes effect: its target has not started
	BreakAgentTool = "agenttool" // before an AgentTool call enters its callee
	BreakModel     = "model"     // before a model call
	BreakTool      = "tool"      // before a tool call
	BreakError     = "error"     // when a model or tool call fails
	BreakSession   = "session"   // after a session value is written
	BreakInterrupt = "interrupt" // when a tool interrupts the run
	BreakStep      = "step"      // the next handoff after a step
)

// Breaks lists the kinds of breakpoint a person can set, in the order of the constants.
var Breaks = []string{BreakTransfer, BreakAgentTool, BreakModel, BreakTool, BreakError, BreakSession, BreakInterrupt}

// How a held run went on (Pause.Action).
const (
	ActionContinue = "continue" // on, until the next breakpoint
	ActionStep     = "step"     // on, until the next handoff (transfer or AgentTool call)
	ActionAbort    = "abort"    // the run ends canceled
)
