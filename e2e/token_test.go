package e2e_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/baton-dev/baton/server"
)

// TestTokenStaysOnItsPort: browsers send a host's cookies to every port of it, so whatever a page
// of Baton's leaves in cookies, a server on another port of the host that the browser visits
// receives, and could replay to Baton. Here a Baton with a token is used as a person uses it,
// from the URL it prints: a run started from the index, followed live to its end, the list and
// the run reached again by their links, a filter form, a reload. Then the same tab visits a
// server on another port, which keeps every request the browser sent it: each, replayed to
// Baton, is refused 401, while the token itself passes.
func TestTokenStaysOnItsPort(t *testing.T) {
	t.Parallel()
	const token = "e2e-Token-0123456789abcdefghijKLMN"
	supervisor, gate := gated(t, "supervisor")
	b := startBatonWith(t, nil, func(c *server.Config) { c.Token = token }, supervisor)

	var mu sync.Mutex
	var captured []http.Header
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		captured = append(captured, r.Header.Clone())
		mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, "<!doctype html><title>another server</title><p>another server on this host</p>")
	}))
	defer other.Close()
	if !strings.HasPrefix(other.URL, "http://127.0.0.1:") || !strings.HasPrefix(b.base, "http://127.0.0.1:") || other.URL == b.base {
		t.Fatalf("want two ports of one host: %s and %s", other.URL, b.base)
	}

	tb := newTab(t, nil)
	tb.open(t, b.base+"/?token="+token)
	tb.click(t, attrSel("data-testid", "flow-supervisor")+" [data-testid=run-button]")
	tb.waitFor(t, "the run page after pressing Run", runPageLoaded)
	tb.waitStatus(t, "running") // held before its first reply: the rest comes by the page's socket
	id := evalJS[string](t, tb, `location.pathname.slice('/runs/'.length)`)
	gate.Open()
	tb.waitStatus(t, "completed")

	tb.click(t, "a.brand")
	tb.waitFor(t, "the index by the brand link", `document.readyState === 'complete' && document.body.dataset.page === 'index'`)
	tb.click(t, `[data-testid=run-row] a[href^="/runs/`+id+`"]`)
	tb.waitFor(t, "the run by its link in the list", `document.readyState === 'complete' && document.body.dataset.page === 'run' && location.pathname === '/runs/`+id+`'`)
	tb.waitStatus(t, "completed")
	tb.do(t, "reload", chromedp.Reload())
	tb.waitFor(t, "the reloaded run page", `document.readyState === 'complete' && document.body.dataset.page === 'run'`)
	tb.waitStatus(t, "completed")

	tb.click(t, "a.brand")
	tb.waitFor(t, "the index again", `document.readyState === 'complete' && document.body.dataset.page === 'index'`)
	evalJS[bool](t, tb, `(() => { document.querySelector('[data-testid=filter-status]').value = 'completed'; return true; })()`)
	tb.click(t, `[data-testid=run-filters] button[type=submit]`)
	tb.waitFor(t, "the filtered list", `document.readyState === 'complete' && document.body.dataset.page === 'index' &&
		new URLSearchParams(location.search).get('status') === 'completed' && !!document.querySelector('[data-testid=run-row][data-run-id="`+id+`"]')`)

	tb.do(t, "visit the other server", chromedp.Navigate(other.URL+"/"))
	tb.waitFor(t, "the other server's page", `document.title === 'another server'`)
	mu.Lock()
	seen := append([]http.Header(nil), captured...)
	mu.Unlock()
	if len(seen) == 0 {
		t.Fatal("the other server saw no request")
	}
	replay := func(h http.Header, path string) int {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, b.base+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		for k, vs := range h {
			req.Header[k] = vs
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("replay %s: %v", path, err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	for i, h := range seen {
		t.Logf("the other server's request %d: Cookie %q", i, h.Get("Cookie"))
		for _, path := range []string{"/api/runs", "/runs/" + id, "/"} {
			if got := replay(h, path); got != http.StatusUnauthorized {
				t.Errorf("what the other server received (request %d: Cookie %q), replayed to Baton's %s: %d, want 401", i, h.Get("Cookie"), path, got)
			}
		}
	}
	if got := replay(http.Header{"Authorization": {"Bearer " + token}}, "/api/runs"); got != http.StatusOK {
		t.Errorf("the token itself, replayed the same way: %d, want 200", got)
	}
}
