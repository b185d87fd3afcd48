package templates

import (
	"fmt"
	"net/url"
	"slices"

	"github.com/a-h/templ"

	"github.com/baton-dev/baton/internal/story"
)

// diffURL is the page that diffs runs a and b.
func diffURL(a, b string) templ.SafeURL {
	return templ.URL("/diff?" + url.Values{"a": {a}, "b": {b}}.Encode())
}

func turnNum(n int) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprint(n)
}

func pairKey(p story.Pair) string {
	if p.A != nil {
		return p.A.Key()
	}
	return p.B.Key()
}

// pairSide is f of each turn of p, "A | B", "-" for a turn one run lacks.
func pairSide(p story.Pair, f func(*story.Turn) string) string {
	side := func(t *story.Turn) string {
		if t == nil {
			return "-"
		}
		return f(t)
	}
	return side(p.A) + " | " + side(p.B)
}

// turnTokens is the tokens cell of a pair: each side's tokens and, when its calls' models have
// prices (story.Comparison.Price), what they cost.
func turnTokens(p story.Pair) string {
	return pairSide(p, func(t *story.Turn) string { return tokensCost(t.Tokens, t.Cost) })
}

// totalTokens is the totals row's tokens cell: each run's tokens and what they cost.
func totalTokens(c story.Comparison) string {
	return tokensCost(c.Totals[0].Tokens, c.Totals[0].Cost) + " | " + tokensCost(c.Totals[1].Tokens, c.Totals[1].Cost)
}

func tokensCost(tokens int, cost *story.Money) string {
	if cost != nil {
		return itoa(int64(tokens)) + " (" + cost.Text + ")"
	}
	return itoa(int64(tokens))
}

func hasWhat(ds []story.Divergence, what string) bool {
	return slices.ContainsFunc(ds, func(d story.Divergence) bool { return d.What == what })
}

func fedClass(op string) string {
	switch op {
	case "-":
		return "a"
	case "+":
		return "b"
	}
	return "both"
}

func boolAttr(b bool) string { return fmt.Sprint(b) }
