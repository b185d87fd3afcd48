package agents

import (
	"context"
	"errors"
	"fmt"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/tool"

	"github.com/baton-dev/baton/traces"
)

// Agent descriptions of the agenttool-exit flow.
const (
	conciergeDesc = "Answers customers, calling the refund agent and the orders desk as tools."
	refundDesc    = "Issues refunds, then exits with the outcome."
	ordersDesc    = "Answers questions about orders; hands delivery questions to shipping_agent."
	shippingDesc  = "Tracks parcels."
	refundResult  = "Refunded €12.00 to the card ending 4242 (reference R-88)."
)

func init() {
	register(Flow{
		Name:  "agenttool-exit",
		Title: "AgentTool boundary: an exit and a transfer inside a tool stop there",
		Group: GroupAgentTool,
		Plain: "An agent called as a tool that ends early, and one that hands off inside the call: both stop at the call's edge, and the caller carries on.",
		Description: "A concierge calls two agents as tools (adk.NewAgentTool). refund_agent ends with eino's exit " +
			"tool (adk.ExitTool): the exit ends refund_agent's run, its final_result becomes the tool result, and the " +
			"concierge carries on. orders_desk is a multi-agent whose model transfers to shipping_agent: the transfer " +
			"happens inside the tool's run, and the concierge only gets shipping_agent's answer. Look for the exit and " +
			"the transfer inside the AgentTool frames, and the concierge's final answer after both: the linter names the exit a swallowed-action.",
		DefaultInput: "I was charged twice for order 1234, and where is it?",
		InputNote:    fixedAnswers,
		Agents: []traces.Agent{
			{Name: "concierge", Description: conciergeDesc, Kind: traces.AgentChatModel, Tools: []string{"refund_agent", "orders_desk"}},
			{Name: "refund_agent", Description: refundDesc, Kind: traces.AgentChatModel, Parent: "concierge",
				Relation: traces.RelationAgentTool, Tools: []string{"issue_refund", "exit"}},
			{Name: "orders_desk", Description: ordersDesc, Kind: traces.AgentChatModel, Parent: "concierge",
				Relation: traces.RelationAgentTool, Tools: []string{"transfer_to_agent"}},
			{Name: "shipping_agent", Description: shippingDesc, Kind: traces.AgentChatModel, Parent: "orders_desk",
				Relation: traces.RelationSubAgent, Tools: []string{"track_parcel", "transfer_to_agent"}},
		},
		Scripts: map[string]Script{
			"concierge": NewScript(
				SayAndDo("First the double charge.", Ask("refund_agent", "Refund the duplicate €12.00 charge on order 1234.")),
				SayAndDo("Refund done. Now the delivery.", Ask("orders_desk", "Where is order 1234?")),
				Say("Sorry about the double charge: "+refundResult+" Your order 1234 is with the courier and arrives tomorrow before noon."),
			),
			"refund_agent": NewScript(
				Do(Call("issue_refund", refundArg{Order: "1234", Amount: 12})),
				Do(Exit(refundResult)),
			),
			"orders_desk": NewScript(
				SayAndDo("A delivery question: shipping_agent tracks parcels.", Transfer("shipping_agent")),
			),
			"shipping_agent": NewScript(
				Do(Call("track_parcel", orderArg{Order: "1234"})),
				QuoteToolResult("Order 1234: %s"),
			),
		},
		Build: buildAgentToolExit,
	})
}

// buildAgentToolExit builds the agenttool-exit flow anew.
func buildAgentToolExit(ctx context.Context, models ModelFor) (adk.Agent, error) {
	var rt, st toolBox
	addTool(&rt, "issue_refund", "Refund an amount of an order to the card it was paid with.", issueRefund)
	addTool(&st, "track_parcel", "Track the parcel of an order.", trackParcel)
	if err := errors.Join(rt.err, st.err); err != nil {
		return nil, err
	}
	built, err := newChatAgents(ctx, models, adk.ChatModelAgentConfig{
		Name: "refund_agent", Description: refundDesc, ToolsConfig: rt.toolsConfig(), Exit: adk.ExitTool{},
		Instruction: "You issue refunds with issue_refund, then end with exit, giving the outcome as final_result.",
	}, adk.ChatModelAgentConfig{
		Name: "orders_desk", Description: ordersDesc,
		Instruction: "You answer questions about orders. Transfer delivery questions to shipping_agent.",
	}, adk.ChatModelAgentConfig{
		Name: "shipping_agent", Description: shippingDesc, ToolsConfig: st.toolsConfig(),
		Instruction: "You track parcels with track_parcel and say when they arrive.",
	})
	if err != nil {
		return nil, err
	}
	refund, desk, shipping := built[0], built[1], built[2]
	orders, err := adk.SetSubAgents(ctx, desk, []adk.Agent{shipping})
	if err != nil {
		return nil, fmt.Errorf("set sub-agents of orders_desk: %w", err)
	}
	var conf adk.ToolsConfig
	conf.Tools = []tool.BaseTool{adk.NewAgentTool(ctx, refund), adk.NewAgentTool(ctx, orders)}
	conf.EmitInternalEvents = true
	conf.ExecuteSequentially = true
	return NewChatAgent(ctx, models, adk.ChatModelAgentConfig{
		Name: "concierge", Description: conciergeDesc, ToolsConfig: conf,
		Instruction: "You answer customers. Use refund_agent for refunds and orders_desk for questions about orders.",
	})
}

// refundArg is issue_refund's argument.
type refundArg struct {
	Order  string  `json:"order" jsonschema:"description=the order number"`
	Amount float64 `json:"amount" jsonschema:"description=the amount to refund, in euros"`
}

// issueRefund "refunds" the amount.
func issueRefund(_ context.Context, in refundArg) (string, error) {
	if in.Amount <= 0 {
		return "", fmt.Errorf("issue_refund: amount %v is not positive", in.Amount)
	}
	return fmt.Sprintf("Refund R-88 of €%.2f for order %s accepted; card ending 4242.", in.Amount, in.Order), nil
}

// orderArg is the argument of the tools that look an order up.
type orderArg struct {
	Order string `json:"order" jsonschema:"description=the order number"`
}

// trackParcel answers the canned tracking of any order.
func trackParcel(_ context.Context, in orderArg) (string, error) {
	return fmt.Sprintf("parcel of order %s left the depot at 07:40 and arrives tomorrow before noon.", in.Order), nil
}
