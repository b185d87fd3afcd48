package cli

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/internal/otlp"
	"github.com/baton-dev/baton/internal/otlp/otlptest"
	"github.com/baton-dev/baton/traces"
)

// TestExportingFlushesOnEarlyReturn: a command that returns an error after a run, as run does
// when it cannot resume, still sends that run's spans before it returns; they are not left to a
// batch timeout that the exiting process never reaches.
func TestExportingFlushesOnEarlyReturn(t *testing.T) {
	rcv := otlptest.NewReceiver(t)
	flow, err := agents.Lookup("supervisor")
	if err != nil {
		t.Fatal(err)
	}
	early := errors.New("early return")
	var id string
	var stderr bytes.Buffer
	err = exporting(rcv.URL, false, &stderr, func(exp *otlp.Exporter) error {
		rec := traces.NewRecording(traces.Run{ID: traces.NewRunID(), Flow: flow.Name, Input: flow.DefaultInput}, flow.Agents)
		id = rec.ID()
		exp.Watch(rec)
		agents.RunFlow(context.Background(), flow, flow.DefaultInput, agents.Options{}, rec)
		return early
	})
	if !errors.Is(err, early) {
		t.Fatalf("exporting returned %v, want fn's error", err)
	}
	var root otlptest.Span
	for _, s := range rcv.Spans() {
		if s.Parent == "" {
			root = s
		}
	}
	if root.Name != "invoke_agent supervisor" || root.Attrs["baton.run.id"] != id {
		t.Errorf("when exporting returned, the collector had run span %+v, want run %s's (stderr: %s)", root, id, stderr.String())
	}
}
