package attach

import (
	"context"
	"time"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/model"

	"github.com/baton-dev/baton/internal/record"
)

// DefaultHoldTimeout is how long a run of an app held at a breakpoint waits for a decision
// before it goes on by itself, unless HoldTimeout says otherwise.
const DefaultHoldTimeout = 10 * time.Minute

// Middleware returns Baton's eino middleware, with which the breakpoints set on a run in Baton's
// page or API hold the app's run, in the app's own process, until someone continues it there.
// Add it to each ChatModelAgent whose runs Baton may hold:
//
//	agent, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
//		...,
//		Handlers: []adk.ChatModelAgentMiddleware{attach.Middleware()},
//	})
//
// and record the runs as usual (Option, Handler or Run), streamed to a Baton server. While held,
// the page shows where, and continue, step, abort and the edits (the deciding reply, the held
// model call's input, a result given in place of a held tool call, which then does not run) act
// on the run as on Baton's own; the trace records paused and continued.
// Put it first in Handlers, outermost, so that an edited input or reply is what the agent's
// other middleware and the model see.
//
// Fork: with ForkEnv (BATON_FORK) set to the value Baton's page gives for a model call of a run
// the app recorded before, the app's next run streamed to Baton is a fork of that run: each model
// call before the fork point is answered from the recording (the provider is not called), the
// call at the fork point as the fork edits it (another reply or transfer target, or another
// input), and the rest by the model. The run records forked_from and joins the original's
// conversation. A run whose calls depart from the recording before the fork point (another
// input than recorded) says so in its trace, as an error event, and goes on live.
//
// A run is held only by breakpoints set on it: with none, the middleware costs each model call a
// few context lookups and atomic loads. An app without the middleware is never held. A held run
// whose Baton or page goes away goes on by itself after its timeout (DefaultHoldTimeout, or
// HoldTimeout), and says so in its trace and log. An abort fails the run's next model call with
// ErrAborted; the run ends canceled. A run recorded to files (Config.Dir) is never held.
func Middleware(opts ...MiddlewareOption) adk.ChatModelAgentMiddleware {
	record.MiddlewareInUse() // the process may carry out a fork (ForkEnv)
	m := &middleware{BaseChatModelAgentMiddleware: &adk.BaseChatModelAgentMiddleware{}, timeout: DefaultHoldTimeout}
	for _, o := range opts {
		o(m)
	}
	return m
}

// ForkEnv names the environment variable that makes the app's next run a fork (see Middleware).
const ForkEnv = record.ForkEnv

// ErrAborted is what the next model call of a run aborted at a breakpoint fails with; the run
// ends canceled.
var ErrAborted = record.ErrAborted

// MiddlewareOption configures Middleware.
type MiddlewareOption func(*middleware)

// HoldTimeout bounds how long a held run waits for a decision before it goes on by itself. 0
// waits however long it takes, even for a Baton that is gone: use it only where someone decides.
func HoldTimeout(d time.Duration) MiddlewareOption {
	return func(m *middleware) { m.timeout = max(d, 0) }
}

type middleware struct {
	*adk.BaseChatModelAgentMiddleware
	timeout time.Duration
}

// BeforeAgent opts the run the agent is part of in: Baton sends it the breakpoints set on it.
func (m *middleware) BeforeAgent(ctx context.Context, rc *adk.ChatModelAgentContext) (context.Context, *adk.ChatModelAgentContext, error) {
	record.OptIn(ctx, m.timeout)
	return ctx, rc, nil
}

// WrapModel holds the model call, and its reply when it transfers, when a breakpoint wants; in
// the run that carries out a fork (ForkEnv), it answers the calls before the fork point from the
// recording. It leaves the model as it is in a run Baton cannot hold (not recorded, or recorded
// to files).
func (m *middleware) WrapModel(ctx context.Context, mdl model.BaseChatModel, _ *adk.ModelContext) (model.BaseChatModel, error) {
	if record.Forking(ctx) {
		mdl = record.ForkedModel(ctx, mdl)
	}
	if !record.Holdable(ctx) {
		return mdl, nil
	}
	return record.HeldModel(mdl), nil
}

// WrapInvokableToolCall holds a tool call before the tool runs when a tool breakpoint wants it:
// continued with a result, the tool is not run and the model sees that result; aborted, the tool
// is not run. It leaves the tool as it is in a run Baton cannot hold.
func (m *middleware) WrapInvokableToolCall(ctx context.Context, run adk.InvokableToolCallEndpoint, tc *adk.ToolContext) (adk.InvokableToolCallEndpoint, error) {
	if !record.Holdable(ctx) {
		return run, nil
	}
	return record.HeldTool(tc.Name, run), nil
}
