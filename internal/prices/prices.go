// Package prices is what model calls cost in US dollars: a table of prices per million prompt
// and completion tokens, a default one for common models, a user's file merged over it, and the
// one formatter of money the pages and commands use. Baton's own; it does no I/O but Load.
package prices

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"sort"
	"strings"
)

// Price is a model's price in US dollars per million tokens: Input for the prompt, Output for
// the completion.
type Price struct {
	Input  float64 `json:"input"`
	Output float64 `json:"output"`
}

// Table maps model names (without a provider prefix, e.g. "gpt-4o-mini") to their prices. A
// dated variant ("gpt-4o-mini-2024-07-18", "claude-3-5-haiku-latest") takes the price of the
// longest name it starts with.
type Table map[string]Price

// Default returns a new copy of the default table: providers' list prices of common models for
// standard (not batch, not cached) tokens, checked on 2026-12-05 (docs/guide.md lists each with
// its source). Prices change; a user sets their own with a file (Load).
//
//   - Anthropic: docs.anthropic.com/en/docs/about-claude/pricing, Anthropic's own page.
//   - DeepSeek: api-docs.deepseek.com/quick_start/pricing, DeepSeek's own page: the price from
//     2025-09-05 on, input at the cache-miss rate (a cache hit, $0.07, is not told apart).
//   - OpenAI: not checked on OpenAI's own page (not reachable from where this was checked); each
//     agrees with secondary sources quoting platform.openai.com/docs/pricing (the openai_responses
//     package's table "last updated on 2025-06-03"; llmcalc.app and aimodelcalc, 2026).
//   - Google: not checked on Google's own page either; secondary sources quoting
//     ai.google.dev/pricing (morphllm.com, deploybase.ai, 2026). gemini-2.5-pro's is its price
//     for prompts up to 200k tokens (longer prompts cost more, which one price cannot say).
func Default() Table {
	return Table{
		"gpt-4o":                {Input: 2.5, Output: 10},
		"gpt-4o-2024-05-13":     {Input: 5, Output: 15}, // the first gpt-4o, priced otherwise than its base
		"gpt-4o-mini":           {Input: 0.15, Output: 0.6},
		"gpt-4.1":               {Input: 2, Output: 8},
		"gpt-4.1-mini":          {Input: 0.4, Output: 1.6},
		"gpt-4.1-nano":          {Input: 0.1, Output: 0.4},
		"o3-mini":               {Input: 1.1, Output: 4.4},
		"claude-opus-4-1":       {Input: 15, Output: 75},
		"claude-opus-4":         {Input: 15, Output: 75},
		"claude-sonnet-4":       {Input: 3, Output: 15},
		"claude-3-7-sonnet":     {Input: 3, Output: 15},
		"claude-3-5-sonnet":     {Input: 3, Output: 15},
		"claude-3-5-haiku":      {Input: 0.8, Output: 4},
		"claude-3-haiku":        {Input: 0.25, Output: 1.25},
		"deepseek-chat":         {Input: 0.56, Output: 1.68},
		"gemini-2.5-pro":        {Input: 1.25, Output: 10},
		"gemini-2.5-flash":      {Input: 0.3, Output: 2.5},
		"gemini-2.5-flash-lite": {Input: 0.1, Output: 0.4},
		"gemini-2.0-flash":      {Input: 0.1, Output: 0.4},
	}
}

// Load returns Default with the prices of the JSON file at path merged over it:
// {"model-name": {"input": 2.5, "output": 10}}, dollars per million tokens. The error says what
// to fix in the file.
func Load(path string) (Table, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("prices: %w", err)
	}
	own, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("prices file %s: %w", path, err)
	}
	t := Default()
	for name, p := range own {
		t[name] = p
	}
	return t, nil
}

// Parse reads a prices file (see Load) without merging it over Default.
func Parse(data []byte) (Table, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var raw map[string]*struct {
		Input  *float64 `json:"input"`
		Output *float64 `json:"output"`
	}
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf(`want a JSON object {"model-name": {"input": 2.5, "output": 10}} in dollars per million tokens: %w`, err)
	}
	t := make(Table, len(raw))
	for name, p := range raw {
		switch {
		case strings.TrimSpace(name) == "":
			return nil, fmt.Errorf("a model name is empty")
		case p == nil || p.Input == nil || p.Output == nil:
			return nil, fmt.Errorf(`model %q: give both "input" and "output", in dollars per million tokens`, name)
		case !valid(*p.Input) || !valid(*p.Output):
			return nil, fmt.Errorf("model %q: prices must be numbers of 0 or more", name)
		}
		t[name] = Price{Input: *p.Input, Output: *p.Output}
	}
	return t, nil
}

// dated says whether what follows a base name is a date or "latest" (gpt-4o-2024-08-06,
// claude-3-5-haiku-20241022, claude-3-5-haiku-latest), not another model: gpt-4o-audio-preview
// and claude-opus-4-5-20251101 (a later model, not a dated claude-opus-4) are priced otherwise.
func dated(rest string) bool {
	digits := func(s string) bool {
		for _, c := range s {
			if c < '0' || c > '9' {
				return false
			}
		}
		return s != ""
	}
	switch len(rest) {
	case 8: // 20241022
		return digits(rest)
	case 10: // 2024-08-06
		return rest[4] == '-' && rest[7] == '-' && digits(rest[:4]) && digits(rest[5:7]) && digits(rest[8:])
	}
	return rest == "latest"
}

func valid(f float64) bool { return f >= 0 && !math.IsInf(f, 0) && !math.IsNaN(f) }

// Rate is what one run's model calls cost. Its zero value is an unknown model: no money shown.
type Rate struct {
	Price
	Known bool   // the model has a price
	Free  bool   // the calls were scripted or replayed from a recording: they cost $0
	Model string // of a call that named a model the table has no price for: "no price for Model"
}

// For returns the rate of a run's model as traces.Run.Model names it: "openai:gpt-4o-mini"
// (the provider prefix is dropped, a dated variant matches its base by the longest prefix),
// "scripted", or "replay of ..." (a call's model named "replay" replayed a recorded reply). A
// fork ("fork of ...") replays some calls and runs others on a live model, which its name does
// not tell apart: it is unknown (its calls' own names do tell them apart, see Run), as is a
// model the table has no price for. t may be nil.
func (t Table) For(model string) Rate {
	model = strings.TrimSpace(model)
	switch {
	case model == "scripted", model == "replay", strings.HasPrefix(model, "replay of "):
		return Rate{Known: true, Free: true}
	case model == "", strings.HasPrefix(model, "fork of "):
		return Rate{}
	}
	if i := strings.LastIndexByte(model, ':'); i >= 0 {
		model = model[i+1:]
	}
	if p, ok := t[model]; ok {
		return Rate{Price: p, Known: true}
	}
	names := make([]string, 0, len(t))
	for name := range t {
		names = append(names, name)
	}
	// Longest first, so that gpt-4o-mini-2024-07-18 is gpt-4o-mini, not gpt-4o.
	sort.Slice(names, func(i, j int) bool { return len(names[i]) > len(names[j]) })
	for _, name := range names {
		if rest, ok := strings.CutPrefix(model, name+"-"); ok && dated(rest) {
			return Rate{Price: t[name], Known: true}
		}
	}
	return Rate{}
}

// Run is how one run's model calls are priced: each call at the rate of the model it named
// (eino's model.Config.Model, which an attached app's provider reports), unpriced when the table
// has no price for that model (never guessed at another model's price), and a call that named
// none at the run's model's. A scripted or replayed run's calls cost $0 whatever they are named.
// The zero Run prices nothing.
type Run struct {
	table Table
	rate  Rate
}

// Run returns the pricing of a run whose model traces.Run.Model names (see For).
func (t Table) Run(model string) Run { return Run{table: t, rate: t.For(model)} }

// Call returns the rate of one of the run's model calls, named model ("" when it named none): a
// model with no price is unknown, named in Rate.Model (without a table, the zero Run's, no call
// is priced and none is named).
func (r Run) Call(model string) Rate {
	if r.rate.Free || model == "" {
		return r.rate
	}
	own := r.table.For(model)
	if own.Known || r.table == nil {
		return own
	}
	return Rate{Model: strings.TrimSpace(model)}
}

// Sum returns an empty sum of the run's calls.
func (r Run) Sum() Sum { return Sum{base: r.rate} }

// Sum adds up what model calls cost, each at its own rate. Its zero value sums calls of a run
// whose model has no price.
type Sum struct {
	base            Rate // the run's, which says what a sum of no calls costs
	usd             float64
	calls, unpriced int
	models          []string // the unpriced calls' models (Rate.Model), sorted; shared by copies, never changed in place
	paid            bool
}

// Add adds a call's prompt and completion tokens at rate r.
func (s *Sum) Add(r Rate, prompt, completion int) {
	s.calls++
	usd, ok := r.Cost(prompt, completion)
	if !ok {
		s.unpriced++
		if i, found := slices.BinarySearch(s.models, r.Model); r.Model != "" && !found {
			s.models = slices.Insert(slices.Clip(s.models), i, r.Model) // a copy: an older copy of s keeps its own
		}
		return
	}
	s.usd += usd
	s.paid = s.paid || !r.Free
}

// Unpriced returns the models of the calls the table has no price for, sorted (those that named
// a model; a call that named none, of a run whose model has no price, is unpriced unnamed).
func (s Sum) Unpriced() []string { return s.models }

// Cost returns the sum in dollars; ok is false when a call's model has no price (a part is not a
// total: usd is then that of the priced calls).
func (s Sum) Cost() (usd float64, ok bool) {
	if s.calls == 0 {
		return s.base.Cost(0, 0)
	}
	return s.usd, s.unpriced == 0
}

// Text is the sum as Rate.Text writes a cost. With unpriced calls it is no total: "no price for
// gpt-5" (after what the priced calls cost, "$0.0123 + no price for gpt-5"), "" when they named
// no model.
func (s Sum) Text() string {
	usd, ok := s.Cost()
	switch {
	case !ok && len(s.models) == 0:
		return ""
	case !ok && s.paid:
		return Format(usd) + " + no price for " + strings.Join(s.models, ", ")
	case !ok:
		return "no price for " + strings.Join(s.models, ", ")
	case !s.paid && (s.calls > 0 || s.base.Free):
		return "scripted: $0"
	}
	return Format(usd)
}

// Cost returns what prompt and completion tokens cost at r, in dollars; ok is false when r is
// unknown.
func (r Rate) Cost(prompt, completion int) (usd float64, ok bool) {
	if !r.Known {
		return 0, false
	}
	if r.Free {
		return 0, true
	}
	return (float64(prompt)*r.Input + float64(completion)*r.Output) / 1e6, true
}

// Text is the cost of prompt and completion tokens at r as the pages show it: "$0.0123",
// "scripted: $0" for free calls, "no price for gpt-5" for a call's model the table has no price
// for, "" for an unknown model otherwise (never a wrong figure).
func (r Rate) Text(prompt, completion int) string {
	usd, ok := r.Cost(prompt, completion)
	switch {
	case !ok && r.Model != "":
		return "no price for " + r.Model
	case !ok:
		return ""
	case r.Free:
		return "scripted: $0"
	}
	return Format(usd)
}

// Format writes dollars for a reader: two decimals from a dollar on, else four significant
// digits at most ("$0.000375"), "$0" for nothing.
func Format(usd float64) string {
	switch {
	case usd == 0:
		return "$0"
	case usd >= 1:
		return fmt.Sprintf("$%.2f", usd)
	}
	s := fmt.Sprintf("%.4g", usd)
	if strings.ContainsRune(s, 'e') {
		s = fmt.Sprintf("%.8f", usd)
		s = strings.TrimRight(s, "0")
	}
	return "$" + s
}
