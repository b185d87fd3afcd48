package record

import (
	"context"
	"fmt"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/callbacks"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/compose"

	"github.com/baton-dev/baton/traces"
)

// HeldTool wraps run, a call of the tool named name, so that a debugger can hold it before the
// tool runs, at a tool or AgentTool breakpoint (or a step), and go on as decided: run the tool;
// give a result in its place (the tool is not run, and the trace records the call with the
// result given, after the continued event that says so); or abort (the tool is not run, and the
// run ends canceled). eino's callbacks cannot stop a tool; a wrapper around its call can. A run no
// breakpoint may hold calls run as it is. Baton's own runs wrap their agents' tools with it, and
// apps through attach.Middleware (its WrapInvokableToolCall).
func HeldTool(name string, run adk.InvokableToolCallEndpoint) adk.InvokableToolCallEndpoint {
	return func(ctx context.Context, args string, opts ...tool.Option) (string, error) {
		v := visitIn(ctx)
		if v == nil || !v.rec.holding() || name == transferToolName || decided(ctx, name) {
			return run(ctx, args, opts...)
		}
		if err := ctx.Err(); err != nil {
			return "", err // aborted while held elsewhere: no more tool calls
		}
		r := v.rec
		if r.debug.isAborted() {
			return "", ErrAborted
		}
		v.outputs.wait() // the reply that called the tool is recorded first
		r.holdQueued(ctx, v, true)
		// The tool's own start callback, which fires inside run, holds the call no more.
		ctx = context.WithValue(ctx, heldToolKey{}, heldToolMark{name: name, id: compose.GetToolCallID(ctx)})
		stop := r.toolStop(v, name, args)
		stop.Args = &args
		res, ok := r.hold(ctx, v, stop)
		switch {
		case !ok:
		case res.Action == traces.ActionAbort:
			return "", r.debug.abortError(ctx)
		case res.Result != nil:
			// Recorded as a call made, through the callbacks the tool would have fired.
			cctx := callbacks.OnStart(ctx, &tool.CallbackInput{ArgumentsInJSON: args})
			callbacks.OnEnd(cctx, &tool.CallbackOutput{Response: *res.Result})
			return *res.Result, nil
		}
		return run(ctx, args, opts...)
	}
}

// heldToolKey marks a tool call HeldTool decided on: its start callback does not hold it again.
type heldToolKey struct{}

// heldToolMark names the call HeldTool decided on: the calls an AgentTool's callee makes inside
// it, under the same mark, are other calls, held as usual.
type heldToolMark struct{ name, id string }

// heldByWrapper reports whether c, a tool's start callback's call named name, is one HeldTool
// decided on.
func heldByWrapper(c *call, name string) bool {
	m, ok := c.Context.Value(heldToolKey{}).(heldToolMark)
	return ok && m.name == name && m.id == c.toolCallID
}

// decided reports whether ctx is inside a call of name HeldTool decided on already: an agent
// whose middleware wraps its tools twice (Baton's own and attach.Middleware) is held once.
func decided(ctx context.Context, name string) bool {
	m, ok := ctx.Value(heldToolKey{}).(heldToolMark)
	return ok && m.name == name && m.id == compose.GetToolCallID(ctx)
}

// toolStop is the stop at v's call of the tool named name with args: an AgentTool call's when
// name is an agent called as a tool.
func (r *Recorder) toolStop(v *visit, name, args string) Stop {
	r.mu.Lock()
	callee := r.tree.agents[name]
	agentTool := callee != nil && callee.Relation == traces.RelationAgentTool
	r.mu.Unlock()
	if agentTool {
		return Stop{Break: traces.BreakAgentTool, Agent: v.agent, Target: name, Detail: fmt.Sprintf("%s calls %s as a tool: %s", v.agent, name, clip(args, 200))}
	}
	return Stop{Break: traces.BreakTool, Agent: v.agent, Target: name, Detail: fmt.Sprintf("%s calls the tool %s(%s)", v.agent, name, clip(args, 200))}
}
