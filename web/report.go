package web

import (
	"fmt"

	"github.com/baton-dev/baton/traces"
)

// Report is what the self-contained HTML report of a trace draws: the run page's view after the
// last event, and the inspector of every event and every agent, so that the file needs no server.
type Report struct {
	View        View
	Inspections []Inspection
	Agents      []AgentSummary
}

// ReportMessages is how many of the messages fed to an agent or a model a report's inspection
// shows: the latest.
const ReportMessages = 20

// ReportRunPath is how many of the latest steps of an event's run path a report shows.
const ReportRunPath = 8

// NewReport returns the report of tr, analysed once for all its inspections.
func NewReport(tr traces.Trace) Report {
	a := analyse(tr)
	r := Report{View: a.view(0), Inspections: make([]Inspection, len(tr.Events))}
	for i := range a.tr.Events {
		in := a.inspection(i)
		// A fed history grows with the run: whole in every inspection, a long run's report
		// would grow with the square of its events. The embedded trace keeps every message.
		if n := len(in.Messages); n > ReportMessages {
			in.Messages = in.Messages[n-ReportMessages:]
			in.MessagesTitle += fmt.Sprintf(": the last %d here; the run in Baton shows all", ReportMessages)
		}
		// eino's run path is a history too: it grows with every transfer.
		if n := len(in.RunPath); n > ReportRunPath {
			in.RunPath = append([]string{"…"}, in.RunPath[n-ReportRunPath:]...)
		}
		r.Inspections[i] = in
	}
	for _, ref := range r.View.Agents {
		// One pass per agent: a run has a handful, and the summary has its own single pass.
		if s, err := NewAgentSummary(tr, ref.Name); err == nil {
			r.Agents = append(r.Agents, s)
		}
	}
	return r
}
