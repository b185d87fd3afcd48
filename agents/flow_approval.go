package agents

import (
	"context"
	"fmt"
	"strings"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/schema"

	"github.com/baton-dev/baton/traces"
)

// Agent descriptions and canned texts of the approval flow.
const (
	supportDesc         = "Answers customers; calls billing_agent as a tool for anything about money."
	billingApprovalDesc = "Finds charges and refunds them, once a person approves each refund."
	// ApprovalQuestion is what issue_refund's interrupt asks the person who approves.
	ApprovalQuestion = "Refund €49.00 to the card ending 4242 for order 7731 (charged twice on 2 March)?"
)

func init() {
	register(Flow{
		Name:  "approval",
		Title: "Human in the loop: a tool inside an AgentTool waits for approval",
		Group: GroupHuman,
		Plain: "A refund waits for a person: the run pauses, and you approve or reject it on the run page.",
		Description: "support_agent calls billing_agent as a tool (adk.NewAgentTool); billing_agent's issue_refund " +
			"tool interrupts (tool.Interrupt) to ask a person, and the interrupt crosses the AgentTool boundary: " +
			"the whole run pauses, saved in eino's checkpoint store. Approve or reject it on the run page (or " +
			"`run approval --approve` / `--reject TEXT`): the run resumes through Runner.ResumeWithParams in the " +
			"same trace, interrupted then resumed, and only the remaining steps run. Until then the linter notes a stalled-interrupt.",
		DefaultInput: "I was charged twice for order 7731, please refund one of them.",
		Agents: []traces.Agent{
			{Name: "support_agent", Description: supportDesc, Kind: traces.AgentChatModel, Tools: []string{"billing_agent"}},
			{Name: "billing_agent", Description: billingApprovalDesc, Kind: traces.AgentChatModel, Parent: "support_agent",
				Relation: traces.RelationAgentTool, Tools: []string{"find_charges", "issue_refund"}},
		},
		Scripts: map[string]Script{
			"support_agent": NewScript(
				SayAndDo("Let me have billing look at order 7731.", Ask("billing_agent", "Order 7731 was charged twice: refund the duplicate.")),
				QuoteToolResult("%s"),
			),
			"billing_agent": NewScript(
				Do(Call("find_charges", orderArg{Order: "7731"})),
				SayAndDo("Two identical charges of €49.00; refunding the second.", Call("issue_refund", refundArg{Order: "7731", Amount: 49})),
				Computed(answerRefund),
			),
		},
		Build:     buildApproval,
		InputNote: fixedAnswers,
	})
}

// answerRefund is billing_agent's last reply: what issue_refund answered after the decision.
func answerRefund(input []*schema.Message) Reply {
	res := LastToolResult(input)
	if strings.HasPrefix(res, "Refunded") {
		return Reply{Text: res + " The customer sees it in 3-5 working days."}
	}
	return Reply{Text: "I could not refund order 7731: " + res}
}

// buildApproval builds the approval flow anew.
func buildApproval(ctx context.Context, models ModelFor) (adk.Agent, error) {
	var box toolBox
	addTool(&box, "find_charges", "List the card charges of an order.", func(_ context.Context, in orderArg) (string, error) {
		return fmt.Sprintf("Order %s: €49.00 on 2 March 09:14 and €49.00 on 2 March 09:15, card ending 4242.", in.Order), nil
	})
	addTool(&box, "issue_refund", "Refund an amount of an order to its card; a person must approve it.", approvedRefund)
	if box.err != nil {
		return nil, box.err
	}
	billing, err := NewChatAgent(ctx, models, adk.ChatModelAgentConfig{
		Name: "billing_agent", Description: billingApprovalDesc, ToolsConfig: box.toolsConfig(),
		Instruction: "You find an order's charges with find_charges and refund duplicates with issue_refund.",
	})
	if err != nil {
		return nil, err
	}
	conf := adk.ChatModelAgentConfig{
		Name: "support_agent", Description: supportDesc,
		Instruction: "You answer customers. Ask billing_agent about charges and refunds.",
	}
	conf.ToolsConfig.Tools = []tool.BaseTool{adk.NewAgentTool(ctx, billing)}
	conf.ToolsConfig.EmitInternalEvents = true
	return NewChatAgent(ctx, models, conf)
}

// approvedRefund interrupts the first time it runs; resumed with a Decision, it refunds or says why
// not. Resumed without one (a plain Resume), it asks again.
func approvedRefund(ctx context.Context, in refundArg) (string, error) {
	target, hasData, d := tool.GetResumeContext[Decision](ctx)
	if !target || !hasData {
		return "", tool.Interrupt(ctx, ApprovalQuestion)
	}
	if !d.Approve {
		return "the refund was rejected by the reviewer: " + orNone(d.Comment), nil
	}
	return fmt.Sprintf("Refunded €%.2f for order %s to the card ending 4242 (approved: %s).", in.Amount, in.Order, orNone(d.Comment)), nil
}

// orNone is a reviewer's comment, or a word saying there was none.
func orNone(comment string) string {
	if c := strings.TrimSpace(comment); c != "" {
		return c
	}
	return "no comment"
}
