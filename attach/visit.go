package attach

import (
	"context"
	"time"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/callbacks"

	"github.com/baton-dev/baton/traces"
)

// Ways control reaches an agent, as agent.started's via says.
const (
	viaRun       = "run"
	viaTransfer  = "transfer"
	viaAgentTool = "agenttool"
	viaWorkflow  = "workflow"
)

// isWorkflow reports whether an eino agent type runs its sub-agents itself.
func isWorkflow(kind string) bool {
	return kind == "Sequential" || kind == "Parallel" || kind == "Loop"
}

// agentStarted records the start of a visit. It first waits for what caused it: the transfer that
// brought control here and the end of the agent that transferred, or the steps of a sequence or
// loop before it. parent is the visit the agent runs inside, if any.
func (r *Recorder) agentStarted(ctx context.Context, info *callbacks.RunInfo, at place, parent *visit, in *adk.AgentCallbackInput) *visit {
	resumed := in != nil && in.ResumeInfo != nil
	via := viaTransfer
	switch {
	case at.callerTool != "":
		via = viaAgentTool
	case parent != nil && isWorkflow(parent.kind):
		via = viaWorkflow
		if parent.kind != "Parallel" {
			r.awaitSteps(parent) // parallel branches run as they run
		}
	case r.rootVisit() == nil || (resumed && parent == nil):
		via = viaRun
	default:
		if from := r.awaitTransfer(ctx, at.agent()); from != nil {
			from.await()
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sessionCtx == nil {
		r.sessionCtx = ctx
	}
	v := &visit{rec: r, agent: at.agent(), kind: info.Type, path: at.path, via: via, parent: parent, finished: make(chan struct{})}
	if r.root == nil {
		r.root = v
	}
	r.order = append(r.order, v)
	if via == viaAgentTool && parent != nil {
		call := traces.AgentToolCall{Caller: parent.agent, Callee: v.agent, CallID: at.callID, Request: requestOf(r.openTools[at.callID].args)}
		r.agentTools[at.callID] = agentToolCall{AgentToolCall: call, callee: v}
		r.emit(traces.Event{Kind: traces.KindAgentToolEnter, Agent: call.Caller, RunPath: at.path[:len(at.path)-1], AgentTool: &call})
	}
	run := &traces.AgentRun{Via: via, Resumed: resumed}
	if in != nil && in.Input != nil {
		run.Input = traceMessages(in.Input.Messages)
	}
	r.emit(traces.Event{Kind: traces.KindAgentStarted, Agent: v.agent, RunPath: v.path, AgentRun: run})
	r.tree.visit(v)
	r.putAgents()
	r.diffSession(ctx, v)
	return v
}

// rootVisit returns the run's first visit, or nil before any.
func (r *Recorder) rootVisit() *visit {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.root
}

// awaitSteps waits until the earlier steps of a sequence or loop have finished: one step runs
// after another, so it is recorded after them.
func (r *Recorder) awaitSteps(workflow *visit) {
	r.mu.Lock()
	var steps []*visit
	for _, v := range r.order {
		if v.parent == workflow {
			steps = append(steps, v)
		}
	}
	r.mu.Unlock()
	for _, v := range steps {
		v.await()
	}
}

// await blocks until v has finished, or causeWait has passed: whatever waits on a visit happened
// after it in eino, so its end is already on the way.
func (v *visit) await() {
	t := time.NewTimer(causeWait)
	defer t.Stop()
	select {
	case <-v.finished:
	case <-t.C:
	}
}

// isFinished reports whether the run has been recorded to its end.
func (r *Recorder) isFinished() bool {
	select {
	case <-r.ended:
		return true
	default:
		return false
	}
}

// runnableStarted notes that v's work runs in a compose runnable, whose end is the end of it.
func (r *Recorder) runnableStarted(v *visit) {
	r.mu.Lock()
	defer r.mu.Unlock()
	v.runnable = true
}

// runnableEnded records the end of v's own work, failed when err is not an interrupt.
func (r *Recorder) runnableEnded(v *visit, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case isInterrupt(err):
		v.interrupted = true
	case err != nil:
		v.errMsg = err.Error()
	}
	v.runnableEnded = true
	r.finishVisit(v)
}

// finishVisit records agent.finished once v's own work and its own events are both over, and
// the visits it ran (workflow steps, AgentTool callees) have finished: the events eino counts as
// the agent's (a deterministic transfer, an exit, an interrupt, an error) belong before its end.
// Callers hold r.mu.
func (r *Recorder) finishVisit(v *visit) {
	if v.closed || !v.ownDone || (v.runnable && !v.runnableEnded) {
		return
	}
	for _, c := range r.order {
		if c.parent == v && !c.closed {
			return // finished by the last of them
		}
	}
	v.closed = true
	r.emit(traces.Event{Kind: traces.KindAgentFinished, Agent: v.agent, RunPath: v.path,
		AgentRun: &traces.AgentRun{Error: v.errMsg, Interrupted: v.interrupted}})
	close(v.finished)
	if v.parent != nil {
		r.finishVisit(v.parent)
	}
}

// follow reads v's copy of its events on a goroutine of its own. The root's copy closes when the
// whole run has ended, and then the run is finished.
func (r *Recorder) follow(v *visit, events *adk.AsyncIterator[*adk.AgentEvent]) {
	r.drains.add()
	go func() {
		for events != nil {
			ev, ok := events.Next()
			if !ok {
				break
			}
			r.observe(v, ev)
		}
		r.mu.Lock()
		v.ownDone = true
		r.finishVisit(v)
		root := v == r.root
		if root {
			r.rootDrained = true
		}
		r.mu.Unlock()
		r.drains.done()
		if root {
			r.maybeFinish()
		}
	}()
}

// noticeSession records the session values changed since the last look, from a callback that
// runs where the work happens. Goroutines reading copies never look: eino may be writing the
// session at that very moment, and the trace would then depend on timing.
func (r *Recorder) noticeSession(ctx context.Context, v *visit) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.diffSession(ctx, v)
}
