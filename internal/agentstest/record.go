package agentstest

import (
	"context"
	"testing"
	"time"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/traces"
)

// Record runs flow on input with opts under the recorder, as the demo runner does, and returns its
// trace once it has ended (within a minute).
func Record(tb testing.TB, flow agents.Flow, input string, opts agents.Options) traces.Trace {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rec := traces.NewRecording(traces.Run{ID: traces.NewRunID(), Flow: flow.Name, Input: input, Status: traces.StatusRunning, StartedAt: time.Now()}, flow.Agents)
	agents.RunFlow(ctx, flow, input, opts, rec)
	return rec.Snapshot()
}
