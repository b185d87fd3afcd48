package agents

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/schema"

	"github.com/baton-dev/baton/traces"
)

// Agent descriptions of the agenttool-history flow.
const (
	supportLeadDesc = "Talks to the customer, looks their account up, and escalates what it cannot settle."
	escalationDesc  = "Settles escalated cases, reading the whole conversation so far."
	escalateRequest = "Please take over."
)

func init() {
	register(Flow{
		Name:  "agenttool-history",
		Title: "AgentTool with the caller's whole history as input",
		Group: GroupAgentTool,
		Plain: "An agent called as a tool that is fed the caller's whole conversation instead of the request.",
		Description: "support_lead calls escalation_agent as a tool built with adk.NewAgentTool(ctx, agent, " +
			"adk.WithFullChatHistoryAsInput()). Instead of the request argument, which eino drops, the callee is " +
			"fed the caller's conversation so far, rewritten as \"For context:\" messages (without the caller's " +
			"system prompt), ending with a made-up transfer to it. Compare the request in the AgentTool frame with " +
			"escalation_agent's input: it quotes the account lookup it never made.",
		DefaultInput: "My invoice for March is wrong, customer 7781",
		InputNote:    fixedAnswers,
		Agents: []traces.Agent{
			{Name: "support_lead", Description: supportLeadDesc, Kind: traces.AgentChatModel,
				Tools: []string{"lookup_customer", "escalation_agent"}},
			{Name: "escalation_agent", Description: escalationDesc, Kind: traces.AgentChatModel, Parent: "support_lead",
				Relation: traces.RelationAgentTool, Tools: []string{"credit_invoice"}},
		},
		Scripts: map[string]Script{
			"support_lead": NewScript(
				Do(Call("lookup_customer", customerArg{ID: "7781"})),
				SayAndDo("An invoice dispute on a gold account: escalating.", Ask("escalation_agent", escalateRequest)),
				QuoteToolResult("Done: %s"),
			),
			"escalation_agent": NewScript(
				Computed(creditFromHistory),
				QuoteToolResult("I credited the March invoice: %s"),
			),
		},
		Build: buildAgentToolHistory,
	})
}

// buildAgentToolHistory builds the agenttool-history flow anew.
func buildAgentToolHistory(ctx context.Context, models ModelFor) (adk.Agent, error) {
	var lt, et toolBox
	addTool(&lt, "lookup_customer", "Look a customer's account up.", lookupCustomer)
	addTool(&et, "credit_invoice", "Credit an invoice of a customer.", creditInvoice)
	if err := errors.Join(lt.err, et.err); err != nil {
		return nil, err
	}
	escalation, err := NewChatAgent(ctx, models, adk.ChatModelAgentConfig{
		Name: "escalation_agent", Description: escalationDesc, ToolsConfig: et.toolsConfig(),
		Instruction: "You settle escalated cases. Read the conversation, then credit what the customer was overcharged.",
	})
	if err != nil {
		return nil, err
	}
	conf := lt.toolsConfig()
	conf.Tools = append(conf.Tools, adk.NewAgentTool(ctx, escalation, adk.WithFullChatHistoryAsInput()))
	conf.EmitInternalEvents = true
	return NewChatAgent(ctx, models, adk.ChatModelAgentConfig{
		Name: "support_lead", Description: supportLeadDesc, ToolsConfig: conf,
		Instruction: "You handle support requests. Look the customer up, and escalate invoice disputes to escalation_agent.",
	})
}

// customerArg is lookup_customer's argument.
type customerArg struct {
	ID string `json:"id" jsonschema:"description=the customer number"`
}

// lookupCustomer answers a canned account.
func lookupCustomer(_ context.Context, in customerArg) (string, error) {
	return fmt.Sprintf("Customer %s: gold plan (€49/month); March invoice INV-0331 charged €98 (billed twice).", in.ID), nil
}

// creditArg is credit_invoice's argument.
type creditArg struct {
	Invoice string  `json:"invoice" jsonschema:"description=the invoice number"`
	Amount  float64 `json:"amount" jsonschema:"description=the amount to credit, in euros"`
}

// creditInvoice "credits" the amount.
func creditInvoice(_ context.Context, in creditArg) (string, error) {
	return fmt.Sprintf("credit note CN-12 of €%.2f on %s.", in.Amount, in.Invoice), nil
}

// creditFromHistory is escalation_agent's first move: find the invoice in the conversation it was
// handed (the caller's lookup, "For context: ..."), or ask for it when it is not there.
func creditFromHistory(input []*schema.Message) Reply {
	for _, m := range input {
		if m.Role == schema.User && strings.Contains(m.Content, "INV-0331") {
			return Reply{ToolCalls: []ToolCall{Call("credit_invoice", creditArg{Invoice: "INV-0331", Amount: 49})}}
		}
	}
	return Reply{Text: "Which invoice? I was only told: " + firstUserText(input)}
}
