package e2e_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/baton-dev/baton/traces"
)

// TestNextRunsFromThePage: on the page of an app's run that opted in (its hold poll open), "also
// the app's next runs" sends the breakpoints with next_runs, and a reloaded page shows them kept.
func TestNextRunsFromThePage(t *testing.T) {
	t.Parallel()
	b := startBaton(t)
	var created struct{ ID, Secret string }
	if err := json.Unmarshal(b.post(t, "/api/ingest", map[string]any{
		"run":    map[string]string{"flow": "deskapp"},
		"agents": []traces.Agent{{Name: "desk", Kind: traces.AgentChatModel}},
	}, http.StatusCreated), &created); err != nil {
		t.Fatal(err)
	}
	// The app opts in: its hold poll stays open until the test ends.
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() {
		for ctx.Err() == nil {
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, b.base+"/api/ingest/"+created.ID+"/hold", strings.NewReader(`{"version":0}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Baton-Run-Secret", created.Secret)
			if res, err := http.DefaultClient.Do(req); err == nil {
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
			}
		}
	}()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		res, err := http.Get(b.base + "/runs/" + created.ID)
		if err != nil {
			t.Fatal(err)
		}
		page, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if strings.Contains(string(page), `data-testid="breakpoints-next-runs"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the app run's page never offered to keep its breakpoints for the next runs")
		}
	}
	tb := newTab(t, nil)
	tb.open(t, b.base+"/runs/"+created.ID)
	evalJS[bool](t, tb, `(document.querySelector('[data-testid=breakpoints]').value = 'transfer:billing', document.querySelector('[data-testid=breakpoints-next-runs]').checked = true, true)`)
	tb.click(t, "[data-testid=breakpoints-set]")
	tb.waitFor(t, "the breakpoints set", `document.querySelector('[data-testid=breakpoints-form]')?.dataset.set === 'transfer:billing'`)
	tb.open(t, b.base+"/runs/"+created.ID)
	tb.waitFor(t, "a reloaded page showing them kept for the next runs", `document.querySelector('[data-testid=breakpoints-next-runs]')?.checked === true`)
}
