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
	search := ""
	if i < len(x.searches) {
		search = x.searches[i]
	}
	return rowOf(e, rowNotes{colour: t.roster.colour(e.Agent), order: transferOrder(e, t), failed: rowFailed(e, t),
		echoOf: x.echoOf[e.Seq], callbacksOnly: x.callbacksOnly[e.Seq], fresh: x.freshFrom[e.Seq], search: search})
}

// rowNotes is what the row of an event says that the event alone does not: what the run around
// it says (its tree, the calls it echoes, its input's new messages).
type rowNotes struct {
	colour        int
	order         int // a transfer's order number
	failed        bool
	echoOf        int64
	callbacksOnly bool
	fresh         int    // where its input's new messages begin (timelineIndex.freshFrom)
	search        string // its search text when made already, else ""
}

// rowOf returns the timeline row of e, whose run says n of it.
func rowOf(e *traces.Event, n rowNotes) Row {
	r := Row{
		Seq: e.Seq, Time: e.Time, Clock: clock(e.Time), Stamp: stamp(e.Time), Agent: e.Agent,
		Colour: n.colour, Kind: e.Kind, Group: KindGroup(e.Kind), Summary: rowSummary(e),
		Order: n.order, Failed: n.failed, EchoOf: n.echoOf, CallbacksOnly: n.callbacksOnly, Search: n.search,
	}
	if r.Search == "" {
		r.Search = searchText(e, r.Summary, n.fresh)
	}
	return r
}

// rowSummary is the one line e's row shows.
func rowSummary(e *traces.Event) string { return shorten(oneLine(Summary(*e)), summaryLen) }

// transferOrder is the order number of e's transfer by t, the tree: 0 when e is no transfer.
func transferOrder(e *traces.Event, t *treeState) int {
	if e.Kind == traces.KindTransfer {
		if tr := t.transferAt(e.Seq); tr != nil {
			return tr.order
		}
	}
	return 0
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
