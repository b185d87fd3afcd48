package e2e_test

import (
	"strings"
	"testing"

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
