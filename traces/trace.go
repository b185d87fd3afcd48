// Package traces is Baton's domain: a trace is the ordered record of one agent run, with the
// agent tree it ran on. It also holds the versioned JSON format, the live Recording that assigns
// sequence numbers and fans events out to subscribers, the Broker that holds a process's runs,
// the Store contract that keeps them beyond it (with the run list's query and tally), and the
// domain error type. It imports nothing but the standard library.
//
// Supported API, for apps and tools that read or write Baton's traces: the trace model (Trace,
// Run, Status, Agent, Event with its kinds and their payloads) and its files (Marshal, Unmarshal
// and Validate, in the format docs/trace-format.md describes: a reader of version N reads every
// version up to N), with the domain error type they return. Everything else (the live Recording
// and its Subscriptions, the Broker, the Store contract and its queries, the streaming
// EventEncoder and EventDecoder, the JSON helpers) is exported for Baton's own packages and may
// change in any release.
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
