package web

import (
	"fmt"
	"time"

	"github.com/baton-dev/baton/traces"
)

// Stats is the run page's header.
type Stats struct {
	RunID     string
	Flow      string
	Model     string // the model the run ran on, as its metadata names it
	Input     string
	Status    traces.Status // as of the trace's last event
	Error     string
	StartedAt time.Time
	// Ended is set when the run has finished. Elapsed runs from the run's first event to its
	// newest (its end once it has finished; the page keeps counting on the client before), by
	// the events' own times: an app's clock for an app's run. It is the run's active time: the
	// time it waited between an interrupt and its resume is left out. ClockFrom is the first
	// event's time moved on by that wait, so that now - ClockFrom is the active time while the
	// run goes on.
	Ended       bool
	ClockFrom   time.Time
	Elapsed     time.Duration
	ElapsedText string // "00:04.2"
	LastSeq     int64
	Events      int
	Agents      int
	Active      int
	ModelCalls  int
	ToolCalls   int
	Transfers   int
	Errors      int
	Tokens      int
	TokensText  string // Tokens for the header: 950, 1.2k, 34k
	Cost        string // what the reported tokens cost (prices.Rate.Text): "" when the model has no price
	Outcome     Outcome
	// Held is the breakpoint the run is held at, nil when it is not.
	Held *Held
	// Away is set when these are the stats of an earlier event than the run's newest, for a
	// page that shows the run as of that event: where it stands, and the run as it is.
	Away *Away
}

// Away is where a page that shows its run as of an earlier event stands: at event At of the
// run's Head events, the run itself, as of Head, having Status (Error, why it failed) and
// Outcome. The page's counts, tree and session are as of At; its status and outcome are the
// run's own, still in reach.
type Away struct {
	At, Head int64
	Status   traces.Status
	Error    string
	Outcome  Outcome
}

// newStats is the header: the run's state (r) with the agents and transfers of its tree (t), for
// tr's events.
func newStats(tr traces.Trace, r *runState, t *treeState) Stats {
	s := Stats{
		RunID: tr.Run.ID, Flow: r.flow, Model: tr.Run.Model, Input: r.input, Status: r.status, Error: r.runError(tr.Run.Error),
		StartedAt: tr.Run.StartedAt, Ended: r.status.Ended(), Events: len(tr.Events), LastSeq: r.lastSeq,
		Agents: len(t.roster.list), Active: t.active(), ModelCalls: r.models, ToolCalls: r.tools,
		Transfers: len(t.transfers), Errors: r.errors, Tokens: r.tokens,
	}
	if s.StartedAt.IsZero() {
		s.StartedAt = r.firstTime
	}
	// The run's time is its events': from its first (run.started) to its newest (run.finished
	// once it ended), stamped by whoever ran it. An app's run is registered and closed by the
	// server, whose clock and moments are not the app's.
	start := r.firstTime
	if start.IsZero() {
		start = s.StartedAt
	}
	s.ClockFrom = start.Add(r.idle)
	if end := r.lastTime; !end.IsZero() && end.After(s.ClockFrom) {
		s.Elapsed = end.Sub(s.ClockFrom)
	}
	s.ElapsedText = Clock(s.Elapsed)
	s.TokensText = compact(s.Tokens)
	s.Cost = r.cost.Text()
	s.Outcome = r.outcome(s.Error)
	if r.held != nil && !s.Ended {
		h := *r.held
		if i := eventIndex(tr, h.At); i >= 0 && tr.Events[i].Model != nil {
			h.Reply = tr.Events[i].Model.Output
		}
		s.Held = &h
	}
	return s
}

// Clock formats an elapsed time as mm:ss.d, or h:mm:ss.d from an hour on.
func Clock(d time.Duration) string {
	tenths := int64(d / (100 * time.Millisecond))
	h, m, sec, t := tenths/36000, tenths/600%60, tenths/10%60, tenths%10
	if h > 0 {
		return fmt.Sprintf("%d:%02d:%02d.%d", h, m, sec, t)
	}
	return fmt.Sprintf("%02d:%02d.%d", m, sec, t)
}

// Prefix returns tr as it was right after event seq: the events up to seq, and a run that is
// still running unless run.finished is among them. It shares no slice that the caller could
// append to.
func Prefix(tr traces.Trace, seq int64) traces.Trace {
	n := 0
	for n < len(tr.Events) && tr.Events[n].Seq <= seq {
		n++
	}
	out := tr
	out.Events = tr.Events[:n:n]
	if n < len(tr.Events) {
		out.Run.Status, out.Run.EndedAt, out.Run.Error = traces.StatusRunning, nil, ""
		for _, e := range out.Events {
			if e.Kind == traces.KindRunFinished && e.Run != nil {
				out.Run.Status, out.Run.Error = e.Run.Status, e.Run.Error
			}
		}
	}
	return out
}
