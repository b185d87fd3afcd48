// Package golden is an eino app whose handoffs its tests keep fixed with package batontest: a
// helpdesk where triage hands billing questions to billing_agent and login questions to
// tech_agent. Instructed stands in for an LLM, so it runs with no key; golden_test.go shows the
// few lines a team adds to keep the route in CI.
package golden

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/schema"
)

// TriageInstruction is how triage routes: a rule a line, "Hand TOPIC questions (WORDS) to AGENT."
const TriageInstruction = `You route each request to the agent best suited to it.
Hand billing questions (charge, refund, invoice) to billing_agent.
Hand login questions (password, login) to tech_agent.`

// New builds the helpdesk on the chat models model returns for each agent's name.
func New(ctx context.Context, model func(agent string) model.ToolCallingChatModel) (*adk.Runner, error) {
	newAgent := func(name, description, instruction string) (adk.Agent, error) {
		return adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
			Name: name, Description: description, Instruction: instruction, Model: model(name)})
	}
	triage, err := newAgent("triage", "Routes each request.", TriageInstruction)
	if err != nil {
		return nil, err
	}
	billing, err := newAgent("billing_agent", "Handles charges, refunds and invoices.", "Resolve billing problems.")
	if err != nil {
		return nil, err
	}
	tech, err := newAgent("tech_agent", "Handles logins and passwords.", "Resolve login problems.")
	if err != nil {
		return nil, err
	}
	root, err := adk.SetSubAgents(ctx, triage, []adk.Agent{billing, tech})
	if err != nil {
		return nil, err
	}
	return adk.NewRunner(ctx, adk.RunnerConfig{Agent: root}), nil
}

// rule is a line of an instruction that routes: its words, and the agent they go to.
var rule = regexp.MustCompile(`Hand \w+ questions \(([^)]*)\) to (\w+)\.`)

// Instructed is a stand-in for an LLM that follows its instruction's routing rules: given the
// transfer tool and a user request with a rule's word, it transfers to that rule's agent;
// otherwise it answers.
func Instructed(agent string) model.ToolCallingChatModel { return instructed{agent: agent} }

type instructed struct {
	agent string
	tools []*schema.ToolInfo
}

func (m instructed) Generate(_ context.Context, in []*schema.Message, opts ...model.Option) (*schema.Message, error) {
	last := in[len(in)-1]
	tools := model.GetCommonOptions(&model.Options{Tools: m.tools}, opts...).Tools // eino passes them as an option
	canTransfer := slices.ContainsFunc(tools, func(t *schema.ToolInfo) bool { return t.Name == adk.TransferToAgentToolName })
	if last.Role == schema.User && canTransfer && in[0].Role == schema.System {
		request := strings.ToLower(last.Content)
		for _, r := range rule.FindAllStringSubmatch(in[0].Content, -1) {
			for _, word := range strings.Split(r[1], ", ") {
				if strings.Contains(request, word) {
					return schema.AssistantMessage("", []schema.ToolCall{{ID: "call_" + m.agent, Type: "function",
						Function: schema.FunctionCall{Name: adk.TransferToAgentToolName, Arguments: fmt.Sprintf(`{"agent_name":%q}`, r[2])}}}), nil
				}
			}
		}
	}
	return schema.AssistantMessage(m.agent+" here: it is taken care of.", nil), nil
}

func (m instructed) Stream(ctx context.Context, in []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	msg, err := m.Generate(ctx, in, opts...)
	return schema.StreamReaderFromArray([]*schema.Message{msg}), err
}

func (m instructed) WithTools(tools []*schema.ToolInfo) (model.ToolCallingChatModel, error) {
	m.tools = tools
	return m, nil
}
