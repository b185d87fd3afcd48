package web

import (
	"github.com/baton-dev/baton/internal/prices"
	"github.com/baton-dev/baton/traces"
	"slices"
)

// Report is what the self-contained HTML report of a trace draws: the run page's view after the
// last event (its Sequence, the whole run's, is the report's sequence view), the inspector of
// every event and every agent, and the page's parts as of some of its events (Frames) for its
// scrubber, so that the file needs no server.
type Report struct {
	View        View
	Inspections []Inspection
	Agents      []AgentSummary
	Frames      []Update // Redraws as of each event, or of ReportFrames events spread over a longer run, without their Sequence
}

// ReportFrames is how many events of a run a report can show the tree, header and session as of:
// every event of a run up to this long, else this many spread evenly over it (the last one
// included); fewer for a tree of more than 256 agents (see reportFrameAgents). A step to an event between two shows the earlier, and says so.
const ReportFrames = 256

// reportFrameAgents bounds the agents drawn over all of a report's frames, each of which draws the
// whole tree: a tree of more than 256 agents gets fewer frames (16 at least), so that a report's
// work grows with its agents, not with agents times frames.
const reportFrameAgents = 256 * ReportFrames

// ReportMessages is how many of the messages fed to an agent or a model a report's inspection
// shows: the latest.
const ReportMessages = 20

// ReportRunPath is how many of the latest steps of an event's run path a report shows.
const ReportRunPath = 8

// NewReport returns the report of tr, analysed once for all its inspections.
func NewReport(tr traces.Trace, opts ...Option) Report {
	a := analyse(tr, pricingOf(tr.Run, opts))
	r := Report{View: a.view(0, true), Inspections: make([]Inspection, len(tr.Events))}
	for i := range a.tr.Events {
		// A fed history grows with the run: whole in every inspection, a long run's report
		// would grow with the square of its events. The embedded trace keeps every message.
		in := a.inspectionLast(i, ReportMessages)
		// eino's run path is a history too: it grows with every transfer.
		if n := len(in.RunPath); n > ReportRunPath {
			in.RunPath = append([]string{"…"}, in.RunPath[n-ReportRunPath:]...)
		}
		r.Inspections[i] = in
	}
	r.Frames = frames(tr, a.pricing)
	names := make([]string, len(r.View.Agents))
	for k, ref := range r.View.Agents {
		names[k] = ref.Name
	}
	r.Agents = agentSummaries(a, names) // each reads its own events: a tree may hold thousands
	return r
}

// frames returns the redraws of tr as of the events ReportFrames chooses, in one pass: each is
// what ViewAt(tr, seq).Redraw() returns, but for its Sequence. The report draws the whole run's
// sequence once: one whole per frame would triple a long run's report (25 MB instead of 8 at
// 10,000 events).
func frames(tr traces.Trace, pricing prices.Run) []Update {
	n := len(tr.Events)
	if n == 0 {
		return nil
	}
	k := min(n, ReportFrames, max(16, reportFrameAgents/max(1, len(tr.Agents))))
	run := tr.Run
	run.Status, run.EndedAt, run.Error = traces.StatusRunning, nil, "" // before its last event, as Prefix has it
	v := &ViewState{a: newAnalysis(run, tr.Agents, pricing)}
	out := make([]Update, 0, k)
	next := 1 // frame next is at index ceil(next·n/k)-1; the k-th, the last event, is the whole run's
	for i, e := range tr.Events[:n-1] {
		v.Add(e)
		if i == (next*n+k-1)/k-1 {
			out = append(out, frame(v))
			next++
		}
	}
	whole := NewViewState(tr.Run, tr.Agents)
	whole.Add(tr.Events...)
	// The frames before the end show where they stand, and the run as it ended.
	for i := range out {
		out[i].Stats.Away = whole.AwayAt(out[i].Seq)
	}
	return append(out, frame(whole))
}

// frame returns v's redraw for a report's frame: without the sequence, and with the latest
// ReportMessages of each history (whole in each of up to ReportFrames frames, a history that
// grows with the run would make the report grow with the square of its events).
func frame(v *ViewState) Update {
	u := v.Redraw()
	u.Sequence = nil
	for k, h := range u.Session.Histories {
		if n := len(h.Messages); n > ReportMessages {
			u.Session.Histories[k].Messages = slices.Clone(h.Messages[n-ReportMessages:])
		}
	}
	return u
}
