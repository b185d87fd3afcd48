package e2e_test

import (
	"slices"
	"testing"

	"github.com/baton-dev/baton/agents"
)

// TestIndexGuides: the index starts with supervisor under "Start here", then the runs, then
// every other flow once, in groups by what they show, in agents.Groups' order (the test's own
// flows under "Other flows" last), each described
// in plain words before eino's terms. At 1440x900 and 800x900 nothing overflows the page or the
// runs' column, and at 800 px the runs list starts on the first screen.
func TestIndexGuides(t *testing.T) {
	t.Parallel()
	b := startBaton(t)
	for _, flow := range []string{"supervisor", "failing"} {
		b.waitRunEnded(t, b.startRun(t, flow, 0), waitTimeout)
	}
	tb := newTab(t, nil)
	type layout struct {
		PageW, ViewW, RunsTop, RowTop, ViewH float64
		RunsOver                             []string
		Start                                string
		Groups                               []string
		Flows                                []string
		PlainFirst                           bool
	}
	const measure = `(() => {
	  const runs = document.querySelector('section.runs'), box = runs.getBoundingClientRect();
	  const over = Array.from(runs.querySelectorAll('*')).filter(e => { const r = e.getBoundingClientRect();
	    return r.width > 0 && (r.right > box.right + 0.5 || r.left < box.left - 0.5); }).map(e => e.tagName + '.' + e.className);
	  // The test server adds flows of its own, listed under "Other flows".
	  const cards = Array.from(document.querySelectorAll('.flow-group:not([data-group="Other flows"]) .flow'));
	  return {
	    pageW: document.documentElement.scrollWidth, viewW: innerWidth, viewH: innerHeight,
	    runsTop: runs.getBoundingClientRect().top, rowTop: document.querySelector('[data-testid=run-row]').getBoundingClientRect().top,
	    runsOver: over.slice(0, 5),
	    start: document.querySelector('[data-testid=start-here] .flow').dataset.flow,
	    groups: Array.from(document.querySelectorAll('[data-testid=flow-group]')).map(g => g.dataset.group),
	    flows: cards.map(c => c.dataset.flow),
	    plainFirst: cards.every(c => { const p = c.querySelector('.plain'), d = c.querySelector('.description');
	      return p && d && (p.compareDocumentPosition(d) & Node.DOCUMENT_POSITION_FOLLOWING) && !d.open; }),
	  };
	})()`
	var want []string
	for _, g := range agents.Groups {
		want = append(want, g.Name)
	}
	want = append(want, "Other flows")
	for _, size := range [][2]int64{{1440, 900}, {800, 900}} {
		tb.view(t, size[0], size[1], "light")
		tb.open(t, b.base+"/")
		tb.waitFor(t, "two runs listed", `document.querySelectorAll('[data-testid=run-row]').length === 2`)
		at := itoa(int(size[0])) + " px"
		l := evalJS[layout](t, tb, measure)
		if l.PageW > l.ViewW {
			t.Errorf("at %s the page is %.0f px wide", at, l.PageW)
		}
		if len(l.RunsOver) > 0 {
			t.Errorf("at %s these overflow the runs' column: %v", at, l.RunsOver)
		}
		if l.RowTop > l.ViewH-40 {
			t.Errorf("at %s the first run row starts at %.0f px, under the first screen (%.0f)", at, l.RowTop, l.ViewH)
		}
		if l.Start != agents.StartHere {
			t.Errorf("at %s the flow to start with is %q", at, l.Start)
		}
		if !slices.Equal(l.Groups, want) {
			t.Errorf("at %s the groups are %v, want %v", at, l.Groups, want)
		}
		var all []string
		for _, f := range agents.Catalogue() {
			if f.Name != agents.StartHere {
				all = append(all, f.Name)
			}
		}
		got := slices.Clone(l.Flows)
		slices.Sort(got)
		if !slices.Equal(got, all) {
			t.Errorf("at %s the groups hold %v, want every flow but the first once: %v", at, l.Flows, all)
		}
		if !l.PlainFirst {
			t.Errorf("at %s a card does not say what it shows in plain words before eino's terms (folded)", at)
		}
	}
	tb.checkAxe(t, "the index at 800 px")
}
