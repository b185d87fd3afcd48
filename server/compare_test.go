package server_test

import (
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/internal/prices"
	"github.com/baton-dev/baton/server"
	"github.com/baton-dev/baton/traces"
)

// TestComparePage runs two real flows through the page and checks each row against its run's
// trace as the API serves it; bad requests get a 400 that says what to fix.
func TestComparePage(t *testing.T) {
	ts := mustOpenServer(t, server.Config{Flows: agents.Catalogue(), Prices: prices.Default()})
	server.SetRunner(ts.Server, agents.RunFlow)

	t.Run("form", func(t *testing.T) {
		doc := page(t, ts.do(t, request{path: "/compare"}))
		if doc.Find(`[data-testid="compare-table"]`).Length() != 0 {
			t.Error("a table before anything ran")
		}
		if n := doc.Find(`input[name="flows"]:checked`).Length(); n != 4 {
			t.Errorf("%d mechanisms checked, want the 4 defaults", n)
		}
	})
	t.Run("table", func(t *testing.T) {
		res := ts.do(t, request{path: "/compare?flows=supervisor,supervisor-agenttool"})
		if res.status != 200 {
			t.Fatalf("status %d: %s", res.status, res.body)
		}
		rows := page(t, res).Find(`[data-testid="compare-row"]`)
		if rows.Length() != 2 {
			t.Fatalf("%d rows", rows.Length())
		}
		rows.Each(func(_ int, row *goquery.Selection) {
			id, _ := row.Attr("data-run-id")
			tr := ts.trace(t, id)
			calls, prompt := 0, 0
			for _, e := range tr.Events {
				if e.Kind == traces.KindModelFinished {
					calls++
					prompt += e.Model.Usage.PromptTokens
				}
			}
			if got := row.Find(`[data-testid="model-calls"]`).AttrOr("data-value", ""); got != strconv.Itoa(calls) {
				t.Errorf("%s: model calls %s, want %d", id, got, calls)
			}
			if got := row.Find(`[data-testid="prompt-tokens"]`).AttrOr("data-value", ""); got != strconv.Itoa(prompt) {
				t.Errorf("%s: prompt tokens %s, want %d", id, got, prompt)
			}
			if got := row.Find(`[data-testid="cost"] .figure`).Text(); got != "scripted: $0" {
				t.Errorf("%s: cost %q, want scripted: $0", id, got)
			}
			row.Find(`[data-testid="model-calls"] a`).Each(func(_ int, a *goquery.Selection) {
				u, err := url.Parse(a.AttrOr("href", ""))
				seq, _ := strconv.ParseInt(strings.TrimPrefix(u.Fragment, "seq="), 10, 64)
				if err != nil || u.Path != "/runs/"+id || seq < 1 || int(seq) > len(tr.Events) || tr.Events[seq-1].Kind != traces.KindModelFinished {
					t.Errorf("%s: model call link %q", id, a.AttrOr("href", ""))
				}
			})
		})
	})
	for _, tt := range []struct{ name, query, want string }{
		{"unknown flow", "flows=supervisor,nope", "nope"},
		{"too many flows", "flows=" + strings.Repeat("a,b,c,d,e,f,g,h,i,", 1), "at most 8"},
		{"huge task", "flows=supervisor&input=" + strings.Repeat("x", 9000), "keep the task under"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := ts.do(t, request{path: "/compare?" + tt.query})
			if res.status != 400 || !strings.Contains(string(res.body), tt.want) {
				t.Errorf("status %d, body %.300s; want 400 with %q", res.status, res.body, tt.want)
			}
		})
	}
}
