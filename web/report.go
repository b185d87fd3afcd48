package web

import "github.com/baton-dev/baton/traces"

// Report is what the self-contained HTML report of a trace draws: the run page's view after the
// last event, and the inspector of every event and every agent, so that the file needs no server.
type Report struct {
	View        View
	Inspections []Inspection
	Agents      []AgentSummary
}

// NewReport returns the report of tr, analysed once for all its inspections.
func NewReport(tr traces.Trace) Report {
	a := analyse(tr)
	r := Report{View: a.view(), Inspections: make([]Inspection, len(tr.Events))}
	for i := range a.tr.Events {
		r.Inspections[i] = a.inspection(i)
	}
	for _, ref := range r.View.Agents {
		// One pass per agent: a run has a handful, and the summary has its own single pass.
		if s, err := NewAgentSummary(tr, ref.Name); err == nil {
			r.Agents = append(r.Agents, s)
		}
	}
	return r
}
