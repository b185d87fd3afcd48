package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/baton-dev/baton/server"
)

// TestFavicon: every page names its icon, and the server serves it (no 404 on every page).
func TestFavicon(t *testing.T) {
	ts := mustOpenServer(t, server.Config{})
	if page := ts.do(t, request{path: "/"}); !strings.Contains(string(page.body), `<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">`) {
		t.Errorf("the index page names no icon")
	}
	res := ts.do(t, request{path: "/static/favicon.svg"})
	if res.status != http.StatusOK || !strings.HasPrefix(string(res.body), "<svg") {
		t.Errorf("GET /static/favicon.svg: %d %.40s", res.status, res.body)
	}
}
