package web

import (
	"github.com/baton-dev/baton/internal/prices"
	"github.com/baton-dev/baton/traces"
)

// Option is a setting of a view beyond its trace.
type Option func(*settings)

type settings struct{ prices prices.Table }

// WithPrices prices a run's model calls by t: each call by the model it named (unpriced, "no
// price for MODEL", when t has none for it), else by the run's model (prices.Run). Without it a
// view shows tokens and no money.
func WithPrices(t prices.Table) Option { return func(s *settings) { s.prices = t } }

func settingsOf(opts []Option) settings {
	var s settings
	for _, o := range opts {
		o(&s)
	}
	return s
}

// pricingOf is how run's model calls are priced under opts: not at all (no money) without prices.
func pricingOf(run traces.Run, opts []Option) prices.Run {
	return settingsOf(opts).prices.Run(run.Model)
}

// costText is what model call m (a model.finished's) cost under p: "no price for gpt-5" when the
// model it named has no price, "" when it reported no usage or neither it nor the run named a
// priced model.
func costText(p prices.Run, m *traces.ModelCall) string {
	if m == nil || m.Usage == nil {
		return ""
	}
	return p.Call(m.Name).Text(m.Usage.PromptTokens, m.Usage.CompletionTokens)
}

// addCost adds what model call m (a model.finished's) cost under p to sum, when it reported usage.
func addCost(sum *prices.Sum, p prices.Run, m *traces.ModelCall) {
	if m != nil && m.Usage != nil {
		sum.Add(p.Call(m.Name), m.Usage.PromptTokens, m.Usage.CompletionTokens)
	}
}
