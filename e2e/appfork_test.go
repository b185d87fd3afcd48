package e2e_test

import (
	"testing"

	"github.com/baton-dev/baton/internal/webtest"
)

// TestForkAnAppRunFromTheInspector: on a run of an app (a flow this Baton does not run), a
// model call's fork form gives the command that makes the app's next run the fork, to copy,
// instead of starting a run.
func TestForkAnAppRunFromTheInspector(t *testing.T) {
	t.Parallel()
	b := startBaton(t)
	tr := webtest.Supervisor()
	tr.Run.Flow = "deskapp"
	id := importTrace(t, b, tr)
	tb := newTab(t, nil)
	tb.open(t, b.base+"/runs/"+id)
	tb.click(t, `#timeline-rows .row[data-kind="model.started"]`)
	tb.waitFor(t, "the app's fork form in the inspector", `document.querySelector('[data-testid=fork-form]')?.dataset.app === '1'`)
	at := evalJS[string](t, tb, `document.querySelector('[data-testid=fork-form]').dataset.at`)
	evalJS[bool](t, tb, `(document.querySelector('#fork-to').value = 'math_agent', true)`)
	tb.click(t, `[data-testid=fork-button]`)
	want := "BATON_FORK='" + id + "@" + at + "?transfer_to=math_agent' go run ."
	tb.waitFor(t, "the command", `(() => { const c = document.querySelector('[data-testid=fork-command]');
	  return c && !c.hidden && c.textContent === `+jsString(want)+`; })()`)
	if path := evalJS[string](t, tb, `location.pathname`); path != "/runs/"+id {
		t.Errorf("the page went to %s; an app's fork starts no run here", path)
	}
}
