// Package agentstest provides small flows for the tests of packages that record, store or show
// runs, as net/http/httptest does for HTTP: Hostile (markup everywhere a user sees text),
// FailingTool (a tool error and a tool panic) and Long (thousands of events, for benchmarks).
// They run on real eino agents driven by agents.NewScriptedModel, and none is in the catalogue.
package agentstest

import (
	"context"
	"fmt"

	"github.com/cloudwego/eino/adk"

	"github.com/baton-dev/baton/agents"
)

// newAgent builds the ChatModelAgent conf describes, with the model models gives for its name.
func newAgent(ctx context.Context, models agents.ModelFor, conf adk.ChatModelAgentConfig) (adk.Agent, error) {
	m, err := models(conf.Name)
	if err != nil {
		return nil, fmt.Errorf("model for agent %s: %w", conf.Name, err)
	}
	conf.Model = m
	a, err := adk.NewChatModelAgent(ctx, &conf)
	if err != nil {
		return nil, fmt.Errorf("build agent %s: %w", conf.Name, err)
	}
	return a, nil
}
