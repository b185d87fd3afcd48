package e2e_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestImportFromThePage: on the index page, a user picks a trace file; its run joins the list
// without a reload. A refused file shows the importer's own message and adds no run.
func TestImportFromThePage(t *testing.T) {
	t.Parallel()
	b := startBaton(t)
	good, err := filepath.Abs("../traces/testdata/v2/supervisor.trace.json")
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(t.TempDir(), "bad.trace.json")
	badData := []byte(`{"format":"baton.trace","version":2,"run":{"id":"r-1","flow":"x","status":"completed"},"events":[{"seq":2}]}`)
	if err := os.WriteFile(bad, badData, 0o600); err != nil {
		t.Fatal(err)
	}
	// What the importer says of the bad file, asked directly: nothing is stored from it.
	res, err := http.Post(b.base+"/api/traces", "application/json", bytes.NewReader(badData))
	if err != nil {
		t.Fatal(err)
	}
	var refused struct{ Error string }
	data, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusBadRequest || json.Unmarshal(data, &refused) != nil || refused.Error == "" {
		t.Fatalf("POST /api/traces of the bad file: %d %s, want 400 with a message", res.StatusCode, data)
	}

	tb := newTab(t, nil)
	tb.open(t, b.base+"/")
	evalJS[bool](t, tb, `window.__sameDocument = true`)
	const row = `[data-testid=run-row][data-run-id="run-20260314-093000-7f3a"]`
	tb.do(t, "choose the good file", chromedp.SetUploadFiles("#import-file", []string{good}))
	tb.waitFor(t, "the imported run listed", `!!document.querySelector('`+row+`')`)
	tb.waitFor(t, "the note linking to the imported run", `document.querySelector('[data-testid=imported-run]')?.getAttribute('href') === '/runs/' + encodeURIComponent(document.querySelector('`+row+`').dataset.runId)`)

	tb.do(t, "choose the bad file", chromedp.SetUploadFiles("#import-file", []string{bad}))
	tb.waitFor(t, "the importer's message", `!document.querySelector('[data-testid=import-error]').hidden`)
	if msg := evalJS[string](t, tb, `document.querySelector('[data-testid=import-error]').textContent`); !strings.Contains(msg, refused.Error) {
		t.Errorf("the page says %q, want the importer's %q", msg, refused.Error)
	}
	if n := evalJS[int](t, tb, `document.querySelectorAll('[data-testid=run-row]').length`); n != 1 {
		t.Errorf("%d runs listed after a refused file, want the 1 imported", n)
	}
	if !evalJS[bool](t, tb, `window.__sameDocument === true`) {
		t.Errorf("the page reloaded")
	}
}
