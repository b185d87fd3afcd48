package e2e_test

import (
	"strings"
	"testing"

	"github.com/baton-dev/baton/internal/webtest"
	"github.com/baton-dev/baton/server"
	"github.com/baton-dev/baton/traces"
)

// TestReplayButton clicks Replay on a finished run and lands on a new run that the recorded model
// replies answer, named as such in the header.
func TestReplayButton(t *testing.T) {
	t.Parallel()
	b := startBaton(t)
	tb := newTab(t, nil)
	id := b.startRun(t, "transfer", 0)
	tb.open(t, b.base+"/runs/"+id)
	tb.waitStatus(t, "completed")
	tb.click(t, "[data-testid=replay]")
	tb.waitFor(t, "the replay's page", `document.body.dataset.runId && document.body.dataset.runId !== `+jsString(id))
	tb.waitStatus(t, "completed")
	replay := evalJS[string](t, tb, `document.body.dataset.runId`)
	if got := evalJS[string](t, tb, `document.querySelector('[data-testid=run-model]').textContent`); got != "replay of "+id+" (scripted)" {
		t.Errorf("the replay's header names model %q", got)
	}
	recorded, replayed := b.trace(t, id), b.trace(t, replay)
	if replayed.Run.Status != traces.StatusCompleted || replayed.Run.Input != recorded.Run.Input {
		t.Errorf("replayed run = %+v", replayed.Run)
	}
	if got, want := replies(replayed), replies(recorded); got != want {
		t.Errorf("replayed replies:\n%s\nwant:\n%s", got, want)
	}
}

// replies lists a trace's model replies, one a line.
func replies(tr traces.Trace) string {
	var b strings.Builder
	for _, e := range tr.Events {
		if e.Kind == traces.KindModelFinished && e.Model.Output != nil {
			b.WriteString(e.Agent + ": " + e.Model.Output.Content)
			for _, c := range e.Model.Output.ToolCalls {
				b.WriteString(" " + c.ID + " " + c.Name + c.Arguments)
			}
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// headerJS measures the run page's header and its error line: what a user sees of them.
const headerJS = `(() => {
  const h = document.querySelector('header.top'), e = document.querySelector('[data-testid=form-error]');
  const r = e.getBoundingClientRect();
  return {height: h.getBoundingClientRect().height, inHeader: h.contains(e), shown: e.checkVisibility(),
    text: e.textContent, below: r.top >= h.getBoundingClientRect().bottom, right: r.right,
    scrolls: document.documentElement.scrollWidth > document.documentElement.clientWidth};
})()`

type headerView struct {
	Height                          float64
	InHeader, Shown, Below, Scrolls bool
	Text                            string
	Right                           float64
}

// TestRunAgainAndReplayWhereTheyWork: an app's run offers neither Run again nor Replay, which
// this server cannot run. On a run of a served flow, Replay waits for the run to end; Run again,
// refused while the server runs all it may, says why and what to do on a line under the header,
// which keeps its shape; once the run has ended, Replay starts the replay.
func TestRunAgainAndReplayWhereTheyWork(t *testing.T) {
	t.Parallel()
	supervisor, gate := gated(t, "supervisor")
	b := startBatonWith(t, nil, func(c *server.Config) { c.MaxRunning = 1 }, supervisor)
	app := webtest.Supervisor()
	app.Run.Flow = "my-app"
	tb := newTab(t, nil)
	tb.open(t, b.base+"/runs/"+importTrace(t, b, app))
	if n := evalJS[int](t, tb, `document.querySelectorAll('[data-testid=run-again], [data-testid=replay]').length`); n != 0 {
		t.Errorf("an app's run offers %d of Run again and Replay, which this server cannot run", n)
	}

	id := b.startRun(t, "supervisor", 0)
	holdAt(t, gate, 1)
	tb.open(t, b.base+"/runs/"+id)
	if !evalJS[bool](t, tb, `document.querySelector('[data-testid=replay]').disabled`) {
		t.Errorf("Replay is enabled while the run goes on")
	}
	before := evalJS[headerView](t, tb, headerJS)
	tb.click(t, "[data-testid=run-again]")
	tb.waitVisible(t, "[data-testid=form-error]")
	after := evalJS[headerView](t, tb, headerJS)
	if !strings.HasPrefix(after.Text, "Run again: ") || !strings.Contains(after.Text, "try again when it has finished") {
		t.Errorf("the error line reads %q, want which control failed and what to do", after.Text)
	}
	if after.InHeader || !after.Below || after.Height != before.Height || after.Scrolls || after.Right > viewWidth {
		t.Errorf("the error shows as %+v (header before: %.0f px high); want it under the header, which keeps its height, and no sideways scroll", after, before.Height)
	}

	gate.Open()
	tb.waitStatus(t, "completed")
	tb.waitFor(t, "Replay to be enabled once the run has ended", `!document.querySelector('[data-testid=replay]').disabled`)
	tb.click(t, "[data-testid=replay]")
	tb.waitFor(t, "the replay's page", `document.body.dataset.runId && document.body.dataset.runId !== `+jsString(id))
	tb.waitStatus(t, "completed")
}
