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

// Agent descriptions of the transfer-noreturn flow.
const (
	intakeDesc = "Reads each request and transfers it to legal_agent or sales_agent."
	legalDesc  = "Answers contract questions; has the last word."
	salesDesc  = "Quotes prices, then hands back to intake."
)

// salesWords are what make intake pick sales_agent (case-insensitive).
var salesWords = []string{"price", "pricing", "discount", "quote"}

func init() {
	register(Flow{
		Name:  "transfer-noreturn",
		Title: "Transfer with no way back: a child that may not transfer to its parent",
		Group: GroupTransfer,
		Plain: "A front desk hands a request on; one specialist can hand it back, the other cannot, so its answer ends the run.",
		Description: "adk.SetSubAgents(intake, legal_agent, sales_agent), where legal_agent is built with " +
			"adk.AgentWithOptions(..., adk.WithDisallowTransferToParent()). eino gives sales_agent a " +
			"transfer_to_agent tool and lists intake in its instruction, so it can hand back; legal_agent gets " +
			"neither, so whatever it answers ends the run. Look at legal_agent's tools and instruction in the " +
			"inspector (no transfer_to_agent, no \"Available other agents\"); ask for a price to see sales_agent " +
			"go back.",
		DefaultInput: "Can we end our contract before the renewal date?",
		InputNote:    "Scripted answers: intake picks sales_agent when you mention " + strings.Join(salesWords, ", ") + ", else legal_agent. The texts stay the same.",
		Agents: []traces.Agent{
			{Name: "intake", Description: intakeDesc, Kind: traces.AgentChatModel, Tools: []string{"transfer_to_agent"}},
			{Name: "legal_agent", Description: legalDesc, Kind: traces.AgentChatModel, Parent: "intake",
				Relation: traces.RelationSubAgent, Tools: []string{"read_contract"}},
			{Name: "sales_agent", Description: salesDesc, Kind: traces.AgentChatModel, Parent: "intake",
				Relation: traces.RelationSubAgent, Tools: []string{"get_pricing", "transfer_to_agent"}},
		},
		Scripts: map[string]Script{
			"intake": NewScript(
				Route(Reply{ToolCalls: []ToolCall{Transfer("legal_agent")}},
					When(Reply{ToolCalls: []ToolCall{Transfer("sales_agent")}}, salesWords...)),
				Say("sales_agent has quoted the price above; anything else?"),
			),
			"legal_agent": NewScript(
				Do(Call("read_contract", clauseArg{Clause: "termination"})),
				QuoteToolResult("Yes, with notice: %s"),
			),
			"sales_agent": NewScript(
				Do(Call("get_pricing", planArg{Plan: "business"})),
				Computed(func(input []*schema.Message) Reply {
					return Reply{Text: LastToolResult(input), ToolCalls: []ToolCall{Transfer("intake")}}
				}),
			),
		},
		Build: buildTransferNoReturn,
	})
}

// buildTransferNoReturn builds the transfer-noreturn flow anew.
func buildTransferNoReturn(ctx context.Context, models ModelFor) (adk.Agent, error) {
	var lt, st toolBox
	addTool(&lt, "read_contract", "Read a clause of the customer's contract.", readContract)
	addTool(&st, "get_pricing", "Get the price of a plan.", getPricing)
	if err := errors.Join(lt.err, st.err); err != nil {
		return nil, err
	}
	built, err := newChatAgents(ctx, models, adk.ChatModelAgentConfig{
		Name: "intake", Description: intakeDesc,
		Instruction: "You route requests: contract questions to legal_agent, prices to sales_agent.",
	}, adk.ChatModelAgentConfig{
		Name: "legal_agent", Description: legalDesc, ToolsConfig: lt.toolsConfig(),
		Instruction: "You answer contract questions from the contract, with read_contract.",
	}, adk.ChatModelAgentConfig{
		Name: "sales_agent", Description: salesDesc, ToolsConfig: st.toolsConfig(),
		Instruction: "You quote prices with get_pricing, then hand the conversation back to intake.",
	})
	if err != nil {
		return nil, err
	}
	intake, legal, sales := built[0], built[1], built[2]
	oneWay := adk.AgentWithOptions(ctx, legal, adk.WithDisallowTransferToParent())
	root, err := adk.SetSubAgents(ctx, intake, []adk.Agent{oneWay, sales})
	if err != nil {
		return nil, fmt.Errorf("set sub-agents of intake: %w", err)
	}
	return root, nil
}

// clauseArg is read_contract's argument.
type clauseArg struct {
	Clause string `json:"clause" jsonschema:"description=the clause, e.g. termination"`
}

// readContract answers the canned contract's clauses.
func readContract(_ context.Context, in clauseArg) (string, error) {
	if in.Clause != "termination" {
		return fmt.Sprintf("The contract has no %q clause.", in.Clause), nil
	}
	return "§9 Termination: either party may end the contract with 60 days' written notice; early termination costs one month's fee.", nil
}

// planArg is get_pricing's argument.
type planArg struct {
	Plan string `json:"plan" jsonschema:"description=the plan, e.g. business"`
}

// getPricing answers canned prices.
func getPricing(_ context.Context, in planArg) (string, error) {
	return fmt.Sprintf("The %s plan costs €420 a month, or €4,200 a year (two months free).", in.Plan), nil
}
