package web

import (
	"strings"
	"time"

	"github.com/baton-dev/baton/traces"
)

// Row is one line of the timeline.
type Row struct {
	Seq     int64
	Time    time.Time
	Clock   string // "14:02:03.120": the time of day in UTC, as the timeline shows it
	Stamp   string // "2025-06-01 14:02:03.120 UTC": the whole time, for a tooltip
	Agent   string // "" for events no agent owns (run marks, unattributed errors)
	Colour  int    // the agent's colour index, -1 when Agent is ""
	Kind    traces.Kind
	Group   string // the kind's family for filtering: "model" for model.started and model.finished
	Summary string // one line, at most summaryLen runes
	Order   int    // a transfer's order number, 0 for other kinds
	Failed  bool   // an error, a failed model or tool call, or a transfer that failed
	// Search is the lower-cased text a search looks in: the row's words and the event's whole
	// content; an input carries only the messages it adds to the agent's previous input.
	Search string
	// EchoOf is, for a message event that repeats a model or tool call's reply, that call's seq:
	// the timeline folds the message into the call's row.
	EchoOf int64
	// CallbacksOnly: the event happened inside an AgentTool call whose caller's event stream
	// did not carry it; the recorder saw it through callbacks only.
	CallbacksOnly bool
}

// row returns the timeline row of event i of ev, the events x took in; t is their tree, for the
// agent's colour and a transfer's order and failure.
func (x *timelineIndex) row(ev []traces.Event, i int, t *treeState) Row {
	e := &ev[i]
	r := Row{
		Seq: e.Seq, Time: e.Time, Clock: clock(e.Time), Stamp: stamp(e.Time), Agent: e.Agent,
		Colour: t.roster.colour(e.Agent), Kind: e.Kind, Group: KindGroup(e.Kind),
		Summary: shorten(oneLine(Summary(*e)), summaryLen), EchoOf: x.echoOf[e.Seq],
		CallbacksOnly: x.callbacksOnly[e.Seq],
	}
	if i < len(x.searches) {
		r.Search = x.searches[i]
	} else {
		r.Search = x.searchText(e, r.Summary)
	}
	if e.Kind == traces.KindTransfer {
		if tr := t.transferAt(e.Seq); tr != nil {
			r.Order = tr.order
		}
	}
	r.Failed = rowFailed(e, t)
	return r
}

// rowFailed reports whether e's row shows a failure: an error, a failed model or tool call, or a
// transfer that failed (by t, the tree).
func rowFailed(e *traces.Event, t *treeState) bool {
	if e.Kind == traces.KindTransfer {
		if tr := t.transferAt(e.Seq); tr != nil && tr.failed {
			return true
		}
	}
	return e.Kind == traces.KindError || e.Model != nil && e.Model.Error != "" || e.Tool != nil && e.Tool.Error != ""
}

// KindGroup returns the family of a kind: the part before the dot, with interrupted and resumed
// grouped as "interrupt".
func KindGroup(k traces.Kind) string {
	switch k {
	case traces.KindInterrupted, traces.KindResumed:
		return "interrupt"
	case traces.KindPaused, traces.KindContinued:
		return "pause"
	}
	s := string(k)
	if i := strings.IndexByte(s, '.'); i >= 0 {
		return s[:i]
	}
	return s
}

// KindGroups returns the kind families in the order the timeline's kind filter offers them.
func KindGroups() []string {
	return []string{"run", "agent", "model", "tool", "message", "transfer", "agenttool",
		"session", "interrupt", "exit", "breakloop", "error", "pause"}
}
