package server_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/internal/agentstest"
	"github.com/baton-dev/baton/internal/prices"
	"github.com/baton-dev/baton/internal/story"
	"github.com/baton-dev/baton/internal/webtest"
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
	if got := doc.Find("[data-testid=run-cost]").Text(); got != "no price for unpriced-model" || strings.Contains(doc.Find("[data-testid=run-stats]").Text(), "$") {
		t.Errorf("a model without a price shows %q in %q, want no money, no price for unpriced-model", got, doc.Find("[data-testid=run-stats]").Text())
	}

	// The runs list and GET /api/runs price each run as its page does.
	wantCost := map[string]string{tr.Run.ID: cost(prompt, completion), scripted.Run.ID: "scripted: $0", unknown.Run.ID: "no price for unpriced-model"}
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
		if r.Cost != wantCost[r.ID] || (r.CostUSD != nil) != (r.ID != unknown.Run.ID) {
			t.Errorf("GET /api/runs prices %s at %q (%v), want %q", r.ID, r.Cost, r.CostUSD, wantCost[r.ID])
		}
	}
	if r := listed[2]; r.ID != tr.Run.ID || r.CostUSD == nil || *r.CostUSD != (float64(prompt)*3+float64(completion)*15)/1e6 {
		t.Errorf("GET /api/runs: %+v, want %s first added, at $%v", r, tr.Run.ID, (float64(prompt)*3+float64(completion)*15)/1e6)
	}
}

// TestUnpricedCallIsNotGuessed: in a run on a priced model, calls that name a model the table has
// no price for are shown unpriced ("no price for gpt-9"), never charged at the run's model's
// price: per call, per handoff (its deciding call), per agent, in the run's header, the runs
// list, and in /diff's turns and totals, where the priced part is followed by the mark.
func TestUnpricedCallIsNotGuessed(t *testing.T) {
	table := prices.Table{"big": {Input: 10, Output: 30}}
	ts := mustOpenServer(t, server.Config{Prices: table})
	a := webtest.Handoff("r-unpriced", "openai:big", []webtest.ModelUse{{Model: "big", Prompt: 1000, Completion: 100}, {Model: "gpt-9", Prompt: 500, Completion: 50}},
		[]webtest.ModelUse{{Model: "gpt-9", Prompt: 200, Completion: 20}})
	b := webtest.Handoff("r-priced", "openai:big", []webtest.ModelUse{{Model: "big", Prompt: 1000, Completion: 100}},
		[]webtest.ModelUse{{Model: "big", Prompt: 200, Completion: 20}})
	ids := [2]string{}
	for i, tr := range []traces.Trace{a, b} {
		data, err := traces.Marshal(tr)
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = ts.importTrace(t, data).ID
	}
	usd := func(p, c int) float64 { return (float64(p)*10 + float64(c)*30) / 1e6 }
	big := prices.Format(usd(1000, 100))
	const mark = "no price for gpt-9"

	doc := page(t, ts.do(t, request{path: "/runs/" + ids[0]}))
	if got := doc.Find("[data-testid=run-cost]").Text(); got != big+" + "+mark {
		t.Errorf("header cost %q, want %q", got, big+" + "+mark)
	}
	tr := ts.trace(t, ids[0])
	var unpricedCall, transfer int64
	for _, e := range tr.Events {
		switch {
		case e.Kind == traces.KindModelFinished && e.Model.Name == "gpt-9" && unpricedCall == 0:
			unpricedCall = e.Seq
		case e.Kind == traces.KindTransfer:
			transfer = e.Seq
		}
	}
	if unpricedCall == 0 || transfer == 0 {
		t.Fatalf("no gpt-9 call or transfer in %+v", tr.Events)
	}
	in := page(t, ts.do(t, request{path: fmt.Sprintf("/runs/%s/inspector?seq=%d", ids[0], unpricedCall)}))
	if got := fact(in, "cost"); got != mark {
		t.Errorf("the gpt-9 call's cost %q, want %q", got, mark)
	}
	for agent, want := range map[string]string{"root": big + " + " + mark, "helper": mark} {
		s := page(t, ts.do(t, request{path: "/runs/" + ids[0] + "/inspector?agent=" + agent}))
		if got := s.Find("[data-testid=agent-cost]").Text(); got != want {
			t.Errorf("%s's cost %q, want %q", agent, got, want)
		}
	}

	diff := page(t, ts.do(t, request{path: "/diff?a=" + ids[0] + "&b=" + ids[1]}))
	var cells []string
	diff.Find("[data-testid=turn-tokens]").Each(func(_ int, s *goquery.Selection) { cells = append(cells, s.Text()) })
	want := []string{
		fmt.Sprintf("1650 (%s + %s) | 1100 (%s)", big, mark, big),
		fmt.Sprintf("220 (%s) | 220 (%s)", mark, prices.Format(usd(200, 20))),
	}
	if !slices.Equal(cells, want) {
		t.Errorf("/diff's turns %q, want %q", cells, want)
	}
	if got, want := diff.Find("[data-testid=total-tokens]").Text(), fmt.Sprintf("1870 (%s + %s) | 1320 (%s)", big, mark, prices.Format(usd(1200, 120))); got != want {
		t.Errorf("/diff's totals %q, want %q", got, want)
	}

	var listed []struct {
		ID      string   `json:"id"`
		Cost    string   `json:"cost"`
		CostUSD *float64 `json:"cost_usd"`
	}
	if res := ts.do(t, request{path: "/api/runs"}); json.Unmarshal(res.body, &listed) != nil {
		t.Fatalf("GET /api/runs = %d %s", res.status, res.body)
	}
	for _, r := range listed {
		if r.ID == ids[0] && (r.Cost != big+" + "+mark || r.CostUSD != nil) {
			t.Errorf("GET /api/runs: %+v, want cost %q and no cost_usd", r, big+" + "+mark)
		}
	}
}
