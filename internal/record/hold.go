package record

import (
	"context"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/cloudwego/eino/schema"

	"github.com/baton-dev/baton/traces"
)

// The moments a Debugger holds a run at. A model call and its reply are held by the model
// itself (HoldModel, HoldReply: only the model can change what it is given and what it answers);
// the rest by the recorder's callbacks, in the goroutine that runs the agent: a tool or AgentTool
// call at its start, before the tool runs; a failure, an interrupt and a session write once
// recorded, at the callback that recorded them (holdQueued).

// Debug makes d hold the run at its breakpoints. Call it before Run; a recorder without a
// debugger never holds its run and pays one nil check per moment, one with a debugger that is not
// armed one atomic load more.
func (r *Recorder) Debug(d *Debugger) { r.debug = d }

// holding reports whether a moment of the run may be held now.
func (r *Recorder) holding() bool { return r.debug != nil && r.debug.Armed() }

// Holding reports whether a breakpoint may hold the run ctx is part of now: a recorder records
// it with a debugger that is armed (breakpoints set, a step going on). False costs a context
// lookup and an atomic load.
func Holding(ctx context.Context) bool {
	v := visitIn(ctx)
	return v != nil && v.rec.holding()
}

// Holdable reports whether a breakpoint may ever hold the run ctx is part of: a recorder records
// it with a debugger. What a model wrapper checks before wrapping a call: the call may be held
// at its reply by a breakpoint set while the model thinks.
func Holdable(ctx context.Context) bool {
	v := visitIn(ctx)
	return v != nil && v.rec.debug != nil
}

// HoldModel holds the run before the model call of the agent ctx runs in, when a model
// breakpoint wants it, and returns the messages the call is to receive: msgs, or the edit of
// them the run was continued with. The error is the run's context's once it was aborted.
func HoldModel(ctx context.Context, msgs []*schema.Message) ([]*schema.Message, error) {
	v := visitIn(ctx)
	if v == nil || !v.rec.holding() {
		return msgs, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err // aborted while held elsewhere: no more model calls
	}
	if v.rec.debug.isAborted() {
		return nil, ErrAborted
	}
	in := traceMessages(msgs)
	if in == nil {
		in = []traces.Message{}
	}
	res, ok := v.rec.hold(ctx, v, Stop{Break: traces.BreakModel, Agent: v.agent, Target: v.agent, Input: in,
		Detail: fmt.Sprintf("%s calls its model with %d messages", v.agent, len(msgs))})
	switch {
	case !ok:
		return msgs, nil
	case res.Action == traces.ActionAbort:
		return nil, v.rec.debug.abortError(ctx)
	case res.Input != nil:
		out := make([]*schema.Message, len(res.Input))
		for i := range res.Input {
			out[i] = schemaMessage(res.Input[i], nil)
		}
		return out, nil
	}
	return msgs, nil
}

// HoldReply holds the run at a model's reply that transfers, before the transfer takes effect,
// when a transfer breakpoint (or a step) wants it, and returns the reply the run goes on with:
// reply, or its edit. The error is the run's context's once it was aborted.
func HoldReply(ctx context.Context, reply *schema.Message) (*schema.Message, error) {
	v := visitIn(ctx)
	if v == nil || !v.rec.holding() || reply == nil {
		return reply, nil
	}
	target := ""
	for _, tc := range reply.ToolCalls {
		if tc.Function.Name == transferToolName {
			target = transferArgTarget(tc.Function.Arguments)
		}
	}
	if target == "" {
		return reply, nil
	}
	r := v.rec
	v.outputs.wait() // a streamed reply is recorded first
	r.mu.Lock()
	at := v.finishedAt
	r.mu.Unlock()
	was := traceMessage(reply)
	res, ok := r.hold(ctx, v, Stop{Break: traces.BreakTransfer, Agent: v.agent, Target: target, At: at, Reply: &was,
		Detail: fmt.Sprintf("%s transfers to %s", v.agent, target)})
	switch {
	case !ok:
		return reply, nil
	case res.Action == traces.ActionAbort:
		return nil, r.debug.abortError(ctx)
	case res.Reply != nil:
		return schemaMessage(*res.Reply, reply), nil
	}
	return reply, nil
}

// holdTool holds the run at the start of tool call c of v, named name, when no wrapper
// (HeldTool) decided on it: the tool runs whatever is decided, but for an abort of Baton's run.
func (r *Recorder) holdTool(c *call, name, args string) {
	if !r.holding() || name == transferToolName || heldByWrapper(c, name) {
		return
	}
	r.hold(c.Context, c.v, r.toolStop(c.v, name, args))
}

// holdHandover holds the run at the start of v, before anything of it is recorded, when a
// deterministic transfer brought control to it: a wrapper hands over, and no model reply decided
// it (a model's transfer is held at its reply, HoldReply).
func (r *Recorder) holdHandover(ctx context.Context, v *visit) {
	if !r.holding() || v == nil || v.handedBy == "" {
		return
	}
	r.hold(ctx, v.parent, Stop{Break: traces.BreakTransfer, Agent: v.handedBy, Target: v.agent,
		Detail: fmt.Sprintf("%s hands over to %s (deterministic)", v.handedBy, v.agent)})
}

// queueStop notes a moment a breakpoint may hold the run at, held by the next callback of the
// run's goroutine (holdQueued). Callers hold r.mu.
func (r *Recorder) queueStop(s Stop) {
	if r.holding() {
		r.stops = append(r.stops, s)
	}
}

// holdQueued holds the run at the moments queued so far, in order. At the end of a call
// (before false) it leaves them queued while an AgentTool call's end is parked: the paused event
// would wait behind it, unseen, until the caller's copy of events decides it, which comes only
// after this callback; the next start of a call holds the run then (hold waits for the decision).
func (r *Recorder) holdQueued(ctx context.Context, v *visit, before bool) {
	if r.debug != nil { // small enough to be inlined: a recorder without a debugger pays no call
		r.holdQueuedArmed(ctx, v, before)
	}
}

// holdQueuedArmed is holdQueued with a debugger.
func (r *Recorder) holdQueuedArmed(ctx context.Context, v *visit, before bool) {
	if !r.debug.Armed() {
		return
	}
	r.mu.Lock()
	if len(r.out.parked) > 0 && !before {
		r.mu.Unlock()
		return
	}
	stops := r.stops
	r.stops = nil
	r.mu.Unlock()
	for _, s := range stops {
		r.hold(ctx, v, s)
	}
}

// schemaMessage is m as eino's message; the tool calls' ids, where m leaves them out, and the
// response's metadata are was's (the reply m edits; nil for none).
func schemaMessage(m traces.Message, was *schema.Message) *schema.Message {
	out := &schema.Message{Role: schema.RoleType(m.Role), Content: m.Content, ToolCallID: m.ToolCallID, ToolName: m.ToolName}
	if was != nil {
		out.ResponseMeta = was.ResponseMeta
	}
	for i, tc := range m.ToolCalls {
		id := tc.ID
		if id == "" && was != nil && i < len(was.ToolCalls) {
			id = was.ToolCalls[i].ID
		}
		if id == "" {
			id = fmt.Sprintf("edited_call_%d", i+1)
		}
		out.ToolCalls = append(out.ToolCalls, schema.ToolCall{ID: id, Type: "function", Function: schema.FunctionCall{Name: tc.Name, Arguments: tc.Arguments}})
	}
	return out
}

// transferArgTarget returns the agent_name of transfer_to_agent's arguments, "" for none.
func transferArgTarget(args string) string {
	var target struct {
		AgentName string `json:"agent_name"`
	}
	if json.Unmarshal([]byte(args), &target) != nil {
		return ""
	}
	return target.AgentName
}

// clip shortens s to at most n bytes, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
