package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/baton-dev/baton/server"
)

// TestAppBreakpointsRefusals: the breakpoints of an app's run are refused, with what to do, until
// its app opts in (attach.Middleware), and the app's long poll (POST /api/ingest/:id/hold) refuses
// a stranger and a poll that does not say where the run is held. (The protocol's course, an app
// held, edited and continued in its own process, is attach's TestMiddlewareHoldsAnApp.)
func TestAppBreakpointsRefusals(t *testing.T) {
	ts := mustOpenServer(t, server.Config{})
	run := ts.startIngest(t, `{"run":{"flow":"support","input":"hi","model":"app"},"agents":[]}`, nil, http.StatusCreated)
	secret := map[string]string{runSecretHeader: ts.secret(run.ID)}
	for _, tc := range []struct {
		name   string
		req    request
		status int
		says   string
	}{
		{"breakpoints of an app that did not opt in",
			request{method: http.MethodPost, path: "/api/runs/" + run.ID + "/breakpoints", body: `{"breakpoints":["transfer"]}`},
			http.StatusConflict, "attach.Middleware()"},
		{"continue of an app that did not opt in",
			request{method: http.MethodPost, path: "/api/runs/" + run.ID + "/continue", body: `{}`},
			http.StatusConflict, "attach.Middleware()"},
		{"a poll without the run's secret",
			request{method: http.MethodPost, path: "/api/ingest/" + run.ID + "/hold", body: `{"version":0}`, stranger: true},
			http.StatusForbidden, "only the app that started it"},
		{"a hold without its stop",
			request{method: http.MethodPost, path: "/api/ingest/" + run.ID + "/hold", body: `{"version":0,"hold":1}`, header: secret},
			http.StatusBadRequest, "hold and stop go together"},
		{"a stop of no kind of breakpoint",
			request{method: http.MethodPost, path: "/api/ingest/" + run.ID + "/hold", body: `{"version":0,"hold":1,"stop":{"break":"nap"}}`, header: secret},
			http.StatusBadRequest, `is not a kind of breakpoint`},
		{"a poll of a run no app streams",
			request{method: http.MethodPost, path: "/api/ingest/r-nope/hold", body: `{"version":0}`, header: secret},
			http.StatusNotFound, "r-nope"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := ts.do(t, tc.req)
			if res.status != tc.status || !strings.Contains(string(res.body), tc.says) {
				t.Errorf("%s %s: %d %s; want %d saying %q", tc.req.method, tc.req.path, res.status, res.body, tc.status, tc.says)
			}
		})
	}
}

// TestHoldableAppRunOffersBreakpointsAtOnce: an app whose agents carry the middleware says so at
// its run's start ("holdable"): the run's page offers breakpoints from then on, before the app's
// first poll, and breakpoints set then reach the app at that poll. Without it, the page offers
// none until the app opts in.
func TestHoldableAppRunOffersBreakpointsAtOnce(t *testing.T) {
	ts := mustOpenServer(t, server.Config{})
	plain := ts.startIngest(t, `{"run":{"flow":"support","input":"hi","model":"app"},"agents":[]}`, nil, http.StatusCreated)
	if page(t, ts.do(t, request{path: "/runs/" + plain.ID})).Find(`[data-testid="breakpoints-form"]`).Length() != 0 {
		t.Error("the page of an app run that did not say it is holdable offers breakpoints")
	}
	run := ts.startIngest(t, `{"run":{"flow":"support","input":"hi","model":"app"},"agents":[],"holdable":true}`, nil, http.StatusCreated)
	if page(t, ts.do(t, request{path: "/runs/" + run.ID})).Find(`[data-testid="breakpoints-form"]`).Length() != 1 {
		t.Fatal("the page of a holdable app's run offers no breakpoints before its first poll")
	}
	if res := ts.do(t, request{method: http.MethodPost, path: "/api/runs/" + run.ID + "/breakpoints", body: `{"breakpoints":["transfer:billing"]}`}); res.status != http.StatusOK || !strings.Contains(string(res.body), `"pending":true`) {
		t.Fatalf("breakpoints before the app's first poll: %d %s; want 200, pending", res.status, res.body)
	}
	res := ts.do(t, request{method: http.MethodPost, path: "/api/ingest/" + run.ID + "/hold", body: `{"version":0}`, header: map[string]string{runSecretHeader: ts.secret(run.ID)}})
	if res.status != http.StatusOK || !strings.Contains(string(res.body), `"breakpoints":["transfer:billing"]`) {
		t.Errorf("the app's first poll: %d %s; want the breakpoints set", res.status, res.body)
	}
}
