package story

import (
	"fmt"
	"strings"
)

// handOff begins a story's line for a transfer: what a diff names as the first different handoff.
const handOff = string(HandsOff) + " "

// TextDiff says how the story text got differs from want: the first different handoff when the routes differ,
// else the first different line, then the whole diff, line by line ("-" wanted, "+" got).
func TextDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	wi, gi := handoffs(w), handoffs(g)
	k := 0
	for k < len(wi) && k < len(gi) && w[wi[k]] == g[gi[k]] {
		k++
	}
	if k < len(wi) || k < len(gi) {
		fmt.Fprintf(&b, "first different handoff (handoff %d):\n  want: %s\n  got:  %s\n", k+1, lineAt(w, wi, k), lineAt(g, gi, k))
	} else {
		i := 0
		for i < len(w) && i < len(g) && w[i] == g[i] {
			i++
		}
		fmt.Fprintf(&b, "first difference, at line %d:\n  want: %s\n  got:  %s\n", i+1, lineAt(w, nil, i), lineAt(g, nil, i))
	}
	b.WriteString("the whole story (- wanted, + got):\n")
	for _, l := range lineDiff(w, g) {
		b.WriteString(l + "\n")
	}
	return b.String()
}

// handoffs returns the indexes of a story's handoff lines.
func handoffs(lines []string) []int {
	var out []int
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), handOff) {
			out = append(out, i)
		}
	}
	return out
}

// lineAt returns the k-th line of a story (the k-th of idx, when given), with the turn it is in.
func lineAt(lines []string, idx []int, k int) string {
	i := k
	if idx != nil {
		if k >= len(idx) {
			return "(no more handoffs)"
		}
		i = idx[k]
	}
	if i >= len(lines) {
		return "(the story ends)"
	}
	for j := i; j >= 0; j-- {
		if l := lines[j]; j < i && len(l) > 0 && l[0] >= '1' && l[0] <= '9' {
			head, _, _ := strings.Cut(l, ", fed")
			return strings.TrimSpace(lines[i]) + "   [in turn " + head + "]"
		}
	}
	return strings.TrimSpace(lines[i])
}

// lineDiff is the shortest edit from want to got, a line each: "  " kept, "- " dropped, "+ " added.
func lineDiff(want, got []string) []string {
	var out []string
	for _, s := range align(want, got) {
		switch {
		case s.a >= 0 && s.b >= 0:
			out = append(out, "  "+want[s.a])
		case s.a >= 0:
			out = append(out, "- "+want[s.a])
		default:
			out = append(out, "+ "+got[s.b])
		}
	}
	return out
}
