package record

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/baton-dev/baton/traces"
)

// heldTransfer is a transfer whose outcome is not known yet. It is recorded once it is: when its
// target starts, or, when the agent that transferred ends first, as refused (eino found no such
// agent reachable).
type heldTransfer struct {
	t    traces.Transfer
	from *visit
	path []string // the run path it is recorded at: from's, or its wrapper's (see visit.outerPath)
	// ready is closed once what the source records before its transfer is recorded: its own work,
	// or, for a transfer out of a team, the whole team.
	ready <-chan struct{}
}

// transfers are a run's transfers whose outcome is not known yet, and the errors eino raised
// outside any agent, which explain the transfers it refused. Their callers hold the recorder's
// lock.
type transfers struct {
	waiting  map[string][]*heldTransfer // by target: the transfers to it its start has not claimed yet
	held     chan struct{}              // closed and replaced whenever a transfer is held
	einoErrs []einoError                // eino's errors of no agent, to explain refusals
	// errsChanged is closed and replaced when one comes or a source of them ends.
	errsChanged chan struct{}
}

func newTransfers() transfers {
	return transfers{waiting: make(map[string][]*heldTransfer), held: make(chan struct{}), errsChanged: make(chan struct{})}
}

// hold holds h until a start of its target claims it, and wakes whoever waits to claim one.
func (ts *transfers) hold(h *heldTransfer) {
	ts.waiting[h.t.To] = append(ts.waiting[h.t.To], h)
	close(ts.held)
	ts.held = make(chan struct{})
}

// claim takes the first transfer to agent held, or, when there is none, returns nil and a channel
// closed when another transfer is held.
func (ts *transfers) claim(agent string) (*heldTransfer, <-chan struct{}) {
	if held := ts.waiting[agent]; len(held) > 0 {
		ts.waiting[agent] = held[1:]
		return held[0], nil
	}
	return nil, ts.held
}

// holdTransfer holds a transfer from v until its outcome is known and wakes agent starts waiting
// for it; out says the wrapper of a team v holds made it, after the team. Callers hold r.mu.
func (r *Recorder) holdTransfer(v *visit, t traces.Transfer, out bool) {
	h := &heldTransfer{t: t, from: v, path: v.path, ready: v.settled}
	if out {
		h.path = v.outerPath
	}
	if v.holds && !out {
		h.ready = v.workDone
	}
	r.transfers.hold(h)
	v.held++
	r.tree.transfer(t.From, t.To)
	r.putAgents()
}

// recordTransfer records h with its outcome: made, or refused with errMsg, in the words of errBy
// (also the run's failure). Callers hold r.mu.
func (r *Recorder) recordTransfer(h *heldTransfer, errMsg, errBy string) {
	t := h.t
	if errMsg != "" {
		t.Outcome, t.Error, t.ErrorBy = traces.TransferFailed, errMsg, errBy
	}
	r.out.emit(&traces.Event{Kind: traces.KindTransfer, Agent: t.From, RunPath: h.path, Transfer: &t})
	if errMsg != "" {
		r.fail(h.from.agent, h.path, errMsg)
	}
	h.from.held--
	r.finishVisit(h.from)
}

// awaitTransfer blocks until a transfer to agent is held, claims it, waits until it is ready and
// records it, made. It returns false when none came within causeWait.
func (r *Recorder) awaitTransfer(ctx context.Context, agent string) *traces.Transfer {
	timeout := time.NewTimer(causeWait)
	defer timeout.Stop()
	for {
		r.mu.Lock()
		h, wake := r.transfers.claim(agent)
		if h != nil {
			r.mu.Unlock()
			awaitClosed(h.ready)
			r.mu.Lock()
			r.noticeOutput(h.from) // stored as h.from's run ended, before eino started agent
			r.recordTransfer(h, "", "")
			r.mu.Unlock()
			return &h.t
		}
		r.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return nil
		case <-timeout.C:
			return nil
		}
	}
}

// refuseTransfers records the transfers of v that no agent start claimed, now that v's events
// have ended: eino refused them. It waits, at most causeWait, for eino's error while a source that
// carries it may still bring it (see einoErrorMayCome); without it, the recorder says what it saw.
func (r *Recorder) refuseTransfers(v *visit) {
	timeout := time.NewTimer(causeWait)
	defer timeout.Stop()
	r.mu.Lock()
	defer r.mu.Unlock()
	for r.transfers.hasUnclaimed(v) && r.transfers.einoErrorFor(v) < 0 && r.einoErrorMayCome(v) {
		wake := r.transfers.errsChanged
		r.mu.Unlock()
		select {
		case <-wake:
			r.mu.Lock()
		case <-timeout.C:
			r.mu.Lock()
			r.refuse(v)
			return
		}
	}
	r.refuse(v)
}

// refuse records v's unclaimed transfers as refused. Callers hold r.mu.
func (r *Recorder) refuse(v *visit) {
	for _, h := range r.transfers.unclaimed(v) {
		msg, by, einos := r.transfers.refusal(v, h)
		if einos >= 0 {
			r.transfers.einoErrs = slices.Delete(r.transfers.einoErrs, einos, einos+1) // told once
		}
		r.recordTransfer(h, msg, by)
	}
}

// refusal returns why eino refused h, a transfer of v, and whose words these are: eino's own
// error, when one reached the recorder (einos is its place in einoErrs, else -1); else the
// recorder's, saying what it saw and why it has no more.
func (ts *transfers) refusal(v *visit, h *heldTransfer) (msg, by string, einos int) {
	if i := ts.einoErrorFor(v); i >= 0 {
		return ts.einoErrs[i].err.Error(), traces.ErrorByEino, i
	}
	return fmt.Sprintf("transfer to %q refused: eino found no agent %q reachable from %q (only its sub-agents and its parent are); "+
		"eino (as of v0.9.21) reports its own error only on the Runner's event stream, which callbacks do not see",
		h.t.To, h.t.To, h.t.From), traces.ErrorByRecorder, -1
}

// hasUnclaimed reports whether v holds a transfer no agent start has claimed.
func (ts *transfers) hasUnclaimed(v *visit) bool {
	for _, held := range ts.waiting {
		if slices.ContainsFunc(held, func(h *heldTransfer) bool { return h.from == v }) {
			return true
		}
	}
	return false
}

// heldFrom returns v's held transfers no start has claimed, in the order refuse records them.
func (ts *transfers) heldFrom(v *visit) []*heldTransfer {
	var out []*heldTransfer
	for _, held := range ts.waiting {
		for _, h := range held {
			if h.from == v {
				out = append(out, h)
			}
		}
	}
	slices.SortFunc(out, func(a, b *heldTransfer) int { return strings.Compare(a.t.To, b.t.To) })
	return out
}

// unclaimed removes and returns v's held transfers no start has claimed, in the order refuse
// records them.
func (ts *transfers) unclaimed(v *visit) []*heldTransfer {
	var out []*heldTransfer
	for to, held := range ts.waiting {
		kept := held[:0]
		for _, h := range held {
			if h.from == v {
				out = append(out, h)
			} else {
				kept = append(kept, h)
			}
		}
		ts.waiting[to] = kept
	}
	slices.SortFunc(out, func(a, b *heldTransfer) int { return strings.Compare(a.t.To, b.t.To) })
	return out
}

// einoError is an error eino raised outside any agent's own events, kept to explain a transfer
// eino refused. eino sends its refusal ("transfer failed: agent 'X' not found when transferring
// from 'Y'") with no agent name, from the flow that ran the agent, to whatever reads that flow:
// the Runner's stream, which no callback sees, or the workflow agent around it, whose copy of
// events then carries it, or the AgentTool that ran it, whose call fails with it. call is the
// AgentTool call whose refusals it explains ("" for the run's own).
type einoError struct {
	err  error
	call string
}

// keepEinoError keeps err, raised by eino outside any agent, for the refusals of scope call, once:
// the stream and the copies of nested workflows carry the same error.
func (ts *transfers) keepEinoError(err error, call string) {
	for _, e := range ts.einoErrs {
		if e.call == call && sameError(e.err, err) {
			return
		}
	}
	ts.einoErrs = append(ts.einoErrs, einoError{err: err, call: call})
	ts.wakeRefusals()
}

// sameError reports whether a and b are one error value (never compared by their text).
func sameError(a, b error) bool {
	ta := reflect.TypeOf(a)
	return ta == reflect.TypeOf(b) && ta.Comparable() && a == b
}

// einoErrorFor returns the index of the kept error that explains a refusal of v, or -1.
func (ts *transfers) einoErrorFor(v *visit) int {
	return slices.IndexFunc(ts.einoErrs, func(e einoError) bool { return e.call == v.boundary })
}

// einoErrorMayCome reports whether eino's error for a transfer refused from v may still reach the
// recorder: inside an AgentTool call, until the call returns; outside any, while the Runner's
// stream is read (by Recorder.Run) and has not ended, or a workflow around v has not had its copy
// of events read to its end. Callers hold r.mu.
func (r *Recorder) einoErrorMayCome(v *visit) bool {
	if v.boundary != "" {
		call := r.calls.agentTool(v.boundary)
		return call != nil && !call.returned
	}
	if !r.run.streamDone {
		return true
	}
	for w := v.parent; w != nil; w = w.parent {
		if isWorkflow(w.kind) && !w.drained {
			return true
		}
	}
	return false
}

// agentToolReturned notes that eino ended AgentTool call callID (when it is one), failed with err:
// an AgentTool whose callee refused a transfer fails with eino's refusal. Callers hold r.mu.
func (r *Recorder) agentToolReturned(callID string, err error) {
	if !r.calls.returned(callID) {
		return
	}
	if err != nil && !isInterrupt(err) {
		r.transfers.keepEinoError(err, callID)
	}
	r.transfers.wakeRefusals()
}

// unattributedError keeps an error eino raised outside any agent, from the Runner's stream: a
// transfer it refused, which the agent that transferred records when its events end, or a panic in
// eino's own goroutine, recorded when the run ends.
func (r *Recorder) unattributedError(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.transfers.keepEinoError(err, "")
}

// wakeRefusals wakes the refusals waiting for eino's error: one came, or a source of them ended.
func (ts *transfers) wakeRefusals() {
	close(ts.errsChanged)
	ts.errsChanged = make(chan struct{})
}

// failUnexplained records the errors eino raised outside any agent that explained no refusal (a
// panic in eino's own goroutine, say) as the run's failure, blamed on whoever acted last. An
// AgentTool call's error is left out: its caller's own error event records it. Callers hold r.mu.
func (r *Recorder) failUnexplained() {
	for _, e := range r.transfers.einoErrs {
		if e.call == "" {
			r.fail(r.out.lastAgent, r.out.lastPath, e.err.Error())
		}
	}
	r.transfers.einoErrs = nil
}
