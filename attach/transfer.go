package attach

import (
	"context"
	"fmt"
	"maps"
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
	// ready is closed once what the source records before its transfer is recorded: its own work,
	// or, for a transfer out of a team, the whole team.
	ready <-chan struct{}
}

// holdTransfer holds a transfer from v until its outcome is known and wakes agent starts waiting
// for it; out says the wrapper of a team v holds made it, after the team. Callers hold r.mu.
func (r *Recorder) holdTransfer(v *visit, t traces.Transfer, out bool) {
	h := &heldTransfer{t: t, from: v, ready: v.settled}
	if v.holds && !out {
		h.ready = v.workDone
	}
	r.transfers[t.To] = append(r.transfers[t.To], h)
	v.held++
	r.held++
	r.tree.transfer(t.From, t.To)
	r.putAgents()
	close(r.transferCh)
	r.transferCh = make(chan struct{})
}

// recordTransfer records h with its outcome: made, or refused with errMsg (also the run's
// failure). Callers hold r.mu.
func (r *Recorder) recordTransfer(h *heldTransfer, errMsg string) {
	t := h.t
	if errMsg != "" {
		t.Outcome, t.Error = traces.TransferFailed, errMsg
	}
	r.emit(traces.Event{Kind: traces.KindTransfer, Agent: t.From, RunPath: h.from.path, Transfer: &t})
	if errMsg != "" {
		r.fail(h.from.agent, h.from.path, errMsg)
	}
	h.from.held--
	r.held--
	r.finishVisit(h.from)
}

// awaitTransfer blocks until a transfer to agent is held, claims it, waits until it is ready and
// records it, made. It returns false when none came within causeWait.
func (r *Recorder) awaitTransfer(ctx context.Context, agent string) bool {
	timeout := time.NewTimer(causeWait)
	defer timeout.Stop()
	for {
		r.mu.Lock()
		if held := r.transfers[agent]; len(held) > 0 {
			h := held[0]
			r.transfers[agent] = held[1:]
			r.mu.Unlock()
			awaitClosed(h.ready)
			r.mu.Lock()
			r.recordTransfer(h, "")
			r.mu.Unlock()
			return true
		}
		wake := r.transferCh
		r.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return false
		case <-timeout.C:
			return false
		}
	}
}

// refuseTransfers records the transfers of v that no agent start claimed, now that v's events
// have ended: eino refused them. With the Runner's stream at hand its error says why; else the
// recorder says what it saw.
func (r *Recorder) refuseTransfers(v *visit) {
	r.mu.Lock()
	waitStream := !r.streamDone && slices.ContainsFunc(slices.Concat(slices.Collect(maps.Values(r.transfers))...),
		func(h *heldTransfer) bool { return h.from == v })
	r.mu.Unlock()
	if waitStream {
		// eino sends its refusal on the stream just before it ends v's copy of events.
		awaitClosed(r.streamErrCh)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.refuse(v)
}

// refuse records v's unclaimed transfers as refused. Callers hold r.mu.
func (r *Recorder) refuse(v *visit) {
	for _, h := range r.unclaimed(v) {
		msg := refusedWhy(h.t)
		if len(r.streamErrs) > 0 {
			msg = r.streamErrs[0]
			r.streamErrs = r.streamErrs[1:]
		}
		r.recordTransfer(h, msg)
	}
}

// refusedWhy says why t failed, as far as the recorder saw.
func refusedWhy(t traces.Transfer) string {
	return fmt.Sprintf("transfer to %q failed: the agent never started (eino found no agent of that name reachable from %q)", t.To, t.From)
}

// heldFrom returns v's held transfers no start has claimed, in the order refuse records them.
// Callers hold r.mu.
func (r *Recorder) heldFrom(v *visit) []*heldTransfer {
	var out []*heldTransfer
	for _, held := range r.transfers {
		for _, h := range held {
			if h.from == v {
				out = append(out, h)
			}
		}
	}
	slices.SortFunc(out, func(a, b *heldTransfer) int { return strings.Compare(a.t.To, b.t.To) })
	return out
}

// unclaimed removes and returns v's held transfers no start has claimed. Callers hold r.mu.
func (r *Recorder) unclaimed(v *visit) []*heldTransfer {
	var out []*heldTransfer
	for to, held := range r.transfers {
		kept := held[:0]
		for _, h := range held {
			if h.from == v {
				out = append(out, h)
			} else {
				kept = append(kept, h)
			}
		}
		r.transfers[to] = kept
	}
	slices.SortFunc(out, func(a, b *heldTransfer) int { return strings.Compare(a.t.To, b.t.To) })
	return out
}

// unattributedError keeps an error eino raised outside any agent, from the Runner's stream: a
// transfer it refused, which the agent that transferred records when its events end, or a panic in
// eino's own goroutine, recorded when the run ends.
func (r *Recorder) unattributedError(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.streamErrs = append(r.streamErrs, err.Error())
	r.streamErrSeen()
}

// streamErrSeen wakes refuseTransfers: an error came from the stream, or the stream ended.
// Callers hold r.mu.
func (r *Recorder) streamErrSeen() {
	select {
	case <-r.streamErrCh:
	default:
		close(r.streamErrCh)
	}
}
