package agents

import (
	"context"
	"fmt"
	"strings"

	"github.com/cloudwego/eino/adk"

	"github.com/baton-dev/baton/traces"
)

// Agent descriptions of the transfer-unknown flow.
const (
	helpdeskDesc = "Routes each request to billing_agent or tech_agent."
	billingDesc  = "Handles invoices, charges and refunds."
	techDesc     = "Handles logins and passwords."
)

// techWords are what make helpdesk pick tech_agent (case-insensitive).
var techWords = []string{"password", "login", "log in"}

func init() {
	register(Flow{
		Name:  "transfer-unknown",
		Title: "Transfers eino refuses: an agent that does not exist, a sibling out of reach",
		Group: GroupFailure,
		Plain: "A model hands off to an agent that does not exist, or one out of its reach: the run fails at the handoff.",
		Description: "adk.SetSubAgents(helpdesk, billing_agent, tech_agent), with models that name the wrong agent. " +
			"By default helpdesk transfers to refunds_agent, which does not exist; with a password question it " +
			"transfers to tech_agent, which then transfers to billing_agent, its sibling: only sub-agents and the " +
			"parent are reachable. Either way eino's transfer tool answers \"successfully transferred\", then eino " +
			"fails the run (\"transfer failed: agent ... not found\"): look for the red edge and the error, which the linter names a refused-transfer.",
		DefaultInput: "I want my money back for order 1234",
		InputNote:    "Scripted answers: helpdesk picks tech_agent when you mention " + strings.Join(techWords, ", ") + ", else the agent that does not exist. The texts stay the same.",
		Agents: []traces.Agent{
			{Name: "helpdesk", Description: helpdeskDesc, Kind: traces.AgentChatModel, Tools: []string{"transfer_to_agent"}},
			{Name: "billing_agent", Description: billingDesc, Kind: traces.AgentChatModel, Parent: "helpdesk",
				Relation: traces.RelationSubAgent, Tools: []string{"transfer_to_agent"}},
			{Name: "tech_agent", Description: techDesc, Kind: traces.AgentChatModel, Parent: "helpdesk",
				Relation: traces.RelationSubAgent, Tools: []string{"reset_password", "transfer_to_agent"}},
		},
		Scripts: map[string]Script{
			"helpdesk": NewScript(
				Route(Reply{Text: "A refund: refunds_agent handles those.", ToolCalls: []ToolCall{Transfer("refunds_agent")}},
					When(Reply{ToolCalls: []ToolCall{Transfer("tech_agent")}}, techWords...)),
			),
			"billing_agent": NewScript(Say("Your refund is on its way.")),
			"tech_agent": NewScript(
				Do(Call("reset_password", accountArg{Account: "ana@example.com"})),
				SayAndDo("Password reset. The double charge is billing's business.", Transfer("billing_agent")),
			),
		},
		Build: buildTransferUnknown,
	})
}

// buildTransferUnknown builds the transfer-unknown flow anew.
func buildTransferUnknown(ctx context.Context, models ModelFor) (adk.Agent, error) {
	var tt toolBox
	addTool(&tt, "reset_password", "Send a password reset link.", resetPassword)
	if tt.err != nil {
		return nil, tt.err
	}
	built, err := newChatAgents(ctx, models, adk.ChatModelAgentConfig{
		Name: "helpdesk", Description: helpdeskDesc,
		Instruction: "You route requests: transfer each to the agent best suited to it.",
	}, adk.ChatModelAgentConfig{
		Name: "billing_agent", Description: billingDesc,
		Instruction: "You handle invoices, charges and refunds.",
	}, adk.ChatModelAgentConfig{
		Name: "tech_agent", Description: techDesc, ToolsConfig: tt.toolsConfig(),
		Instruction: "You handle logins and passwords with reset_password.",
	})
	if err != nil {
		return nil, err
	}
	helpdesk, billing, tech := built[0], built[1], built[2]
	root, err := adk.SetSubAgents(ctx, helpdesk, []adk.Agent{billing, tech})
	if err != nil {
		return nil, fmt.Errorf("set sub-agents of helpdesk: %w", err)
	}
	return root, nil
}

// accountArg is reset_password's argument.
type accountArg struct {
	Account string `json:"account" jsonschema:"description=the account's e-mail address"`
}

// resetPassword "sends" a reset link.
func resetPassword(_ context.Context, in accountArg) (string, error) {
	return "Reset link sent to " + in.Account + ", valid for 30 minutes.", nil
}
