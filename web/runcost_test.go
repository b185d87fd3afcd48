package web_test

import (
	"testing"

	"github.com/baton-dev/baton/internal/live"
	"github.com/baton-dev/baton/internal/prices"
	"github.com/baton-dev/baton/traces"
	"github.com/baton-dev/baton/web"
)

// TestRunCost prices a listed run by the model each of its calls named, else by the run's model;
// a run stored before its usage was kept, or with a call no price covers, shows no money.
func TestRunCost(t *testing.T) {
	p := web.WithPrices(prices.Table{"gpt-4o": {Input: 2, Output: 10}, "gpt-4o-mini": {Input: 1, Output: 1}})
	for _, c := range []struct {
		name  string
		model string
		usage []live.ModelTokens
		want  string
	}{
		{"an app's calls, each by its model", "app", []live.ModelTokens{
			{Model: "gpt-4o", Prompt: 1000, Completion: 100}, {Model: "gpt-4o-mini", Prompt: 1000, Completion: 0}}, "$0.004"},
		{"unnamed calls, by the run's model", "openai:gpt-4o", []live.ModelTokens{{Prompt: 1000, Completion: 100}}, "$0.003"},
		{"a call no price covers", "app", []live.ModelTokens{{Model: "gpt-4o", Prompt: 1}, {Prompt: 1}}, ""},
		{"stored before usage was kept", "openai:gpt-4o", nil, ""},
		{"no calls yet", "openai:gpt-4o", []live.ModelTokens{}, "$0"},
		{"scripted", "scripted", []live.ModelTokens{{Model: "scripted", Prompt: 500, Completion: 50}}, "scripted: $0"},
	} {
		r := live.RunSummary{Run: traces.Run{ID: "r", Model: c.model}, Usage: c.usage}
		_, got, ok := web.RunCost(r, p)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("%s: %q (%v), want %q", c.name, got, ok, c.want)
		}
		if rows := web.NewRunRows([]live.RunSummary{r}, r.StartedAt, p); rows[0].CostText != c.want {
			t.Errorf("%s: the row says %q, want %q", c.name, rows[0].CostText, c.want)
		}
	}
	if _, got, ok := web.RunCost(live.RunSummary{Run: traces.Run{Model: "openai:gpt-4o"}, Usage: []live.ModelTokens{{Prompt: 9}}}); ok {
		t.Errorf("without prices a run costs %q", got)
	}
}
