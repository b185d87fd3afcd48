package e2e_test

import (
	"net/http"
	"testing"
	"time"
)

// TestIndexListFiltersSearchesAndDeletes: on the index page, a user narrows the list of runs by
// flow and by text in the runs' messages, then deletes a run with its button, clicked twice (the
// first asks); the row goes without a reload, and the run is gone from the API.
func TestIndexListFiltersSearchesAndDeletes(t *testing.T) {
	t.Parallel()
	b := startStoredBaton(t)
	super := b.startRun(t, "supervisor", 0)
	transfer := b.startRun(t, "transfer", 0)
	b.waitRunEnded(t, super, 20*time.Second)
	b.waitRunEnded(t, transfer, 20*time.Second)
	tb := newTab(t, nil)
	tb.open(t, b.base+"/")
	rowOf := func(id string) string { return `[data-testid=run-row]` + attrSel("data-run-id", id) }
	tb.waitFor(t, "both runs listed", `!!document.querySelector('`+rowOf(super)+`') && !!document.querySelector('`+rowOf(transfer)+`')`)

	evalJS[bool](t, tb, `(document.querySelector('[data-testid=filter-flow]').value = 'transfer', true)`)
	tb.click(t, `[data-testid=run-filters] button[type=submit]`)
	tb.waitFor(t, "only the transfer run listed", `location.search.includes('flow=transfer') &&
	  document.querySelectorAll('[data-testid=run-row]').length === 1 && !!document.querySelector('`+rowOf(transfer)+`')`)

	// research_agent's answer, a message of the supervisor run only, says it.
	evalJS[bool](t, tb, `(document.querySelector('[data-testid=filter-flow]').value = '',
	  document.querySelector('[data-testid=filter-text]').value = 'trillion', true)`)
	tb.click(t, `[data-testid=run-filters] button[type=submit]`)
	tb.waitFor(t, "only the supervisor run found", `location.search.includes('q=trillion') &&
	  document.querySelectorAll('[data-testid=run-row]').length === 1 && !!document.querySelector('`+rowOf(super)+`')`)

	tb.open(t, b.base+"/")
	evalJS[bool](t, tb, `window.__sameDocument = true`)
	// Deleting cannot be undone: the first click asks, and deletes nothing.
	tb.click(t, rowOf(super)+` [data-testid=delete-run]`)
	tb.waitFor(t, "the delete button asking", `document.querySelector('`+rowOf(super)+` [data-testid=delete-run]').textContent === 'Delete for good?'`)
	if !evalJS[bool](t, tb, `!!document.querySelector('`+rowOf(super)+`')`) {
		t.Fatal("one click deleted the run")
	}
	tb.click(t, rowOf(super)+` [data-testid=delete-run]`)
	tb.waitFor(t, "the deleted run's row to go", `!document.querySelector('`+rowOf(super)+`') && !!document.querySelector('`+rowOf(transfer)+`')`)
	if !evalJS[bool](t, tb, `window.__sameDocument === true`) {
		t.Errorf("the page reloaded to drop the row")
	}
	res, err := http.Get(b.base + "/api/runs/" + super + "/trace")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNotFound {
		t.Errorf("the deleted run's trace: %d, want 404", res.StatusCode)
	}
}
