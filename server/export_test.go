package server

import (
	"context"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/traces"
)

// SetRunner makes s run flows with run instead of agents.RunFlow, so tests can drive a run's
// events and its outcome.
func SetRunner(s *Server, run func(ctx context.Context, flow agents.Flow, input string, opts agents.Options, rec *traces.Recording) traces.Status) {
	s.runs.setRunner(run)
}
