package record

import (
	"runtime/metrics"
	"slices"
	"time"

	"github.com/baton-dev/baton/traces"
)

// ending runs in eino's callback for the end of v's work: the last moment before the app can see
// its run end, when v is the run's last agent. The run is finished only once the copies of its
// events are read, after that moment, and an app may exit as soon as it sees its last event. So
// unless v runs as a tool (its caller goes on) or something is known to go on (a transfer, a tool
// or AgentTool call, another agent's work), the sink is told how the run ends should nothing
// follow: its status and the events its end would record. It waits for that to be delivered.
// If the run goes on after all (the next step of a workflow, a deterministic transfer), what
// follows replaces it.
//
// First v's copy of events catches up with what eino sent before this moment, on its way to the
// app: events come within microseconds, and echoWait bounds the wait all the same. A chat model
// agent's events are each the echo of a reply or tool result callbacks recorded, followed by what
// only the copy says (an exit, a loop's break): the wait ends when all are in. A custom agent's
// runnable may send events of its own that no callback announces (plan-execute's planner and
// replanner send the plan, the response and the loop's break), and nothing says how many: the
// wait ends once nothing else in the process runs or waits to (see idle), for then eino's
// forwarder and the copy's reader have nothing left to carry, or once the copy has been quiet
// for busyQuiet while the app's other goroutines keep the process busy.
func (r *Recorder) ending(v *visit) {
	if r.out.ender == nil || v.insideTool() {
		return
	}
	v.catchUp()
	r.mu.Lock()
	r.answerAll(v) // what its copy has not carried of them by now, it will not in time
	if !r.mayBeLast(v) {
		r.mu.Unlock()
		return
	}
	await := r.out.promise(r.foresee(r.out.at().time()))
	r.mu.Unlock()
	await()
}

// How long the end of an agent's work waits for its copy of events to catch up (see ending): at
// most echoWait, and for a custom agent, while the process stays busy, until its copy has been
// quiet for busyPolls looks, one every idlePoll, at whether the process has gone idle. A quiet
// window alone is not enough: on a loaded machine eino's forwarder may not run for milliseconds
// while the event it has to carry waits, and the run's promised end would then lack it. The
// window is counted in looks, not time, so that it lasts longer while the app itself is starved.
const (
	echoWait  = 200 * time.Millisecond
	idlePoll  = 250 * time.Microsecond
	busyPolls = 80 // 20 ms on a machine that runs the app at once
)

// catchUp waits until v's copy of events has carried what eino sent of v so far (see ending).
func (v *visit) catchUp() {
	r := v.rec
	deadline := time.NewTimer(echoWait)
	defer deadline.Stop()
	r.mu.Lock()
	caughtUp := v.echoes.due()
	r.mu.Unlock()
	select {
	case <-caughtUp:
	case <-deadline.C:
		return
	}
	if v.kind == "ChatModel" {
		return
	}
	poll := time.NewTicker(idlePoll)
	defer poll.Stop()
	for quiet := 0; !idle(); {
		r.mu.Lock()
		observed := v.echoes.nextOwn()
		r.mu.Unlock()
		select {
		case <-observed:
			quiet = 0
		case <-poll.C: // a tick that comes late counts once: the ticker drops those it could not give
			if quiet++; quiet == busyPolls {
				return
			}
		case <-deadline.C:
			return
		}
	}
}

// idle reports whether no goroutine of the process but the caller runs or waits to run: every
// other one is blocked. An event eino has sent wakes the goroutine that forwards it, and that one
// the copy's reader, so while either has work the process is not idle.
func idle() bool {
	s := [...]metrics.Sample{{Name: "/sched/goroutines/running:goroutines"}, {Name: "/sched/goroutines/runnable:goroutines"}}
	metrics.Read(s[:])
	return s[0].Value.Uint64() <= 1 && s[1].Value.Uint64() == 0
}

// insideTool reports whether v runs inside a tool call (an AgentTool's callee, a host
// specialist): its end is never the run's, the caller goes on.
func (v *visit) insideTool() bool {
	for ; v != nil; v = v.parent {
		if v.via == viaAgentTool || v.handedTo {
			return true
		}
	}
	return false
}

// mayBeLast reports whether nothing is known to go on in the run once v's work has ended: no tool
// or AgentTool call is open, no other agent's work runs. (A transfer may be refused: its target
// starts, or the ending foresees the refusal.) Callers hold r.mu.
func (r *Recorder) mayBeLast(v *visit) bool {
	return !r.calls.anyOpen() && !r.visits.workingBesides(v)
}

// foresee returns how the run ends should nothing more happen in it, stamped at, without
// recording anything. Its tail is what finish would record then, in finish's order: what is
// parked; each transfer no agent claimed, refused, with the run's failure; what only the events
// of an agent whose work just ended would still say (its error, its interrupt); then
// agent.finished for every visit still open, each once the visits inside it have finished, the
// latest started first. Callers hold r.mu.
func (r *Recorder) foresee(at time.Time) ending {
	end := ending{Time: at}
	end.Status, end.Error = r.run.outcome()
	add := func(e traces.Event) {
		e.Time = at
		end.Tail = append(end.Tail, e)
	}
	r.out.foreseeParked(add)
	for _, v := range r.visits.order {
		for _, h := range r.transfers.heldFrom(v) {
			t := h.t
			msg, by, _ := r.transfers.refusal(v, h)
			t.Outcome, t.Error, t.ErrorBy = traces.TransferFailed, msg, by
			add(traces.Event{Kind: traces.KindTransfer, Agent: t.From, RunPath: h.path, Transfer: &t})
			add(failure(v.agent, h.path, msg))
			end.Status, end.Error = r.run.failed(msg)
		}
	}
	closed := make(map[*visit]bool)
	interrupts := slices.Clone(r.run.interrupts)
	var closeVisit func(v *visit)
	closeVisit = func(v *visit) {
		if v.closed || closed[v] || !v.started {
			return
		}
		for _, c := range r.visits.order {
			if c.parent == v && c.started && !c.closed && !closed[c] {
				return // closed by the last of them
			}
		}
		closed[v] = true
		switch {
		case v.pendingInterrupt != nil && !slices.Contains(interrupts, v.pendingInterrupt.ID):
			interrupts = append(interrupts, v.pendingInterrupt.ID) // once, where it arose: first
			add(traces.Event{Kind: traces.KindInterrupted, Agent: v.agent, RunPath: v.path, Interrupt: v.pendingInterrupt})
			if end.Status == traces.StatusCompleted {
				end.Status, end.Error = traces.StatusInterrupted, ""
			}
		case v.pendingError:
			add(failure(v.agent, v.path, v.errMsg))
			end.Status, end.Error = r.run.failed(v.errMsg)
		}
		add(v.finishedEvent())
		if v.parent != nil {
			closeVisit(v.parent)
		}
	}
	// A visit's end is recorded when its copy of events ends, and the copy of an agent that
	// handed over ends after everything downstream: the latest started close first.
	for _, v := range slices.Backward(r.visits.order) {
		closeVisit(v)
	}
	return end
}
