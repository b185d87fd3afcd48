package server_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/baton-dev/baton/internal/prices"
	"github.com/baton-dev/baton/internal/webtest"
	"github.com/baton-dev/baton/server"
	"github.com/baton-dev/baton/traces"
)

// handOff emits a root turn of echo_agent that hands the run to target, and target's turn.
func handOff(rec *traces.Recording, target string) {
	rec.Emit(traces.Event{Kind: traces.KindAgentStarted, Agent: "echo_agent", AgentRun: &traces.AgentRun{Via: "run",
		Input: []traces.Message{{Role: "user", Content: "hi"}}}})
	rec.Emit(traces.Event{Kind: traces.KindTransfer, Agent: "echo_agent", Transfer: &traces.Transfer{From: "echo_agent", To: target, Mode: traces.TransferLLM}})
	rec.Emit(traces.Event{Kind: traces.KindAgentStarted, Agent: target, AgentRun: &traces.AgentRun{Via: "transfer",
		Input: []traces.Message{{Role: "user", Content: "hi"}}}})
	rec.Finish(traces.StatusCompleted, "")
}

// TestDiffPage: /diff names the first divergence of two runs that took different routes, with
// links to the events on each side, says two runs that did the same do not differ, and asks for
// two runs when it does not get them.
func TestDiffPage(t *testing.T) {
	ts := mustOpenServer(t, server.Config{})
	handOff(ts.addRecording(t, "r-billing"), "billing_agent")
	handOff(ts.addRecording(t, "r-tech"), "tech_agent")
	handOff(ts.addRecording(t, "r-billing-2"), "billing_agent")

	res := ts.do(t, request{path: "/diff?a=r-billing&b=r-tech"})
	html := string(res.body)
	for _, want := range []string{`data-testid="first-divergence" data-what="routing decision"`, "hands off to billing_agent (llm)", "hands off to tech_agent (llm)",
		`href="/runs/r-billing#seq=2"`, `href="/runs/r-tech#seq=2"`} {
		if res.status != http.StatusOK || !strings.Contains(html, want) {
			t.Errorf("diff of two routes: status %d, page lacks %q", res.status, want)
		}
	}
	if res := ts.do(t, request{path: "/diff?run=r-billing&run=r-billing-2"}); res.status != http.StatusOK || !strings.Contains(string(res.body), `data-testid="no-divergence"`) {
		t.Errorf("diff of two runs alike (picked in the list): status %d, no \"no divergence\"", res.status)
	}
	if res := ts.do(t, request{path: "/diff?run=r-billing"}); res.status != http.StatusBadRequest || !strings.Contains(string(res.body), "a diff compares two runs") {
		t.Errorf("one run picked: status %d: %s", res.status, res.body)
	}
	if res := ts.do(t, request{path: "/diff?a=r-billing&b=nope"}); res.status != http.StatusNotFound {
		t.Errorf("an unknown run: status %d", res.status)
	}
}

// TestDiffPagePricesEachCall: /diff of two runs whose calls name different models, one turn of
// them two models at once, shows beside each aligned turn's tokens and in the whole runs' totals
// what the calls cost, each call at its own model's price from the server's table.
func TestDiffPagePricesEachCall(t *testing.T) {
	table := prices.Table{"big": {Input: 10, Output: 30}, "small": {Input: 1, Output: 2}, "other": {Input: 4, Output: 8}}
	ts := mustOpenServer(t, server.Config{Prices: table})
	imported := func(tr traces.Trace) string {
		data, err := traces.Marshal(tr)
		if err != nil {
			t.Fatal(err)
		}
		return ts.importTrace(t, data).ID
	}
	a := imported(webtest.Handoff("a", "openai:big", []webtest.ModelUse{{Model: "big", Prompt: 1000, Completion: 100}},
		[]webtest.ModelUse{{Model: "small", Prompt: 2000, Completion: 500}, {Model: "big", Prompt: 300, Completion: 30}}))
	b := imported(webtest.Handoff("b", "openai:other", []webtest.ModelUse{{Model: "other", Prompt: 1000, Completion: 100}},
		[]webtest.ModelUse{{Model: "small", Prompt: 400, Completion: 40}}))
	usd := func(p, c int, in, out float64) float64 { return (float64(p)*in + float64(c)*out) / 1e6 }
	rootA, helperA := usd(1000, 100, 10, 30), usd(2000, 500, 1, 2)+usd(300, 30, 10, 30)
	rootB, helperB := usd(1000, 100, 4, 8), usd(400, 40, 1, 2)

	doc := page(t, ts.do(t, request{path: "/diff?a=" + a + "&b=" + b}))
	var cells []string
	doc.Find("[data-testid=turn-tokens]").Each(func(_ int, s *goquery.Selection) { cells = append(cells, s.Text()) })
	want := []string{
		"1100 (" + prices.Format(rootA) + ") | 1100 (" + prices.Format(rootB) + ")",
		"2830 (" + prices.Format(helperA) + ") | 440 (" + prices.Format(helperB) + ")",
	}
	if !slices.Equal(cells, want) {
		t.Errorf("turns' tokens and cost = %q, want %q", cells, want)
	}
	wantTotal := "3930 (" + prices.Format(rootA+helperA) + ") | 1540 (" + prices.Format(rootB+helperB) + ")"
	if got := doc.Find("[data-testid=total-tokens]").Text(); got != wantTotal {
		t.Errorf("totals = %q, want %q", got, wantTotal)
	}
}

// TestDiffPageMarksTokens: /diff of two imported runs whose turns match in text but whose helper
// used more tokens marks that turn as differing in tokens (not in its text), and names it as the
// first divergence since nothing else differs.
func TestDiffPageMarksTokens(t *testing.T) {
	ts := mustOpenServer(t, server.Config{})
	var ids [2]string
	for i, prompt := range []int{200, 250} {
		data, err := traces.Marshal(webtest.Handoff(fmt.Sprintf("r-tok%d", i), "openai:big", []webtest.ModelUse{{Model: "big", Prompt: 1000, Completion: 100}},
			[]webtest.ModelUse{{Model: "big", Prompt: prompt, Completion: 20}}))
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = ts.importTrace(t, data).ID
	}
	doc := page(t, ts.do(t, request{path: "/diff?a=" + ids[0] + "&b=" + ids[1]}))
	var differs []string
	doc.Find("[data-testid=diff-turn]").Each(func(_ int, s *goquery.Selection) { differs = append(differs, s.AttrOr("data-differs", "")) })
	if !slices.Equal(differs, []string{"false", "true"}) {
		t.Errorf("turns differ %v, want the helper's only", differs)
	}
	var what []string
	doc.Find("[data-testid=difference]").Each(func(_ int, s *goquery.Selection) { what = append(what, s.AttrOr("data-what", "")) })
	if !slices.Equal(what, []string{"tokens"}) {
		t.Errorf("differences %v, want tokens", what)
	}
	if f := doc.Find("[data-testid=first-divergence]"); f.AttrOr("data-what", "") != "tokens" || !strings.Contains(f.Text(), "270 tok") {
		t.Errorf("first divergence %q: %q, want the helper's tokens", f.AttrOr("data-what", ""), f.Text())
	}
}
