package story

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/baton-dev/baton/traces"
)

// Comparison is two runs' turns aligned by agent and handoff, not by event number.
type Comparison struct {
	Pairs []Pair `json:"turns"`
	// First is where the runs first part, in the aligned order; nil when they do not. What the
	// runs did (their turns, then their outcome) comes first: a difference in tokens alone is
	// First only when they did the same.
	First *Divergence `json:"first_divergence,omitempty"`
	// Totals are each run's tokens and, once priced (Price), what they cost: A's, then B's.
	Totals [2]Total `json:"totals"`
}

// Pair is a turn of run A and its counterpart in run B; either is nil when the other run has no
// such turn there (a different route).
type Pair struct {
	A *Turn `json:"a,omitempty"`
	B *Turn `json:"b,omitempty"`
	// Turn is each turn's number in its run, from 1 (0 for none).
	Turn [2]int `json:"turn"`
	// Differences says what differs between the two, in the order the turns did it.
	Differences []Divergence `json:"differences,omitempty"`
}

// Divergence is one place where the runs differ.
type Divergence struct {
	// What is "routing decision" (a handoff, or a turn only one run has), "model input" (what the
	// turn was fed), "tool call", "tool result", "reply", "outcome", or "tokens" (what the turn's
	// calls used, and so cost: their tokens, or the models they named).
	What string `json:"what"`
	// Turn is the turn's number in each run, from 1 (0 for none); Seq the event in each (0 for none).
	Turn [2]int   `json:"turn"`
	Seq  [2]int64 `json:"seq"`
	// A and B say what each run did there.
	A string `json:"a"`
	B string `json:"b"`
}

// Same reports whether the runs did not differ.
func (c Comparison) Same() bool { return c.First == nil }

// Compare aligns a's and b's turns (the longest common sequence of their keys: agent, and how
// control reached it) and says how each aligned pair differs.
func Compare(a, b Story) Comparison {
	var c Comparison
	var tokens *Divergence // the first difference in tokens alone
	ka, kb := keys(a.Turns), keys(b.Turns)
	for _, op := range align(ka, kb) {
		p := Pair{}
		var ia, ib int
		if op.a >= 0 {
			p.A, ia = &a.Turns[op.a], op.a+1
		}
		if op.b >= 0 {
			p.B, ib = &b.Turns[op.b], op.b+1
		}
		p.Turn = [2]int{ia, ib}
		for i, t := range [2]*Turn{p.A, p.B} {
			if t != nil {
				c.Totals[i].Tokens += t.Tokens
			}
		}
		p.Differences = differences(p.A, p.B, p.Turn)
		for i := range p.Differences {
			switch d := &p.Differences[i]; {
			case d.What == whatTokens:
				tokens = cmp.Or(tokens, d)
			case c.First == nil:
				c.First = d
			}
		}
		c.Pairs = append(c.Pairs, p)
	}
	if c.First == nil && (a.Status != b.Status || a.Answer != b.Answer) {
		c.First = &Divergence{What: "outcome", A: fmt.Sprintf("%s: %q", a.Status, Clip(a.Answer, 80)), B: fmt.Sprintf("%s: %q", b.Status, Clip(b.Answer, 80))}
	}
	c.First = cmp.Or(c.First, tokens)
	return c
}

const whatTokens = "tokens"

// tokensText says what a turn's calls used: "812 tok (prompt 700, completion 112)", and by model
// when the models they named differ from the other turn's.
func tokensText(t, other *Turn) string {
	s := fmt.Sprintf("%d tok (prompt %d, completion %d)", t.Tokens, t.PromptTokens, t.CompletionTokens)
	if slices.Equal(modelNames(t.Models), modelNames(other.Models)) {
		return s
	}
	var by []string
	for _, m := range t.Models {
		by = append(by, fmt.Sprintf("%s %d+%d", cmp.Or(m.Model, "unnamed"), m.PromptTokens, m.CompletionTokens))
	}
	return s + " by model: " + cmp.Or(strings.Join(by, ", "), "none")
}

func keys(turns []Turn) []string {
	out := make([]string, len(turns))
	for i, t := range turns {
		out[i] = t.Key()
	}
	return out
}

// differences says how a turn and its counterpart differ: what they were fed, then their steps
// one by one, then how they ended.
func differences(a, b *Turn, turn [2]int) []Divergence {
	d := func(what string, sa, sb int64, da, db string) Divergence {
		return Divergence{What: what, Turn: turn, Seq: [2]int64{sa, sb}, A: da, B: db}
	}
	switch {
	case a == nil:
		return []Divergence{d("routing decision", 0, b.Seq, "no such turn", b.Key())}
	case b == nil:
		return []Divergence{d("routing decision", a.Seq, 0, a.Key(), "no such turn")}
	}
	var out []Divergence
	if fa, fb := fedLines(a.Fed), fedLines(b.Fed); !slices.Equal(fa, fb) {
		out = append(out, d("model input", a.Seq, b.Seq, firstOnly(fa, fb), firstOnly(fb, fa)))
	}
	// Steps align by what they are, so that one step more on one side is one difference.
	stepKeys := func(steps []Step) []string {
		out := make([]string, len(steps))
		for i, st := range steps {
			out[i] = string(st.Kind) + " " + st.Text
		}
		return out
	}
	// Between steps both have, the steps only one has are paired by kind, in order: a reply or a
	// handoff that changed is one difference, not two.
	var onlyA, onlyB []Step
	flush := func() {
		used := make([]bool, len(onlyB))
		for _, sa := range onlyA {
			var sb Step
			for j, x := range onlyB {
				if !used[j] && x.Kind == sa.Kind {
					sb, used[j] = x, true
					break
				}
			}
			out = append(out, stepDifference(d, sa, sb))
		}
		for j, sb := range onlyB {
			if !used[j] {
				out = append(out, stepDifference(d, Step{}, sb))
			}
		}
		onlyA, onlyB = onlyA[:0], onlyB[:0]
	}
	for _, al := range align(stepKeys(a.Steps), stepKeys(b.Steps)) {
		switch {
		case al.a >= 0 && al.b >= 0:
			flush()
			if sa, sb := a.Steps[al.a], b.Steps[al.b]; sa.Result != sb.Result {
				out = append(out, d("tool result", sa.Seq, sb.Seq, StepLine(sa)+" → "+Clip(sa.Result, 100), StepLine(sb)+" → "+Clip(sb.Result, 100)))
			}
		case al.a >= 0:
			onlyA = append(onlyA, a.Steps[al.a])
		default:
			onlyB = append(onlyB, b.Steps[al.b])
		}
	}
	flush()
	if a.Outcome != b.Outcome {
		out = append(out, d("outcome", a.Seq, b.Seq, a.Outcome, b.Outcome))
	}
	// Tokens differ when the text does not, and the models named price them: either changes the cost.
	if a.Tokens != b.Tokens || a.PromptTokens != b.PromptTokens || a.CompletionTokens != b.CompletionTokens || !slices.Equal(a.Models, b.Models) {
		out = append(out, d(whatTokens, a.Seq, b.Seq, tokensText(a, b), tokensText(b, a)))
	}
	return out
}

// stepDifference names what differs between a step of A and one of B (either may be missing).
func stepDifference(d func(what string, sa, sb int64, da, db string) Divergence, sa, sb Step) Divergence {
	kind := cmp.Or(sa.Kind, sb.Kind)
	what := map[StepKind]string{HandsOff: "routing decision", Calls: "tool call", Says: "reply", Fails: "error"}[kind]
	return d(cmp.Or(what, string(kind)), sa.Seq, sb.Seq, stepText(sa), stepText(sb))
}

func stepText(s Step) string {
	if s.Kind == "" {
		return "nothing"
	}
	return StepLine(s)
}

// fedLines are a turn's input messages as a diff compares them: origin and text.
func fedLines(msgs []traces.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = Origin(m) + ": " + m.Content
		for _, c := range m.ToolCalls {
			out[i] += " [calls " + c.Name + " " + c.Arguments + "]"
		}
	}
	return out
}

// firstOnly is the first of lines that others lack, clipped, or what lines lack.
func firstOnly(lines, others []string) string {
	for _, l := range lines {
		if !slices.Contains(others, l) {
			return Clip(l, 120)
		}
	}
	for _, l := range others {
		if !slices.Contains(lines, l) {
			return "lacks " + Clip(l, 112)
		}
	}
	return fmt.Sprintf("%d messages", len(lines))
}

// step of an alignment: indexes into the two sequences, -1 for a gap.
type step struct{ a, b int }

// align is the longest common subsequence alignment of a and b, gaps included, in order.
func align(a, b []string) []step {
	n, m := len(a), len(b)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []step
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			out = append(out, step{i, j})
			i, j = i+1, j+1
		case j < m && (i == n || lcs[i][j+1] > lcs[i+1][j]):
			out = append(out, step{-1, j})
			j++
		default:
			out = append(out, step{i, -1})
			i++
		}
	}
	return out
}

// FedLine is one message of a message-level diff of what two turns were fed.
type FedLine struct {
	Op     string // "=" in both, "-" only A's, "+" only B's
	Origin string // where the message came from (Origin)
	Text   string
}

// FedDiff is what turns a and b were fed, message by message, aligned: the messages both had,
// and those only one had.
func FedDiff(a, b []traces.Message) []FedLine {
	la, lb := fedLines(a), fedLines(b)
	var out []FedLine
	for _, s := range align(la, lb) {
		switch {
		case s.a >= 0 && s.b >= 0:
			out = append(out, FedLine{"=", Origin(a[s.a]), a[s.a].Content})
		case s.a >= 0:
			out = append(out, FedLine{"-", Origin(a[s.a]), a[s.a].Content})
		default:
			out = append(out, FedLine{"+", Origin(b[s.b]), b[s.b].Content})
		}
	}
	return out
}

func modelNames(ms []ModelUsage) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Model
	}
	return out
}
