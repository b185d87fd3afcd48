package story_test

import (
	"math"
	"slices"
	"testing"

	"github.com/baton-dev/baton/internal/prices"
	"github.com/baton-dev/baton/internal/story"
	"github.com/baton-dev/baton/internal/webtest"
)

// TestComparisonPricesEachCall: two runs whose turns' calls name different models, one turn two
// models at once, are priced call by call, each by the model it named: per turn and in each
// run's total. A call of a model the table lacks, whatever the run's model, leaves that turn and
// its run's total unpriced, named ("no price for MODEL"), never guessed; a scripted run costs $0.
func TestComparisonPricesEachCall(t *testing.T) {
	table := prices.Table{"big": {Input: 10, Output: 30}, "small": {Input: 1, Output: 2}, "other": {Input: 4, Output: 8}}
	a := story.Of(webtest.Handoff("a", "openai:big", []webtest.ModelUse{{Model: "big", Prompt: 1000, Completion: 100}},
		[]webtest.ModelUse{{Model: "small", Prompt: 2000, Completion: 500}, {Model: "big", Prompt: 300, Completion: 30}, {Model: "small", Prompt: 100, Completion: 10}}))
	b := story.Of(webtest.Handoff("b", "openai:mystery", []webtest.ModelUse{{Model: "other", Prompt: 1000, Completion: 100}},
		[]webtest.ModelUse{{Model: "unpriced", Prompt: 50, Completion: 5}}))
	helper := a.Turns[1]
	if want := []story.ModelUsage{{Model: "small", Calls: 2, PromptTokens: 2100, CompletionTokens: 510}, {Model: "big", Calls: 1, PromptTokens: 300, CompletionTokens: 30}}; !slices.Equal(helper.Models, want) {
		t.Errorf("helper's usage by model = %+v, want %+v", helper.Models, want)
	}
	c := story.Compare(a, b)
	c.Price(table.Run("openai:big"), table.Run("openai:mystery"))
	usd := func(p, c int, in, out float64) float64 { return (float64(p)*in + float64(c)*out) / 1e6 }
	rootA, helperA := usd(1000, 100, 10, 30), usd(2100, 510, 1, 2)+usd(300, 30, 10, 30)
	near := func(m *story.Money, want float64) bool {
		return m != nil && math.Abs(m.USD-want) < 1e-12 && m.Text == prices.Format(want)
	}
	if len(c.Pairs) != 2 {
		t.Fatalf("%d pairs, want root and helper", len(c.Pairs))
	}
	if p := c.Pairs[0]; !near(p.A.Cost, rootA) || !near(p.B.Cost, usd(1000, 100, 4, 8)) {
		t.Errorf("root's costs %+v | %+v, want %v | %v", p.A.Cost, p.B.Cost, rootA, usd(1000, 100, 4, 8))
	}
	unpriced := func(m *story.Money, known float64, text string) bool {
		return m != nil && math.Abs(m.USD-known) < 1e-12 && m.Text == text && slices.Equal(m.Unpriced, []string{"unpriced"})
	}
	if p := c.Pairs[1]; !near(p.A.Cost, helperA) || !unpriced(p.B.Cost, 0, "no price for unpriced") {
		t.Errorf("helper's costs %+v | %+v, want %v (two models) | no price for unpriced", p.A.Cost, p.B.Cost, helperA)
	}
	rootB := usd(1000, 100, 4, 8)
	if !near(c.Totals[0].Cost, rootA+helperA) || !unpriced(c.Totals[1].Cost, rootB, prices.Format(rootB)+" + no price for unpriced") ||
		c.Totals[0].Tokens != 4040 || c.Totals[1].Tokens != 1155 {
		t.Errorf("totals %+v %+v, want A %v over 4040 tokens, B unpriced over 1155", c.Totals[0], c.Totals[1], rootA+helperA)
	}

	// A priced run's call that names a model the table lacks is unpriced, not charged at the
	// run's model's price.
	d := story.Compare(a, story.Of(webtest.Handoff("d", "openai:big", []webtest.ModelUse{{Model: "big", Prompt: 1000, Completion: 100}},
		[]webtest.ModelUse{{Model: "unpriced", Prompt: 50, Completion: 5}, {Prompt: 10, Completion: 1}})))
	d.Price(table.Run("openai:big"), table.Run("openai:big"))
	if m := d.Pairs[1].B.Cost; !unpriced(m, usd(10, 1, 10, 30), prices.Format(usd(10, 1, 10, 30))+" + no price for unpriced") {
		t.Errorf("a call of an unpriced model in a priced run: %+v, want it unpriced (a call naming none at the run's price)", m)
	}
	if m := d.Totals[1].Cost; !unpriced(m, rootA+usd(10, 1, 10, 30), prices.Format(rootA+usd(10, 1, 10, 30))+" + no price for unpriced") {
		t.Errorf("its total: %+v", m)
	}

	s := story.Compare(a, a)
	s.Price(table.Run("scripted"), table.Run("scripted"))
	if m := s.Totals[0].Cost; m == nil || m.USD != 0 || m.Text != "scripted: $0" {
		t.Errorf("a scripted run's total = %+v, want scripted: $0", m)
	}
}
