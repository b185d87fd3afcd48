package batontest

import (
	"os"
	"testing"

	"github.com/cloudwego/eino/components/model"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/traces"
)

// Replay is the chat models of one run that answers as a recorded run did, agent by agent and
// call by call: build the app's agents on Model(name) and the run is offline and deterministic.
// A run that asks what the recording never answered (another agent, more calls, other tools)
// gets an error from the model saying where it diverged, and so does its story.
type Replay struct {
	tb     testing.TB
	models agents.ModelFor
	check  func() *agents.Divergence
}

// NewReplay reads the trace file (a golden's .trace.json, or any run Baton recorded) and returns
// the models of one replayed run. The test fails when the file cannot be read or recorded no
// model call.
func NewReplay(tb testing.TB, traceFile string) *Replay {
	tb.Helper()
	data, err := os.ReadFile(traceFile)
	if err != nil {
		tb.Fatalf("batontest: %v", err)
	}
	tr, err := traces.Unmarshal(data)
	if err != nil {
		tb.Fatalf("batontest: %s: %s", traceFile, traces.ErrorMessage(err))
	}
	models, check, err := agents.Replaying(tr)
	if err != nil {
		tb.Fatalf("batontest: %s: %s", traceFile, traces.ErrorMessage(err))
	}
	return &Replay{tb: tb, models: models, check: check}
}

// Model returns the chat model of the agent named agent.
func (p *Replay) Model(agent string) model.ToolCallingChatModel {
	m, err := p.models(agent)
	if err != nil {
		p.tb.Fatalf("batontest: replay model of %s: %v", agent, err)
	}
	return m
}

// Played fails the test when the replayed run did not ask every recorded call: it did less than
// the recording. Call it after the run has ended.
func (p *Replay) Played() {
	p.tb.Helper()
	if d := p.check(); d != nil {
		p.tb.Errorf("batontest: %v", d)
	}
}
