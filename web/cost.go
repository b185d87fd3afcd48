package web

import (
	"github.com/baton-dev/baton/internal/prices"
	"github.com/baton-dev/baton/traces"
)

// Option is a setting of a view beyond its trace.
type Option func(*settings)

type settings struct{ prices prices.Table }

// WithPrices prices a run's model calls by t, at the rate of the run's model (prices.Table.For
// traces.Run.Model). Without it a view shows tokens and no money.
func WithPrices(t prices.Table) Option { return func(s *settings) { s.prices = t } }

func settingsOf(opts []Option) settings {
	var s settings
	for _, o := range opts {
		o(&s)
	}
	return s
}

// rateOf is the rate of run's model calls under opts: unknown (no money) without prices.
func rateOf(run traces.Run, opts []Option) prices.Rate {
	return settingsOf(opts).prices.For(run.Model)
}

// costText is what a model call's usage costs at r, "" when r is unknown or u is nil.
func costText(r prices.Rate, u *traces.Usage) string {
	if u == nil {
		return ""
	}
	return r.Text(u.PromptTokens, u.CompletionTokens)
}

// usageSum adds up the tokens the model reported, prompt and completion apart: what they cost.
type usageSum struct{ prompt, completion int }

func (s *usageSum) add(u *traces.Usage) {
	if u != nil {
		s.prompt += u.PromptTokens
		s.completion += u.CompletionTokens
	}
}

func (s usageSum) text(r prices.Rate) string { return r.Text(s.prompt, s.completion) }
