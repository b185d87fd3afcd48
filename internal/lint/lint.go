// Package lint names the handoff bugs a trace shows: agents that bounce work back and forth, a
// request that never reached the agent it was handed to, context that balloons at a handoff, an
// exit swallowed at an AgentTool's boundary, and the like. Each rule has an id, a severity and a
// one-line explanation, and each finding points at the events that show it. Check runs the rules
// on a trace, whole or as recorded so far. Baton's own, not API: `baton lint` and the run page
// show its findings.
package lint

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/baton-dev/baton/traces"
)

// Severity ranks findings; `baton lint --fail-on` fails on those at or above one.
type Severity int

// Severities, lowest first.
const (
	Info Severity = iota
	Warning
	Error
)

var severityNames = []string{"info", "warning", "error"}

func (s Severity) String() string { return severityNames[s] }

// ParseSeverity reads a severity's name.
func ParseSeverity(name string) (Severity, error) {
	if i := slices.Index(severityNames, name); i >= 0 {
		return Severity(i), nil
	}
	return 0, fmt.Errorf("unknown severity %q; want one of %s", name, strings.Join(severityNames, ", "))
}

// MarshalText writes the severity's name.
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads a severity's name.
func (s *Severity) UnmarshalText(b []byte) error {
	v, err := ParseSeverity(string(b))
	*s = v
	return err
}

// Finding is one rule's complaint about a trace.
type Finding struct {
	Rule     string   `json:"rule"`
	Severity Severity `json:"severity"`
	Message  string   `json:"message"`
	// Seqs are the events that show it, the one to look at first.
	Seqs   []int64  `json:"seqs"`
	Agents []string `json:"agents,omitempty"`
	// Tokens is what the problem cost, when a rule can say (a ping-pong's model calls).
	Tokens int `json:"tokens,omitempty"`
}

// Rule is one check over a trace.
type Rule struct {
	ID       string
	Severity Severity // by default
	Explain  string   // in a line: what it finds, and why that is a bug
	check    func(r *run, cfg Config) []Finding
}

// Rules returns every rule, in the order findings of one event are listed.
func Rules() []Rule { return slices.Clone(rules) }

// Config tunes the rules. The zero value of a field means its default (DefaultConfig).
type Config struct {
	// PingPongHops is how many transfers in a row, without progress between them (a tool's
	// result, a session value, an answer), make a ping-pong.
	PingPongHops int `json:"ping_pong_hops,omitempty"`
	// ContextGrowth is how many times its source's prompt a handoff's target's first prompt may
	// be before context-growth names it; prompts under ContextMinTokens are never named.
	ContextGrowth    float64 `json:"context_growth,omitempty"`
	ContextMinTokens int     `json:"context_min_tokens,omitempty"`
	// Severity overrides rules' severities, by rule id.
	Severity map[string]Severity `json:"severity,omitempty"`
	// Disable turns rules off, by id.
	Disable []string `json:"disable,omitempty"`
}

// DefaultConfig is the thresholds Check uses for fields left zero.
func DefaultConfig() Config {
	return Config{PingPongHops: 4, ContextGrowth: 3, ContextMinTokens: 1000}
}

func (c Config) withDefaults() Config {
	d := DefaultConfig()
	c.PingPongHops = cmp.Or(c.PingPongHops, d.PingPongHops)
	c.ContextGrowth = cmp.Or(c.ContextGrowth, d.ContextGrowth)
	c.ContextMinTokens = cmp.Or(c.ContextMinTokens, d.ContextMinTokens)
	return c
}

// ReadConfig reads a JSON file of Config's fields; a field it does not know is an error.
func ReadConfig(path string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, err
	}
	var c Config
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return Config{}, fmt.Errorf("lint config %s: %w", path, err)
	}
	for id := range c.Severity {
		if !known(id) {
			return Config{}, fmt.Errorf("lint config %s: severity of unknown rule %q", path, id)
		}
	}
	for _, id := range c.Disable {
		if !known(id) {
			return Config{}, fmt.Errorf("lint config %s: disable names unknown rule %q", path, id)
		}
	}
	if c.PingPongHops < 0 || c.ContextGrowth < 0 || c.ContextMinTokens < 0 {
		return Config{}, fmt.Errorf("lint config %s: thresholds must not be negative", path)
	}
	return c, nil
}

func known(id string) bool {
	return slices.ContainsFunc(rules, func(r Rule) bool { return r.ID == id })
}

// Check runs the rules cfg leaves on over tr and returns their findings, ordered by the first
// event each points at. A trace still being recorded gets the findings of what it holds so far.
func Check(tr traces.Trace, cfg Config) []Finding {
	cfg = cfg.withDefaults()
	r := newRun(tr)
	var out []Finding
	for _, rule := range rules {
		if slices.Contains(cfg.Disable, rule.ID) {
			continue
		}
		sev, ok := cfg.Severity[rule.ID]
		if !ok {
			sev = rule.Severity
		}
		for _, f := range rule.check(r, cfg) {
			f.Rule, f.Severity = rule.ID, sev
			out = append(out, f)
		}
	}
	slices.SortStableFunc(out, func(a, b Finding) int { return cmp.Compare(a.Seqs[0], b.Seqs[0]) })
	return out
}

// Worst returns the highest severity among findings, and false when there are none.
func Worst(findings []Finding) (Severity, bool) {
	if len(findings) == 0 {
		return 0, false
	}
	return slices.MaxFunc(findings, func(a, b Finding) int { return cmp.Compare(a.Severity, b.Severity) }).Severity, true
}

// Warnings is how many findings of warning or above Check names in tr with the default config:
// the count the run list shows and filters by.
func Warnings(tr traces.Trace) int { return CountWarnings(Check(tr, Config{})) }

// CountWarnings returns how many of findings are warnings or worse.
func CountWarnings(findings []Finding) int {
	n := 0
	for _, f := range findings {
		if f.Severity >= Warning {
			n++
		}
	}
	return n
}
