package flows

import (
	"context"

	"github.com/cloudwego/eino/adk"

	"github.com/baton-dev/baton/internal/record"
)

// Middleware returns Baton's eino middleware for the chat model agents of a registered flow,
// with which a tool call held at a tool breakpoint may be given a result in its place (the tool
// then does not run, and the model sees that result); without it such a call is held at its start
// and the tool runs whatever is decided. Put it first in the agent's Handlers:
//
//	adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{..., Model: m,
//		Handlers: []adk.ChatModelAgentMiddleware{flows.Middleware()}})
//
// It leaves every tool as it is in a run no breakpoint can hold. An app that records its own runs
// uses attach.Middleware instead; the two do not go together.
func Middleware() adk.ChatModelAgentMiddleware {
	return toolHolds{&adk.BaseChatModelAgentMiddleware{}}
}

// toolHolds is Middleware: Baton's own flows have it too (agents.NewChatAgent).
type toolHolds struct {
	*adk.BaseChatModelAgentMiddleware
}

// WrapInvokableToolCall implements adk.ChatModelAgentMiddleware.
func (toolHolds) WrapInvokableToolCall(ctx context.Context, run adk.InvokableToolCallEndpoint, tc *adk.ToolContext) (adk.InvokableToolCallEndpoint, error) {
	if !record.Holdable(ctx) {
		return run, nil
	}
	return record.HeldTool(tc.Name, run), nil
}
