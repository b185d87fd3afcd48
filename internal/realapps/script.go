package realapps

import (
	"context"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/components/tool/utils"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"

	"github.com/baton-dev/baton/agents"
)

// scripted returns agent's stand-in for an LLM: the project's scripted model answering steps in
// order, counting its calls in t. Like a real provider it fires its own callbacks.
func scripted(t *tally, agent string, steps ...agents.Step) model.ToolCallingChatModel {
	return &countedModel{agent: agent, t: t, m: agents.NewScriptedModel(agent, agents.NewScript(steps...), nil)}
}

// countedModel counts the calls of the model it wraps, which fires its own callbacks.
type countedModel struct {
	agent string
	t     *tally
	m     model.ToolCallingChatModel
}

func (c *countedModel) IsCallbacksEnabled() bool { return true }

func (c *countedModel) GetType() string { return agents.ScriptedModelType }

func (c *countedModel) WithTools(tools []*schema.ToolInfo) (model.ToolCallingChatModel, error) {
	m, err := c.m.WithTools(tools)
	if err != nil {
		return nil, err
	}
	return &countedModel{agent: c.agent, t: c.t, m: m}, nil
}

func (c *countedModel) Generate(ctx context.Context, in []*schema.Message, opts ...model.Option) (*schema.Message, error) {
	c.t.model(c.agent)
	return c.m.Generate(ctx, in, opts...)
}

func (c *countedModel) Stream(ctx context.Context, in []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	c.t.model(c.agent)
	return c.m.Stream(ctx, in, opts...)
}

// mustTool infers a tool from fn, counting its calls in t. It panics when eino cannot infer it:
// the apps' tools are fixed, so that is a bug.
func mustTool[T any](t *tally, name, desc string, fn func(context.Context, T) (string, error)) tool.InvokableTool {
	it, err := utils.InferTool(name, desc, func(ctx context.Context, in T) (string, error) {
		t.tool(name)
		return fn(ctx, in)
	})
	if err != nil {
		panic("realapps: tool " + name + ": " + err.Error())
	}
	return it
}

// toolsOf is the tools config of an agent with tools.
func toolsOf(tools ...tool.BaseTool) adk.ToolsConfig {
	return adk.ToolsConfig{ToolsNodeConfig: compose.ToolsNodeConfig{Tools: tools}}
}

// mustChatAgent builds a chat model agent, panicking on a configuration eino refuses: the apps'
// configurations are fixed, so that is a bug.
func mustChatAgent(ctx context.Context, conf *adk.ChatModelAgentConfig) *adk.ChatModelAgent {
	a, err := adk.NewChatModelAgent(ctx, conf)
	if err != nil {
		panic("realapps: agent " + conf.Name + ": " + err.Error())
	}
	return a
}

// args is a tool's argument: one free-text field, as most example tools take.
type args struct {
	Query string `json:"query" jsonschema:"description=what to look up or do"`
}
