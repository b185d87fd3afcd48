package agents_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/baton-dev/baton/traces"
)

// facts reads what a recorded trace says about one run's mechanisms, for the flows' tests.
type facts struct {
	t  *testing.T
	tr traces.Trace
}

// recordFacts runs flow's default input at zero pace, recorded, and checks the trace is valid.
func recordFacts(t *testing.T, name string, streaming bool) facts {
	t.Helper()
	return recordInputFacts(t, name, mustFlow(t, name).DefaultInput, streaming)
}

// recordInputFacts runs flow on input at zero pace, recorded, and checks the trace is valid.
func recordInputFacts(t *testing.T, name, input string, streaming bool) facts {
	t.Helper()
	flow := mustFlow(t, name)
	tr := recordInput(t, flow, input, streaming)
	if err := traces.Validate(tr); err != nil {
		t.Fatalf("invalid trace: %v", err)
	}
	return facts{t: t, tr: tr}
}

// requireStatus fails the test unless the run ended with status.
func (f facts) requireStatus(status traces.Status) {
	f.t.Helper()
	if f.tr.Run.Status != status {
		f.t.Fatalf("run ended %s (%q), want %s", f.tr.Run.Status, f.tr.Run.Error, status)
	}
}

// of returns the events of kind, by agent when agent is not "".
func (f facts) of(kind traces.Kind, agent string) []traces.Event {
	var out []traces.Event
	for _, e := range f.tr.Events {
		if e.Kind == kind && (agent == "" || e.Agent == agent) {
			out = append(out, e)
		}
	}
	return out
}

// modelInputs returns the input of each of agent's model calls, in order.
func (f facts) modelInputs(agent string) [][]traces.Message {
	var out [][]traces.Message
	for _, e := range f.of(traces.KindModelStarted, agent) {
		out = append(out, e.Model.Input)
	}
	if len(out) == 0 {
		f.t.Fatalf("%s's model was never called", agent)
	}
	return out
}

// transfers lists the transfers as "from -> to (mode)".
func (f facts) transfers() []string {
	var out []string
	for _, e := range f.of(traces.KindTransfer, "") {
		out = append(out, fmt.Sprintf("%s -> %s (%s)", e.Transfer.From, e.Transfer.To, e.Transfer.Mode))
	}
	return out
}

// starts lists each agent.started as "agent via how".
func (f facts) starts() []string {
	var out []string
	for _, e := range f.of(traces.KindAgentStarted, "") {
		out = append(out, e.Agent+" via "+e.AgentRun.Via)
	}
	return out
}

// session returns the last session.set of key, failing when there is none.
func (f facts) session(key string) traces.SessionSet {
	f.t.Helper()
	sets := slices.DeleteFunc(f.of(traces.KindSessionSet, ""), func(e traces.Event) bool { return e.Session.Key != key })
	if len(sets) == 0 {
		f.t.Fatalf("session key %s never set", key)
	}
	return *sets[len(sets)-1].Session
}

// sessionText returns the string value of key, failing when there is none.
func (f facts) sessionText(key string) string {
	f.t.Helper()
	var s string
	if err := json.Unmarshal(f.session(key).Value, &s); err != nil {
		f.t.Fatalf("session key %s is not a string: %s", key, f.session(key).Value)
	}
	return s
}

// toolResult returns the result of the first finished call of tool, failing when there is none.
func (f facts) toolResult(tool string) string {
	f.t.Helper()
	for _, e := range f.of(traces.KindToolFinished, "") {
		if e.Tool.Name == tool {
			return e.Tool.Result
		}
	}
	f.t.Fatalf("tool %s never finished", tool)
	return ""
}

// lastReply is the content of agent's last model reply.
func (f facts) lastReply(agent string) string {
	f.t.Helper()
	fin := f.of(traces.KindModelFinished, agent)
	if len(fin) == 0 || fin[len(fin)-1].Model.Output == nil {
		f.t.Fatalf("%s has no model reply", agent)
	}
	return fin[len(fin)-1].Model.Output.Content
}

// index is the position of the first event e of kind by agent for which match is true, or -1.
func (f facts) index(kind traces.Kind, agent string, match func(e traces.Event) bool) int {
	for i, e := range f.tr.Events {
		if e.Kind == kind && e.Agent == agent && (match == nil || match(e)) {
			return i
		}
	}
	return -1
}

// assertEqual fails unless got equals want, naming what.
func assertEqual[T comparable](t *testing.T, what string, got, want []T) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s:\n  %v\nwant\n  %v", what, got, want)
	}
}

// contextFrom reports whether msgs hold a "For context:" message about agent.
func contextFrom(msgs []traces.Message, agent string) bool {
	return hasContent(msgs, "For context: ["+agent+"]")
}

// hasRole reports whether msgs hold a message of role.
func hasRole(msgs []traces.Message, role string) bool {
	return slices.ContainsFunc(msgs, func(m traces.Message) bool { return m.Role == role })
}

// joined is msgs' contents, one a line, for failure messages.
func joined(msgs []traces.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		fmt.Fprintf(&b, "\n    %s: %.160q", m.Role, m.Content)
	}
	return b.String()
}

// toolArgs returns the arguments of the tool call callID, "" when no tool.started has that id.
func (f facts) toolArgs(callID string) string {
	for _, e := range f.of(traces.KindToolStarted, "") {
		if e.Tool.CallID == callID {
			return e.Tool.Arguments
		}
	}
	return ""
}
