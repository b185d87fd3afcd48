package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

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

const summaryLen = 160

// NewTimeline returns the timeline rows of the events of tr with Seq > after, in order.
func NewTimeline(tr traces.Trace, after int64) []Row {
	return newTimeline(analyse(tr), after)
}

func newTimeline(a *analysis, after int64) []Row {
	ev := a.tr.Events
	first := firstAfter(ev, after)
	rows := make([]Row, 0, len(ev)-first)
	for i := first; i < len(ev); i++ {
		rows = append(rows, a.timeline.row(ev, i, a.tree))
	}
	return rows
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
	if tr := t.transferAt[e.Seq]; tr != nil && e.Kind == traces.KindTransfer {
		r.Order = tr.order
	}
	r.Failed = rowFailed(e, t)
	return r
}

// rowFailed reports whether e's row shows a failure: an error, a failed model or tool call, or a
// transfer that failed (by t, the tree).
func rowFailed(e *traces.Event, t *treeState) bool {
	if tr := t.transferAt[e.Seq]; tr != nil && e.Kind == traces.KindTransfer && tr.failed {
		return true
	}
	return e.Kind == traces.KindError || e.Model != nil && e.Model.Error != "" || e.Tool != nil && e.Tool.Error != ""
}

// KindGroup returns the family of a kind: the part before the dot, with interrupted and resumed
// grouped as "interrupt".
func KindGroup(k traces.Kind) string {
	switch k {
	case traces.KindInterrupted, traces.KindResumed:
		return "interrupt"
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
		"session", "interrupt", "exit", "breakloop", "error"}
}

// Summary describes an event in one line of plain text.
func Summary(e traces.Event) string {
	switch {
	case e.Run != nil:
		return runSummary(e)
	case e.AgentRun != nil:
		return agentSummary(e)
	case e.Model != nil:
		return modelSummary(e)
	case e.Tool != nil:
		return toolSummary(e)
	case e.Message != nil:
		return messageSummary(*e.Message)
	case e.Transfer != nil:
		t := e.Transfer
		return fmt.Sprintf("%s → %s (%s)", t.From, t.To, t.Mode)
	case e.AgentTool != nil:
		c := e.AgentTool
		if e.Kind == traces.KindAgentToolExit {
			return fmt.Sprintf("%s → %s: %s", c.Callee, c.Caller, quote(c.Result))
		}
		return fmt.Sprintf("%s → %s: %s", c.Caller, c.Callee, quote(c.Request))
	case e.Session != nil:
		return fmt.Sprintf("%s = %s", e.Session.Key, compactJSON(e.Session.Value))
	case e.Interrupt != nil:
		return firstNonEmpty(e.Interrupt.Info, e.Interrupt.Address, e.Interrupt.ID)
	case e.Exit != nil:
		return "exit: " + quote(e.Exit.FinalResult)
	case e.BreakLoop != nil:
		return fmt.Sprintf("%s broke its loop after %s", e.BreakLoop.From, plural(e.BreakLoop.Iterations, "iteration"))
	case e.Error != nil:
		return e.Error.Message
	case e.Lost != nil:
		return plural(int(e.Lost.Count), "event") + " lost: the app could not send them to Baton"
	}
	return string(e.Kind)
}

func runSummary(e traces.Event) string {
	r := e.Run
	if e.Kind == traces.KindRunStarted {
		return fmt.Sprintf("flow %s: %s", firstNonEmpty(r.Flow, "?"), quote(r.Input))
	}
	if r.Error != "" {
		return fmt.Sprintf("%s: %s", r.Status, r.Error)
	}
	return string(r.Status)
}

func agentSummary(e traces.Event) string {
	r := e.AgentRun
	if e.Kind == traces.KindAgentFinished {
		return "finished"
	}
	how := startedHow(r)
	if len(r.Input) > 0 {
		how += ", fed " + plural(len(r.Input), "message")
	}
	return how
}

// startedHow says how an agent took control: "started via transfer", "resumed via run", or, for an
// agent eino passes through on its way back to the interrupt a run resumes (via resume), that.
func startedHow(r *traces.AgentRun) string {
	if r.Via == viaResume {
		return "resumed on the way back to the interrupt"
	}
	how := "started"
	if r.Resumed {
		how = "resumed"
	}
	if r.Via != "" {
		how += " via " + r.Via
	}
	return how
}

// viaResume is the via of an agent eino re-enters on the way back to the interrupt a run
// resumes: not a transfer, nor a new visit's own start.
const viaResume = "resume"

func modelSummary(e traces.Event) string {
	m := e.Model
	if e.Kind == traces.KindModelStarted {
		return fmt.Sprintf("call with %s, %s", plural(len(m.Input), "message"), plural(len(m.Tools), "tool"))
	}
	var parts []string
	switch {
	case m.Error != "":
		parts = append(parts, "failed: "+m.Error)
	case m.Output != nil:
		parts = append(parts, messageSummary(*m.Output))
	}
	if m.Usage != nil {
		parts = append(parts, fmt.Sprintf("%d tok", m.Usage.TotalTokens))
	}
	if m.DurationMS > 0 {
		parts = append(parts, fmt.Sprintf("%.0f ms", m.DurationMS))
	}
	return strings.Join(parts, " · ")
}

func toolSummary(e traces.Event) string {
	t := e.Tool
	if e.Kind == traces.KindToolStarted {
		return fmt.Sprintf("%s(%s)", t.Name, compactJSON(json.RawMessage(t.Arguments)))
	}
	if t.Error != "" {
		return fmt.Sprintf("%s failed: %s", t.Name, t.Error)
	}
	return fmt.Sprintf("%s → %s", t.Name, quote(t.Result))
}

func messageSummary(m traces.Message) string {
	var parts []string
	if m.Content != "" {
		parts = append(parts, quote(m.Content))
	}
	for _, c := range m.ToolCalls {
		parts = append(parts, fmt.Sprintf("calls %s(%s)", c.Name, compactJSON(json.RawMessage(c.Arguments))))
	}
	who := firstNonEmpty(m.Role, "message")
	if m.Role == "tool" && m.ToolName != "" {
		who = "tool " + m.ToolName
	}
	if len(parts) == 0 {
		return who + ": (empty)"
	}
	return who + ": " + strings.Join(parts, ", ")
}

// quote puts s in double quotes, cut short for a one-line summary.
func quote(s string) string { return `"` + shorten(oneLine(s), summaryLen) + `"` }

// oneLine folds runs of whitespace, newlines included, into single spaces. Only the head of a
// long text is kept: a summary never shows more.
func oneLine(s string) string {
	if len(s) > 8*summaryLen {
		cut := 8 * summaryLen
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + " …"
	}
	if isOneLine(s) {
		return s // most summaries: nothing to fold, nothing to allocate
	}
	return strings.Join(strings.Fields(s), " ")
}

// isOneLine reports whether s is ASCII whose only whitespace is single spaces between words:
// what oneLine would return unchanged.
func isOneLine(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= utf8.RuneSelf:
			return false // a non-ASCII space is possible: let strings.Fields decide
		case c == ' ' && (i == 0 || i == len(s)-1 || s[i-1] == ' '):
			return false
		case c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r':
			return false
		}
	}
	return true
}

// compactJSON returns raw without insignificant whitespace, or raw as one line of text when it
// is not JSON.
// compactJSON shows a JSON value on one line, with markup as written rather than as \u003c
// escapes: templ escapes what is shown.
func compactJSON(raw json.RawMessage) string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return shorten(oneLine(string(raw)), summaryLen)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
	return shorten(strings.TrimSpace(buf.String()), summaryLen)
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// clock and stamp write an event's time in UTC, the one zone everyone reading a shared trace
// agrees on: the time of day to the millisecond, and the whole time with its zone.
func clock(t time.Time) string { return t.UTC().Format("15:04:05.000") }
func stamp(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05.000 UTC") }
