package agents

import (
	"context"
	"strings"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/schema"
)

// handoffPrefix starts the one message housekeeping's history rewriter makes of the other agents'
// turns.
const handoffPrefix = "Handoff note: "

func init() {
	register(Flow{
		Name:  "transfer-rewriter",
		Title: "Transfer with a custom history rewriter: a handoff note instead of \"For context:\"",
		Group: GroupTransfer,
		Plain: "A handoff that passes a short note instead of the whole conversation: see exactly what the next agent was fed.",
		Description: "reception transfers to housekeeping, which is built with adk.AgentWithOptions(..., " +
			"adk.WithHistoryRewriter(fn)): eino hands fn the history (the user's input and every agent's " +
			"messages) and feeds housekeeping what fn returns, in place of its default \"For context:\" rewriting. " +
			"This rewriter keeps the user's words and turns the other agents' tool results into one \"Handoff " +
			"note:\" message, dropping their chatter and the transfer. Compare housekeeping's input with the " +
			"transfer-skip flow's.",
		DefaultInput: hotelInput,
		InputNote:    fixedAnswers,
		Agents:       hotelAgents,
		Scripts:      hotelScripts,
		Build: func(ctx context.Context, models ModelFor) (adk.Agent, error) {
			return buildHotel(ctx, models, adk.WithHistoryRewriter(handoffNote))
		},
		OwnHistory: "housekeeping's input is written by a history rewriter of the flow's own (adk.WithHistoryRewriter)",
	})
}

// handoffNote is housekeeping's history rewriter: the user's messages and its own stay as they are;
// the results of the other agents' tools, but transfer_to_agent, become one handoff note.
func handoffNote(_ context.Context, entries []*adk.HistoryEntry) ([]adk.Message, error) {
	var out []adk.Message
	var notes []string
	for _, e := range entries {
		switch {
		case e.IsUserInput || e.AgentName == "housekeeping":
			out = append(out, e.Message)
		case e.Message.Role == schema.Tool && e.Message.ToolName != "transfer_to_agent":
			notes = append(notes, "["+e.AgentName+"] "+e.Message.Content)
		}
	}
	if len(notes) > 0 {
		out = append(out, schema.UserMessage(handoffPrefix+strings.Join(notes, " ")))
	}
	return out, nil
}
