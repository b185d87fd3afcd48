package agents

import (
	"context"
	"fmt"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/components/tool/utils"

	"github.com/baton-dev/baton/flows"
)

// ScriptedModels returns the ModelFor that drives f with its scripts: each call builds a fresh
// NewScriptedModel(agent, f.Scripts[agent], pace), starting at the script's first step, so a
// Build (which asks once per agent) gets models for exactly one run. An agent without a script
// gets an empty one and answers the exhausted text instead of failing.
func (f Flow) ScriptedModels(pace *Pace) ModelFor {
	return func(agent string) (model.ToolCallingChatModel, error) {
		return NewScriptedModel(agent, f.Scripts[agent], pace), nil
	}
}

// NewChatAgent builds the ChatModelAgent conf describes, with the model models gives for its name:
// the way every flow, built-in or not, makes its chat model agents.
func NewChatAgent(ctx context.Context, models ModelFor, conf adk.ChatModelAgentConfig) (*adk.ChatModelAgent, error) {
	m, err := models(conf.Name)
	if err != nil {
		return nil, fmt.Errorf("model for agent %s: %w", conf.Name, err)
	}
	conf.Model = m
	conf.Handlers = append([]adk.ChatModelAgentMiddleware{flows.Middleware()}, conf.Handlers...)
	a, err := adk.NewChatModelAgent(ctx, &conf)
	if err != nil {
		return nil, fmt.Errorf("build agent %s: %w", conf.Name, err)
	}
	return a, nil
}

// newChatAgents builds the chat model agents confs describe, in order, as NewChatAgent does.
func newChatAgents(ctx context.Context, models ModelFor, confs ...adk.ChatModelAgentConfig) ([]adk.Agent, error) {
	agents := make([]adk.Agent, len(confs))
	for i, c := range confs {
		a, err := NewChatAgent(ctx, models, c)
		if err != nil {
			return nil, err
		}
		agents[i] = a
	}
	return agents, nil
}

// toolBox collects tools made with utils.InferTool, keeping the first error so a flow's Build
// checks once instead of after every tool.
type toolBox struct {
	tools []tool.BaseTool
	err   error
}

// addTool infers a tool from fn (its arguments' JSON schema comes from T's struct tags) and adds
// it to box.
func addTool[T, D any](box *toolBox, name, desc string, fn utils.InvokeFunc[T, D]) {
	if box.err != nil {
		return
	}
	t, err := utils.InferTool(name, desc, fn)
	if err != nil {
		box.err = fmt.Errorf("tool %s: %w", name, err)
		return
	}
	box.tools = append(box.tools, t)
}

// toolsConfig returns box's tools as an agent's tools config. Tools run one after another: with
// eino's default (in parallel) the result events of one message's calls come in a random order,
// which would make traces differ from run to run.
func (box *toolBox) toolsConfig() adk.ToolsConfig {
	var c adk.ToolsConfig
	c.Tools = box.tools
	c.ExecuteSequentially = true
	return c
}
