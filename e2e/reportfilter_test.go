package e2e_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"testing"

	"github.com/chromedp/chromedp/kb"
)

// TestReportFilters: the report of a finished supervisor run, opened from file:// with the
// network off, filters its timeline as the run page does (static/rowfilter.js): an agent
// summary's "Show only" keeps that agent's rows and counts them, a search that matches nothing
// says so and quotes it, `Esc` clears the filters, and a link to a row the filters hide clears
// them so that the row shows.
func TestReportFilters(t *testing.T) {
	t.Parallel()
	b := startBaton(t)
	var created struct{ ID string }
	if err := json.Unmarshal(b.post(t, "/api/runs", map[string]any{"flow": "supervisor", "pace_ms": 0}, http.StatusCreated), &created); err != nil {
		t.Fatal(err)
	}
	tr := b.waitRunEnded(t, created.ID, waitTimeout)
	tb, requests := openOffline(t, "file://"+downloadReport(t, b, tr))
	waitReportReady(t, tb)

	tb.click(t, `[data-testid="node-research_agent"]`)
	tb.click(t, `[data-testid=agent-summary][data-agent=research_agent] [data-filter-agent]`)
	tb.waitFor(t, "the timeline filtered to research_agent", `document.getElementById('filter-agent').value === 'research_agent'`)
	fs := evalJS[filterState](t, tb, filterStateJS)
	checkFiltered(t, "after Show only", fs, tr.Events)
	count := strconv.Itoa(len(fs.Shown)) + " of " + strconv.Itoa(len(tr.Events)) + " events"
	if got := evalJS[string](t, tb, `document.getElementById('filter-count').textContent`); got != count {
		t.Errorf("filter count %q, want %q", got, count)
	}

	evalJS[bool](t, tb, `(() => { const f = document.getElementById('filter-text'); f.focus(); f.value = 'no-such-text';
	  f.dispatchEvent(new Event('input', {bubbles: true})); return true; })()`)
	tb.waitFor(t, "the no-match message quoting the search", `(() => { const e = document.getElementById('filter-empty');
	  return e.checkVisibility() && e.textContent === 'No event matches \u201cno-such-text\u201d with these filters.'
	    && !document.querySelector('[data-testid=timeline-row]:not([hidden])'); })()`)

	tb.press(t, kb.Escape) // out of the field
	tb.press(t, kb.Escape) // the filters cleared
	tb.waitFor(t, "every row but the folded messages, and no count", `(() => {
	  const rows = Array.from(document.querySelectorAll('[data-testid=timeline-row]'));
	  return rows.every(r => r.hidden === Boolean(r.dataset.echoOf)) && document.getElementById('filter-count').textContent === ''
	    && document.getElementById('filter-text').value === '' && document.getElementById('filter-agent').value === ''; })()`)

	// math_agent's first model call is fed supervisor's words, linked to the event they came from:
	// with the timeline filtered to math_agent, that link clears the filter.
	tb.click(t, `[data-testid=timeline-row][data-kind="model.started"][data-agent="math_agent"]`)
	tb.waitVisible(t, `#inspector [data-testid=fed-message][data-source] .seq-link`)
	source := evalJS[string](t, tb, `Array.from(document.querySelectorAll('#inspector [data-testid=fed-message][data-source]'))
	  .map(m => m.dataset.source).find(s => { const r = document.getElementById('ev-' + s); return r && r.dataset.agent !== 'math_agent'; }) || ''`)
	if source == "" {
		t.Fatal("math_agent's first model call links no event of another agent")
	}
	evalJS[bool](t, tb, `(() => { const a = document.getElementById('filter-agent'); a.value = 'math_agent';
	  a.dispatchEvent(new Event('change', {bubbles: true})); return true; })()`)
	tb.waitFor(t, "event "+source+" hidden by the filter", `document.getElementById('ev-`+source+`').hidden`)
	tb.click(t, `#inspector [data-testid=fed-message][data-source="`+source+`"] .seq-link`)
	tb.waitFor(t, "event "+source+" shown and inspected, the filter cleared", `!document.getElementById('ev-`+source+`').hidden
	  && document.getElementById('filter-agent').value === ''
	  && document.querySelector('#inspector [data-testid=inspection]')?.dataset.seq === `+jsString(source))
	if got := requests(); len(got) != 0 {
		t.Errorf("the report made requests: %q", got)
	}
}
