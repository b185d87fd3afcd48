// Package traces is Baton's domain: a trace is the ordered record of one agent run, with the
// agent tree it ran on. It holds the trace model, its versioned JSON format, the Recording that
// writes a trace event by event while readers follow it, and the domain error type. It imports
// nothing but the standard library and small pieces it shares with Baton's recorder, pages and
// command line (internal/jsonstr, internal/grow, internal/atomicfile).
//
// Supported API, for apps and tools that read or write Baton's traces: the trace model (Trace,
// Run, Status, Agent, Event with its kinds and their payloads), its files (Marshal, Unmarshal and
// Validate, in the format docs/trace-format.md describes: a reader of version N reads every
// version up to N; WriteFile, whole or not at all; EventEncoder, EventDecoder and
// AppendEventRefs to write and read one event at a time; DecodeJSON for a document made of the
// format's types), the Recording with its Subscriptions, the limits a trace is held to (InputSize
// among them), and the domain error type they return. What holds runs in a server and keeps them
// in a store is internal/live.
package traces

import (
	"crypto/rand"
	"encoding/hex"
	"time"
)

// Status is the state of a run.
type Status string

// Run statuses. A run starts as StatusRunning and ends in exactly one of the others.
const (
	StatusRunning     Status = "running"
	StatusCompleted   Status = "completed"
	StatusFailed      Status = "failed"
	StatusInterrupted Status = "interrupted"
	StatusCanceled    Status = "canceled"
)

// Valid reports whether s is one of the known statuses.
func (s Status) Valid() bool {
	switch s {
	case StatusRunning, StatusCompleted, StatusFailed, StatusInterrupted, StatusCanceled:
		return true
	}
	return false
}

// Ended reports whether s is a final status.
func (s Status) Ended() bool { return s.Valid() && s != StatusRunning }

// Run is a trace's metadata.
type Run struct {
	ID        string     `json:"id"`
	Flow      string     `json:"flow"`
	Input     string     `json:"input"`
	Model     string     `json:"model"`
	Status    Status     `json:"status"`
	StartedAt time.Time  `json:"started_at"`
	EndedAt   *time.Time `json:"ended_at,omitempty"`
	Error     string     `json:"error,omitempty"`
	// Conversation groups runs that belong together: the turns of one conversation, or a run and
	// the runs that resumed it. Empty when the run stands alone.
	Conversation string `json:"conversation,omitempty"`
}

// AgentKind says what sort of agent a node of the tree is.
type AgentKind string

// Agent kinds. KindCustom covers any agent Baton does not recognise.
const (
	AgentChatModel  AgentKind = "chat_model"
	AgentSupervisor AgentKind = "supervisor"
	AgentSequential AgentKind = "sequential"
	AgentParallel   AgentKind = "parallel"
	AgentLoop       AgentKind = "loop"
	AgentCustom     AgentKind = "custom"
)

// Valid reports whether k is one of the documented agent kinds.
func (k AgentKind) Valid() bool {
	switch k {
	case AgentChatModel, AgentSupervisor, AgentSequential, AgentParallel, AgentLoop, AgentCustom:
		return true
	}
	return false
}

// Relation is how an agent hangs below its parent in the tree.
type Relation string

// Relations. The root agent has none.
const (
	// RelationSubAgent: the parent may transfer control to this agent (and it back).
	RelationSubAgent Relation = "subagent"
	// RelationAgentTool: the parent's model calls this agent as a tool, in an isolated history.
	RelationAgentTool Relation = "agenttool"
)

// Agent is one node of the agent tree.
type Agent struct {
	Name        string    `json:"name"`
	Description string    `json:"description,omitempty"`
	Kind        AgentKind `json:"kind"`
	Parent      string    `json:"parent,omitempty"`
	Relation    Relation  `json:"relation,omitempty"`
	// Tools are the names of the tools the agent offers its model, transfer and AgentTools included.
	Tools []string `json:"tools,omitempty"`
	// OutputKey is the session key under which eino stores the agent's final answer, if any.
	OutputKey string `json:"output_key,omitempty"`
}

// Trace is one run: its metadata, the agent tree and the events in sequence order.
type Trace struct {
	Run    Run     `json:"run"`
	Agents []Agent `json:"agents"`
	Events []Event `json:"events"`
}

// Agent returns the tree node named name, or false.
func (t *Trace) Agent(name string) (Agent, bool) {
	for _, a := range t.Agents {
		if a.Name == name {
			return a, true
		}
	}
	return Agent{}, false
}

// NewRunID returns a fresh run id: "r-" and 8 random hex digits.
func NewRunID() string {
	b := make([]byte, 4)
	rand.Read(b) // never fails: crypto/rand panics rather than return an error
	return "r-" + hex.EncodeToString(b)
}

// ImportedEnd is the error of the run.finished EndImported adds.
const ImportedEnd = "the trace ends before its run did: imported as interrupted there"

// EndImported returns t ended, for a trace read from a file to be shown as a run that is over:
// when its events do not end the run (it was saved while the run went on), a run.finished
// interrupted, at its last event's time and with the error ImportedEnd, is added after them, so
// that its status, its page and the run list agree that it is over; a run saved as it was being
// resumed ends at its last run.finished, interrupted. ended reports whether t was running.
func EndImported(t Trace) (_ Trace, ended bool) {
	if t.Run.Status.Ended() {
		return t, false
	}
	if n := len(t.Events); eventsStatus(t.Events) == StatusInterrupted {
		// Saved as a resume began: it ended at its interrupted finish.
		last := t.Events[n-1]
		t.Run.Status, t.Run.Error, t.Run.EndedAt = StatusInterrupted, last.Run.Error, &last.Time
		return t, true
	}
	at := t.Run.StartedAt
	if n := len(t.Events); n > 0 {
		at = t.Events[n-1].Time
	}
	n := len(t.Events)
	t.Events = append(t.Events[:n:n], Event{
		Seq: int64(n) + 1, Time: at, Kind: KindRunFinished,
		Run: &RunMark{Status: StatusInterrupted, Error: ImportedEnd},
	})
	t.Run.Status, t.Run.Error, t.Run.EndedAt = StatusInterrupted, ImportedEnd, &at
	return t, true
}
