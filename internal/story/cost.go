package story

import "github.com/baton-dev/baton/internal/prices"

// Money is what model calls cost: USD in US dollars, and Text as the pages write it ("$0.0123",
// "scripted: $0", "$0.0123 + no price for gpt-5"; prices.Sum.Text). Unpriced names the models
// of calls the price table has no price for: then USD is what the other calls cost, not a total.
type Money struct {
	USD      float64  `json:"usd"`
	Text     string   `json:"text"`
	Unpriced []string `json:"unpriced,omitempty"`
}

// Total is one run's side of a comparison: the tokens of all its turns and what they cost.
type Total struct {
	Tokens int    `json:"tokens"`
	Cost   *Money `json:"cost,omitempty"` // nil when a call that named no model has no price
}

// Price prices the compared turns' model calls, A's by pa and B's by pb, each call by the model
// it named (by its run's model when it named none; unpriced when the model it named has no
// price, prices.Run.Call): it sets each turn's Cost and the Totals'.
func (c *Comparison) Price(pa, pb prices.Run) {
	sums := [2]prices.Sum{pa.Sum(), pb.Sum()}
	for _, p := range c.Pairs {
		for i, side := range [2]struct {
			t *Turn
			p prices.Run
		}{{p.A, pa}, {p.B, pb}} {
			if side.t == nil {
				continue
			}
			// Sums are linear in tokens: a model's calls, added as one, cost what they do one by one.
			sum := side.p.Sum()
			for _, m := range side.t.Models {
				sum.Add(side.p.Call(m.Model), m.PromptTokens, m.CompletionTokens)
				sums[i].Add(side.p.Call(m.Model), m.PromptTokens, m.CompletionTokens)
			}
			side.t.Cost = money(sum)
		}
	}
	c.Totals[0].Cost, c.Totals[1].Cost = money(sums[0]), money(sums[1])
}

func money(s prices.Sum) *Money {
	usd, ok := s.Cost()
	if !ok && len(s.Unpriced()) == 0 {
		return nil
	}
	return &Money{USD: usd, Text: s.Text(), Unpriced: s.Unpriced()}
}
