package server_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/internal/agentstest"
	"github.com/baton-dev/baton/internal/prices"
	"github.com/baton-dev/baton/internal/story"
	"github.com/baton-dev/baton/server"
	"github.com/baton-dev/baton/traces"
)

// fact returns the value of the inspector fact labelled label, "" when there is none.
func fact(doc *goquery.Document, label string) string {
	v := ""
	doc.Find(".facts dt").Each(func(_ int, dt *goquery.Selection) {
		if strings.TrimSpace(dt.Text()) == label {
			v = strings.TrimSpace(dt.Next().Text())
		}
	})
	return v
}

// TestCostFollowsReportedUsage runs a flow on an OpenAI-compatible model that reports usage: the
// header, a model call's inspector and an agent's summary show what that usage costs at the
// table's price (a dated name priced by its base), a scripted run costs $0, and a model the
// table has no price for shows no money.
func TestCostFollowsReportedUsage(t *testing.T) {
	replies := []agentstest.FakeReply{
		{ToolCalls: []agentstest.FakeToolCall{{Name: "transfer_to_agent", Arguments: `{"agent_name":"weather_agent"}`}}},
		{ToolCalls: []agentstest.FakeToolCall{{Name: "get_weather", Arguments: `{"city":"Tokyo"}`}}},
		{Text: "Sunny in Tokyo today."},
	}
	fake, other := agentstest.NewFakeOpenAI(t, replies...), agentstest.NewFakeOpenAI(t, replies...)
	priced := mustModel(t, "openai:fake-model-2025-01-01", agents.ProviderEnv{APIKey: "k", BaseURL: fake.BaseURL()})
	unpriced := mustModel(t, "openai:unpriced-model", agents.ProviderEnv{APIKey: "k", BaseURL: other.BaseURL()})
	table := prices.Default()
	table["fake-model"] = prices.Price{Input: 3, Output: 15}
	ts := mustOpenServer(t, server.Config{Flows: []agents.Flow{catalogueFlow(t, "transfer")},
		Models: []*agents.Model{priced, unpriced}, Prices: table})
	server.SetRunner(ts.Server, agents.RunFlow)

	tr := ts.ended(t, ts.createRun(t, `{"flow":"transfer","input":"Weather in Tokyo?"}`))
	var prompt, completion int
	var call *traces.Event
	perAgent := map[string][2]int{}
	for i, e := range tr.Events {
		if e.Kind == traces.KindModelFinished && e.Model.Usage != nil {
			u := e.Model.Usage
			prompt, completion = prompt+u.PromptTokens, completion+u.CompletionTokens
			a := perAgent[e.Agent]
			perAgent[e.Agent] = [2]int{a[0] + u.PromptTokens, a[1] + u.CompletionTokens}
			call = &tr.Events[i]
		}
	}
	if call == nil || prompt == 0 || completion == 0 {
		t.Fatalf("the run reported no usage: %+v", tr.Events)
	}
	cost := func(p, c int) string { return prices.Format((float64(p)*3 + float64(c)*15) / 1e6) }

	doc := page(t, ts.do(t, request{path: "/runs/" + tr.Run.ID}))
	if got, want := doc.Find("[data-testid=run-cost]").Text(), cost(prompt, completion); got != want {
		t.Errorf("header cost = %q, want %q", got, want)
	}
	in := page(t, ts.do(t, request{path: fmt.Sprintf("/runs/%s/inspector?seq=%d", tr.Run.ID, call.Seq)}))
	if got, want := fact(in, "cost"), cost(call.Model.Usage.PromptTokens, call.Model.Usage.CompletionTokens); got != want {
		t.Errorf("inspector cost of #%d = %q, want %q", call.Seq, got, want)
	}
	for agent, u := range perAgent {
		s := page(t, ts.do(t, request{path: "/runs/" + tr.Run.ID + "/inspector?agent=" + url.QueryEscape(agent)}))
		if got, want := s.Find("[data-testid=agent-cost]").Text(), cost(u[0], u[1]); got != want {
			t.Errorf("%s's cost = %q, want %q", agent, got, want)
		}
	}

	scripted := ts.ended(t, ts.createRun(t, `{"flow":"transfer","model":"scripted"}`))
	doc = page(t, ts.do(t, request{path: "/runs/" + scripted.Run.ID}))
	if got := doc.Find("[data-testid=run-cost]").Text(); got != "scripted: $0" {
		t.Errorf("scripted run's cost = %q, want scripted: $0", got)
	}

	// The diff of the two prices each turn at its own run's model.
	pairs := story.Compare(story.Of(tr), story.Of(scripted)).Pairs
	cells := page(t, ts.do(t, request{path: "/diff?a=" + tr.Run.ID + "&b=" + scripted.Run.ID})).Find("[data-testid=turn-tokens]")
	if cells.Length() != len(pairs) || len(pairs) == 0 {
		t.Fatalf("%d token cells for %d turns", cells.Length(), len(pairs))
	}
	cells.Each(func(i int, cell *goquery.Selection) {
		want := "-"
		if a := pairs[i].A; a != nil {
			want = fmt.Sprintf("%d (%s)", a.Tokens, cost(a.PromptTokens, a.CompletionTokens))
		}
		if b := pairs[i].B; b != nil {
			want += fmt.Sprintf(" | %d (scripted: $0)", b.Tokens)
		} else {
			want += " | -"
		}
		if got := cell.Text(); got != want {
			t.Errorf("turn %d's tokens = %q, want %q", i+1, got, want)
		}
	})

	unknown := ts.ended(t, ts.createRun(t, `{"flow":"transfer","model":"openai:unpriced-model"}`))
	if unknown.Run.Status != traces.StatusCompleted {
		t.Fatalf("unpriced run = %+v", unknown.Run)
	}
	doc = page(t, ts.do(t, request{path: "/runs/" + unknown.Run.ID}))
	if n := doc.Find("[data-testid=run-cost]").Length(); n != 0 || strings.Contains(doc.Find("[data-testid=run-stats]").Text(), "$") {
		t.Errorf("a model without a price shows money: %q", doc.Find("[data-testid=run-stats]").Text())
	}

	// The runs list and GET /api/runs price each run as its page does.
	wantCost := map[string]string{tr.Run.ID: cost(prompt, completion), scripted.Run.ID: "scripted: $0", unknown.Run.ID: ""}
	index := page(t, ts.do(t, request{path: "/"}))
	index.Find("[data-testid=run-row]").Each(func(_ int, row *goquery.Selection) {
		id := row.AttrOr("data-run-id", "")
		if got := row.Find("[data-testid=run-list-cost]").Text(); got != wantCost[id] {
			t.Errorf("the list's cost of %s = %q, want %q", id, got, wantCost[id])
		}
	})
	var listed []struct {
		ID      string   `json:"id"`
		Cost    string   `json:"cost"`
		CostUSD *float64 `json:"cost_usd"`
	}
	if res := ts.do(t, request{path: "/api/runs"}); json.Unmarshal(res.body, &listed) != nil || len(listed) != 3 {
		t.Fatalf("GET /api/runs = %d %s", res.status, res.body)
	}
	for _, r := range listed {
		if r.Cost != wantCost[r.ID] || (r.CostUSD != nil) != (r.Cost != "") {
			t.Errorf("GET /api/runs prices %s at %q (%v), want %q", r.ID, r.Cost, r.CostUSD, wantCost[r.ID])
		}
	}
	if r := listed[2]; r.ID != tr.Run.ID || r.CostUSD == nil || *r.CostUSD != (float64(prompt)*3+float64(completion)*15)/1e6 {
		t.Errorf("GET /api/runs: %+v, want %s first added, at $%v", r, tr.Run.ID, (float64(prompt)*3+float64(completion)*15)/1e6)
	}
}
