package web

import (
	"slices"
	"strings"

	"github.com/baton-dev/baton/traces"
)

// RowFilter is the timeline's filters, as the run page sets them: a row passes when it is the
// agent's (any agent when ""), of one of Groups (none: every group, messages folded into their
// call's row left out), failed when Failed, and its Search text holds Text (lower-cased and
// trimmed before matching). static/rowfilter.js's matches applies the same rules in the page.
type RowFilter struct {
	Agent  string
	Groups []string
	Failed bool
	Text   string
}

// Active reports whether f leaves out any row but folded messages.
func (f RowFilter) Active() bool {
	return f.Agent != "" || len(f.Groups) > 0 || f.Failed || strings.TrimSpace(f.Text) != ""
}

// passes reports whether the row of event i of ev passes f, whose Text is lower-cased and
// trimmed; t is the events' tree. It builds no row.
func (x *timelineIndex) passes(ev []traces.Event, f RowFilter, i int, t *treeState) bool {
	e := &ev[i]
	return f.admits(e.Agent, KindGroup(e.Kind), x.echoOf[e.Seq] > 0, f.Failed && rowFailed(e, t)) &&
		(f.Text == "" || strings.Contains(x.searchOf(ev, i), f.Text))
}

// admits reports whether a row passes f but for f's text: the row of an event of agent, of kind
// group group, that echoes a call when echo, failed when failed (which needs to be right only
// when f.Failed).
func (f RowFilter) admits(agent, group string, echo, failed bool) bool {
	switch {
	case f.Agent != "" && agent != f.Agent:
		return false
	case len(f.Groups) > 0 && !slices.Contains(f.Groups, group), len(f.Groups) == 0 && echo:
		return false
	}
	return !f.Failed || failed
}

// RowPage is one page of the timeline's rows that pass a filter, for a page that holds only
// some of them.
type RowPage struct {
	Rows []Row // oldest first
	// Reached is how far the scan went: rows with seq in (after, Reached] (forward) or
	// [Reached, before) (backward) that pass the filter are all in Rows. It is the bound itself
	// when the scan covered the whole range.
	Reached int64
}

// SearchTurn is how many events' search texts a guard of a ViewState has IndexSearch make at a
// time: some milliseconds' work, after which it lets others in.
const SearchTurn = 1024

// IndexSearch makes, and keeps, the search texts of up to n more events, and reports whether
// every event's is made. CountRows and FindRows with a text make those still missing: a caller
// that shares the state (the server, among a run's live viewers) calls IndexSearch in turns
// first, letting go of the state between them, so that a run's first search never holds it for
// a pass over the run.
func (v *ViewState) IndexSearch(n int) bool {
	ev, x := v.a.tr.Events, v.a.timeline
	for end := min(len(ev), len(x.searches)+n); len(x.searches) < end; {
		x.searches = append(x.searches, x.searchOf(ev, len(x.searches)))
	}
	return len(x.searches) == len(ev)
}

// CountRows returns how many rows of the run pass f, and how many rows there are. With a text
// it makes the search texts IndexSearch has not (once: they are kept).
func (v *ViewState) CountRows(f RowFilter) (matches, rows int) {
	ev := v.a.tr.Events
	if !f.Active() {
		return len(ev) - len(v.a.timeline.echoOf), len(ev) // every row but the folded messages
	}
	if f.Text = strings.ToLower(strings.TrimSpace(f.Text)); f.Text != "" {
		v.IndexSearch(len(ev))
	}
	for i := range ev {
		if v.a.timeline.passes(ev, f, i, v.a.tree) {
			matches++
		}
	}
	return matches, len(ev)
}

// reached is where a window's walk over the events stopped, at index i (at end when it ran off
// its range): the range's bound then, else the seq (seqOf an index) of the last event it looked at.
func reached(i, end int, forward bool, after, before int64, seqOf func(int) int64) int64 {
	switch {
	case i == end && forward:
		return before
	case i == end:
		return after
	case forward:
		return seqOf(i - 1)
	}
	return seqOf(i + 1)
}

// FindRows returns at most limit rows (1 or more) that pass f among the events with seq in
// (after, before), before 0 meaning to the newest: the first ones with forward, else the last
// ones. It reads the events it passes over: a filter that few rows pass costs a scan of the
// range (with a text, as CountRows says).
func (v *ViewState) FindRows(f RowFilter, after, before int64, limit int, forward bool) RowPage {
	a := v.a
	ev := a.tr.Events
	lo, hi := firstAfter(ev, after), len(ev)
	if before > 0 {
		hi = firstAfter(ev, before-1)
	}
	var p RowPage
	limit = max(limit, 1)
	if f.Text = strings.ToLower(strings.TrimSpace(f.Text)); f.Text != "" {
		v.IndexSearch(len(ev))
	}
	step, i, end := 1, lo, hi
	if !forward {
		step, i, end = -1, hi-1, lo-1
	}
	for ; i != end && len(p.Rows) < limit; i += step {
		if a.timeline.passes(ev, f, i, a.tree) {
			p.Rows = append(p.Rows, a.timeline.row(ev, i, a.tree))
		}
	}
	p.Reached = reached(i, end, forward, after, before, func(j int) int64 { return ev[j].Seq })
	if !forward {
		slices.Reverse(p.Rows)
	}
	return p
}

// Page returns the run page's model as of the newest event, View's, with only the timeline rows
// of the newest limit events (all when limit <= 0): a page fetches earlier ones on demand
// (FindRows).
func (v *ViewState) Page(limit int) View {
	return v.a.view(limit, true)
}

// PageDeferred is Page without the session panel's histories (what each agent was fed, by
// origin) and the sequence view's lanes, bars and arrows (its Head only), for a page that
// fetches them (Histories, Sequence) when its Session or Sequence tab is first shown: the
// histories classify every message of the run, which a page of a million events must not wait
// for, and the sequence view is some 40 MB of it made to be dropped.
func (v *ViewState) PageDeferred(limit int) View {
	return v.a.view(limit, false)
}

// Histories returns the session panel's histories as of the newest event, as Page has them.
func (v *ViewState) Histories() []History {
	return v.a.session.historyList(v.a.tr, v.a.tree.roster)
}
