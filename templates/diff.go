package templates

import (
	"fmt"
	"net/url"
	"slices"

	"github.com/a-h/templ"

	"github.com/baton-dev/baton/internal/prices"
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

// turnTokens is the tokens cell of a pair: each side's tokens and, when its model has a price
// (ra prices A's calls, rb B's), what they cost.
func turnTokens(p story.Pair, ra, rb prices.Run) string {
	side := func(t *story.Turn, r prices.Run) string {
		if t == nil {
			return "-"
		}
		if c := r.Call(t.Model).Text(t.PromptTokens, t.CompletionTokens); c != "" {
			return itoa(int64(t.Tokens)) + " (" + c + ")"
		}
		return itoa(int64(t.Tokens))
	}
	return side(p.A, ra) + " | " + side(p.B, rb)
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
