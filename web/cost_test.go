package web_test

import (
	"os"
	"testing"

	"github.com/baton-dev/baton/internal/prices"
	"github.com/baton-dev/baton/internal/webtest"
	"github.com/baton-dev/baton/traces"
	"github.com/baton-dev/baton/web"
)

// TestCostOfARun prices one recorded run on a priced, a scripted and an unknown model: the
// header and the compare row agree with the usage of the trace, a scripted run costs $0, and a
// model without a price, or a view given no prices, shows no money.
func TestCostOfARun(t *testing.T) {
	data, err := os.ReadFile("../traces/testdata/v2/supervisor.trace.json")
	if err != nil {
		t.Fatal(err)
	}
	tr, err := traces.Unmarshal(data)
	if err != nil {
		t.Fatal(err)
	}
	var prompt, completion int
	for _, e := range tr.Events {
		if e.Kind == traces.KindModelFinished && e.Model.Usage != nil {
			prompt, completion = prompt+e.Model.Usage.PromptTokens, completion+e.Model.Usage.CompletionTokens
		}
	}
	table := prices.Table{"house-model": {Input: 4, Output: 20}}
	want := prices.Format((float64(prompt)*4 + float64(completion)*20) / 1e6)
	for _, c := range []struct {
		model, want string
		opts        []web.Option
	}{
		{"openai:house-model", want, []web.Option{web.WithPrices(table)}},
		{"scripted", "scripted: $0", []web.Option{web.WithPrices(table)}},
		{"openai:other-model", "", []web.Option{web.WithPrices(table)}},
		{"openai:house-model", "", nil},
	} {
		run := tr
		run.Run.Model = c.model
		if got := web.NewView(run, c.opts...).Stats.Cost; got != c.want {
			t.Errorf("%s, %d options: header cost %q, want %q", c.model, len(c.opts), got, c.want)
		}
		if got := web.NewComparison([]traces.Trace{run}, c.opts...).Rows[0].Cost.Text; got != c.want {
			t.Errorf("%s, %d options: compare cost %q, want %q", c.model, len(c.opts), got, c.want)
		}
	}
}

// TestUnpricedCallOfAPricedRun: a run on a priced model whose calls name a model the table lacks
// is not charged for them at the run's model's price: the header and the compare row say what
// the priced calls cost and name the unpriced model.
func TestUnpricedCallOfAPricedRun(t *testing.T) {
	tr := webtest.Handoff("r", "openai:big", []webtest.ModelUse{{Model: "big", Prompt: 1000, Completion: 100}},
		[]webtest.ModelUse{{Model: "gpt-9", Prompt: 500, Completion: 50}, {Prompt: 10, Completion: 1}})
	p := web.WithPrices(prices.Table{"big": {Input: 10, Output: 30}})
	want := prices.Format((1010.0*10+101*30)/1e6) + " + no price for gpt-9"
	if got := web.NewView(tr, p).Stats.Cost; got != want {
		t.Errorf("header cost %q, want %q", got, want)
	}
	if got := web.NewComparison([]traces.Trace{tr}, p).Rows[0].Cost.Text; got != want {
		t.Errorf("compare cost %q, want %q", got, want)
	}
}
