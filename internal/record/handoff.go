package record

import (
	"context"
	"slices"

	"github.com/cloudwego/eino/callbacks"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"

	"github.com/baton-dev/baton/traces"
)

// handOff starts, when a model call inside v is a specialist of eino's host multi-agent
// (flow/agent/multiagent/host) that v's host model handed off to, the specialist's visit, and
// returns it; otherwise nil.
//
// The host multi-agent is a compose graph, not an ADK agent: an app runs it inside an agent of
// its own, whose visit v is. Its host model calls one tool per specialist it picks, named after
// the specialist; no tool runs them: each is the graph node of that name, and its model call
// fires at that node. These tool calls are exactly what host's OnHandOff reports (host derives it
// from the host model's reply), so they are recorded as transfers chosen by the model (mode llm,
// the tool call's id), all of one reply at once and in its order, as OnHandOff fires, before the
// first specialist starts: specialists picked together run at once. A specialist's visit is its
// one model call, via transfer, below v; or, for a specialist given as an Invokable or
// Streamable (lambda), the lambda's run, which ends with its answer (see specialistAnswered).
// fed is what the specialist was given.
func (r *Recorder) handOff(ctx context.Context, v *visit, at place, fed []*schema.Message, lambda bool) *visit {
	if at.node == "" {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !slices.ContainsFunc(v.calls, func(tc traces.ToolCallSpec) bool { return tc.Name == at.node }) {
		return nil
	}
	if !v.handedOff {
		v.handedOff = true
		// host.MultiAgent returns only its answer: the reply that picked never reaches v's events.
		v.echoes.dropLastReply()
		for _, tc := range v.calls {
			r.out.emit(&traces.Event{Kind: traces.KindTransfer, Agent: v.agent, RunPath: v.path,
				Transfer: &traces.Transfer{From: v.agent, To: tc.Name, Mode: traces.TransferLLM, CallID: tc.ID}})
			r.tree.transfer(v.agent, tc.Name)
		}
	}
	s := &visit{rec: r, agent: at.node, kind: "ChatModel", via: viaTransfer, parent: v, handedTo: true, lambda: lambda,
		startCtx: ctx, finished: make(chan struct{}), workDone: make(chan struct{}), settled: make(chan struct{})}
	s.tools.scope, s.tools.v = s, s
	s.tools.ended.Store(true)
	if lambda {
		s.kind = specialistLambda
	}
	s.path = append(slices.Clone(v.path), s.agent)
	s.addr = pathKey(s.path)
	s.fedInput = traceMessages(withoutSystem(fed))
	r.visits.add(s)
	r.tree.visit(s)
	r.putAgents()
	r.commit(s)
	return s
}

// specialistLambda is the lambda type eino's host gives a specialist run as an Invokable or a
// Streamable.
const specialistLambda = "Specialist"

// isSpecialist reports whether info is the lambda of such a specialist.
func isSpecialist(info *callbacks.RunInfo) bool {
	return info.Component == compose.ComponentOfLambda && info.Type == specialistLambda
}

// specialistAnswered ends the visit of a lambda specialist with its answer, or its failure
// (which fails the host's graph: the error is recorded from the host agent's events).
func (r *Recorder) specialistAnswered(s *visit, msg *schema.Message, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if msg != nil {
		s.lastReply = msg.Content
		r.out.emit(&traces.Event{Kind: traces.KindMessage, Agent: s.agent, RunPath: s.path, Message: ptr(traceMessage(msg))})
	}
	s.errMsg = errText(err)
	s.ownDone = true
	r.finishVisit(s)
}

// withoutSystem returns msgs without the leading system prompt: what an agent was fed, beside
// its instruction.
func withoutSystem(msgs []*schema.Message) []*schema.Message {
	if len(msgs) > 0 && msgs[0] != nil && msgs[0].Role == schema.System {
		return msgs[1:]
	}
	return msgs
}
