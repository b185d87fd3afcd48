package traces

import (
	"fmt"
	"slices"
	"strings"
)

// Validate checks what the JSON shape cannot: a run id, known statuses and kinds, sequence numbers
// 1, 2, 3... with no gaps, exactly the payload each kind requires (see ValidateEvent), agents
// named once, and nothing after a run.finished except where an interrupted run was resumed: a
// run.finished whose status is interrupted may be followed by a resumed event and the rest of the
// run. Every problem is an *Error with CodeInvalid.
func Validate(t Trace) error {
	if err := validateRun(t); err != nil {
		return err
	}
	for i, e := range t.Events {
		if want := int64(i + 1); e.Seq != want {
			return seqError(i, e.Seq, want)
		}
		var prev *Event
		if i > 0 {
			prev = &t.Events[i-1]
		}
		if err := checkEvent(i, prev, e); err != nil {
			return err
		}
	}
	return nil
}

// validateRun checks what Validate checks outside the events: the run and the agents.
func validateRun(t Trace) error {
	if err := validateRunID("run.id", t.Run.ID); err != nil {
		return err
	}
	if err := ValidateRunInfo(t.Run.Flow, t.Run.Model, t.Run.Conversation); err != nil {
		return err
	}
	if !t.Run.Status.Valid() {
		return Errorf(CodeInvalid, "run.status %q is not one of running, completed, failed, interrupted, canceled", t.Run.Status)
	}
	// A run being resumed says running while its events still end with its interrupted finish.
	resuming := t.Run.Status == StatusRunning && eventsStatus(t.Events) == StatusInterrupted
	if want := eventsStatus(t.Events); t.Run.Status != want && !resuming {
		return Errorf(CodeInvalid, "run.status is %s, but its events say %s: run.status is the status of the last run.finished, running when none ends the events (or while an interrupted run is resumed)", t.Run.Status, want)
	}
	return ValidateAgents(t.Agents)
}

// eventsStatus is the run's status its events tell: the last run.finished's, or running when the
// events go on after it (a resumed run) or none ends them.
func eventsStatus(events []Event) Status {
	if len(events) == 0 {
		return StatusRunning
	}
	last := events[len(events)-1]
	if last.Kind == KindRunFinished && last.Run != nil {
		return last.Run.Status
	}
	return StatusRunning
}

func seqError(i int, seq, want int64) error {
	return Errorf(CodeInvalid, "events[%d].seq is %d, want %d: sequence numbers start at 1 with no gaps", i, seq, want)
}

// checkEvent checks the i-th event, whose seq is right, after prev (nil for the first).
func checkEvent(i int, prev *Event, e Event) error {
	if err := ValidateEvent(i, e); err != nil {
		return err
	}
	return checkPlace(i, prev, &e)
}

// checkPlace is checkEvent for an event ValidateEvent passed: what its place after prev allows.
func checkPlace(i int, prev, e *Event) error {
	if prev != nil && !mayFollow(*prev, *e) {
		return Errorf(CodeInvalid, "events[%d] (%s) comes after run.finished: only a run that finished interrupted goes on, and then with a resumed event", i, e.Kind)
	}
	if prev != nil && e.Kind == KindRunStarted {
		return Errorf(CodeInvalid, "events[%d] is a second run.started: a run starts once, with its first event", i)
	}
	return nil
}

// mayFollow reports whether e may come right after prev: anything may, except after a
// run.finished, where only a resumed event after an interrupted finish may.
func mayFollow(prev, e Event) bool {
	if prev.Kind != KindRunFinished {
		return true
	}
	return prev.Run != nil && prev.Run.Status == StatusInterrupted && e.Kind == KindResumed
}

// ValidateAgents checks that there are at most MaxAgents agents, that every agent has a name
// (at most MaxNameLen bytes, one line) no other has, a kind of the documented set, a known
// relation, if any, and a parent, if any, that is among the agents and not below it (the tree
// has no loop); messages name agents[i]. Every problem is an *Error with CodeInvalid.
func ValidateAgents(agents []Agent) error { return ValidateAgentsAdded(nil, agents) }

// ValidateAgentsAdded checks agents that join the tree have (replacing those of their names), as
// an app's recorder sends them while its run goes on: each as ValidateAgents checks it, its
// parent among have or agents, and the tree they make together without a loop. Messages name
// agents[i] of agents.
func ValidateAgentsAdded(have, agents []Agent) error {
	if len(agents) > MaxAgents {
		return Errorf(CodeInvalid, "agents holds %d agents: a run may have at most %d", len(agents), MaxAgents)
	}
	seen := make(map[string]bool, len(agents))
	for i, a := range agents {
		if a.Name == "" {
			return Errorf(CodeInvalid, "agents[%d].name is empty", i)
		}
		if err := validateName(fmt.Sprintf("agents[%d].name", i), a.Name, MaxNameLen); err != nil {
			return err
		}
		if !a.Kind.Valid() {
			return Errorf(CodeInvalid, "agents[%d].kind %q is not one of chat_model, supervisor, sequential, parallel, loop, custom", i, a.Kind)
		}
		if a.Relation != "" && a.Relation != RelationSubAgent && a.Relation != RelationAgentTool {
			return Errorf(CodeInvalid, "agents[%d].relation %q is not subagent or agenttool (or absent, for the root)", i, a.Relation)
		}
		if seen[a.Name] {
			return Errorf(CodeInvalid, "agents[%d]: agent %q appears twice", i, a.Name)
		}
		seen[a.Name] = true
	}
	return validateParents(have, agents)
}

// validateParents checks that each of agents' parents is among have and agents, and that
// following parents up from any of them, in the tree agents make replacing have's of their
// names, ends at a root.
func validateParents(have, agents []Agent) error {
	parent := make(map[string]string, len(have)+len(agents))
	for _, a := range have {
		parent[a.Name] = a.Parent
	}
	for _, a := range agents {
		parent[a.Name] = a.Parent
	}
	for i, a := range agents {
		if _, ok := parent[a.Parent]; a.Parent != "" && !ok {
			return Errorf(CodeInvalid, "agents[%d]: agent %q names parent %q, which is not among the agents: declare %q, or name a parent that is declared", i, a.Name, a.Parent, a.Parent)
		}
	}
	rooted := make(map[string]bool, len(agents)) // agents whose chain of parents ends at a root
	for i, a := range agents {
		var chain []string
		on := map[string]bool{}
		for n := a.Name; n != "" && !rooted[n]; n = parent[n] {
			if on[n] {
				return Errorf(CodeInvalid, "agents[%d]: agent %q is its own ancestor (parents %s): a tree has no loop", i, a.Name, strings.Join(append(chain, n), " -> "))
			}
			on[n] = true
			chain = append(chain, n)
		}
		for _, n := range chain {
			rooted[n] = true
		}
	}
	return nil
}

// ValidateEvent checks one event, the i-th of its list (messages name it events[i]): its kind is
// known and it carries exactly the payload its kind requires (see payloadField), with a known
// status when that payload is a run mark and a count of at least 1 on lost. Its seq and its place in the run are the caller's to
// check. Every problem is an *Error with CodeInvalid.
func ValidateEvent(i int, e Event) error {
	if !e.Kind.Known() {
		return Errorf(CodeInvalid, "events[%d].kind %q is not a known event kind", i, e.Kind)
	}
	want := payloadField(e.Kind)
	set := payloads(&e)
	n, has := 0, false // of the payloads set, how many and whether want is one
	for _, p := range set {
		if p.isSet {
			n++
			has = has || p.field == want
		}
	}
	if !has {
		return Errorf(CodeInvalid, "events[%d] (%s) has no %q payload", i, e.Kind, want)
	}
	for _, p := range set {
		if n > 1 && p.isSet && p.field != want {
			return Errorf(CodeInvalid, "events[%d] (%s) also has a %q payload: a %s event carries only %q", i, e.Kind, p.field, e.Kind, want)
		}
	}
	if e.Run != nil && !e.Run.Status.Valid() {
		return Errorf(CodeInvalid, "events[%d].run.status %q is not one of running, completed, failed, interrupted, canceled", i, e.Run.Status)
	}
	if e.Transfer != nil && e.Transfer.Outcome != "" && e.Transfer.Outcome != TransferFailed {
		return Errorf(CodeInvalid, "events[%d].transfer.outcome %q is not %q (or absent, for a transfer made)", i, e.Transfer.Outcome, TransferFailed)
	}
	if t := e.Transfer; t != nil && t.ErrorBy != "" && t.ErrorBy != ErrorByEino && t.ErrorBy != ErrorByRecorder {
		return Errorf(CodeInvalid, "events[%d].transfer.error_by %q is not %q or %q", i, t.ErrorBy, ErrorByEino, ErrorByRecorder)
	}
	if m := e.AgentTool; m != nil && m.InputMode != "" && m.InputMode != AgentToolInputRequest && m.InputMode != AgentToolInputFullHistory {
		return Errorf(CodeInvalid, "events[%d].agenttool.input_mode %q is not %q or %q", i, m.InputMode, AgentToolInputRequest, AgentToolInputFullHistory)
	}
	if m := e.AgentTool; m != nil && m.InnerEvents != "" && m.InnerEvents != InnerEventsStream && m.InnerEvents != InnerEventsCallbacks {
		return Errorf(CodeInvalid, "events[%d].agenttool.inner_events %q is not %q or %q", i, m.InnerEvents, InnerEventsStream, InnerEventsCallbacks)
	}
	if err := validatePause(i, e); err != nil {
		return err
	}
	if e.Lost != nil && e.Lost.Count < 1 {
		return Errorf(CodeInvalid, "events[%d].lost.count is %d: a lost event stands for at least 1 dropped event", i, e.Lost.Count)
	}
	return nil
}

// payloadField returns the JSON name of the payload field an event of kind k carries, or "" for
// an unknown kind.
func payloadField(k Kind) string {
	switch k {
	case KindRunStarted, KindRunFinished:
		return "run"
	case KindAgentStarted, KindAgentFinished:
		return "agent_run"
	case KindModelStarted, KindModelFinished:
		return "model"
	case KindToolStarted, KindToolFinished:
		return "tool"
	case KindMessage:
		return "message"
	case KindTransfer:
		return "transfer"
	case KindAgentToolEnter, KindAgentToolExit:
		return "agenttool"
	case KindSessionSet:
		return "session"
	case KindInterrupted, KindResumed:
		return "interrupt"
	case KindExit:
		return "exit"
	case KindBreakLoop:
		return "breakloop"
	case KindError:
		return "error"
	case KindLost:
		return "lost"
	case KindPaused, KindContinued:
		return "pause"
	}
	return ""
}

// payload is one payload field of an event and whether it is set.
type payload struct {
	field string
	isSet bool
}

// payloads lists e's payload fields in the order of Event's, each with whether it is set.
func payloads(e *Event) [14]payload {
	return [14]payload{
		{"run", e.Run != nil}, {"agent_run", e.AgentRun != nil}, {"model", e.Model != nil},
		{"tool", e.Tool != nil}, {"message", e.Message != nil}, {"transfer", e.Transfer != nil},
		{"agenttool", e.AgentTool != nil}, {"session", e.Session != nil},
		{"interrupt", e.Interrupt != nil}, {"exit", e.Exit != nil},
		{"breakloop", e.BreakLoop != nil}, {"error", e.Error != nil}, {"lost", e.Lost != nil},
		{"pause", e.Pause != nil},
	}
}

// validatePause checks a paused or continued event's payload: a known breakpoint kind, and on
// continued a known action.
func validatePause(i int, e Event) error {
	p := e.Pause
	if p == nil {
		return nil
	}
	if !slices.Contains(Breaks, p.Break) && p.Break != BreakStep {
		return Errorf(CodeInvalid, "events[%d].pause.break %q is not one of %v or %q", i, p.Break, Breaks, BreakStep)
	}
	if p.On != "" && (p.Break != BreakStep || !slices.Contains(Breaks, p.On)) {
		return Errorf(CodeInvalid, "events[%d].pause.on %q: only a step's pause has one, one of %v", i, p.On, Breaks)
	}
	if e.Kind == KindContinued && p.Action != ActionContinue && p.Action != ActionStep && p.Action != ActionAbort {
		return Errorf(CodeInvalid, "events[%d].pause.action %q is not %q, %q or %q", i, p.Action, ActionContinue, ActionStep, ActionAbort)
	}
	return nil
}
