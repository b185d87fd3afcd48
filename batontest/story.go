package batontest

import (
	"fmt"
	"slices"
	"strings"

	"github.com/baton-dev/baton/internal/lint"
	"github.com/baton-dev/baton/traces"
)

// handOff begins a story's line for a transfer: what a diff names as the first different handoff.
const handOff = "hands off to "

// Story is the run's handoff story, the text a golden file keeps: the route, then each agent's
// turn (how control reached it, what it was fed by origin, the tools it called, what it said,
// where it handed off), then the session and the final answer. Times, ids and token counts are
// left out, so the story of a replayed run equals the recorded one's.
func (r *Run) Story() string {
	var b strings.Builder
	status, errMsg := r.Status()
	fmt.Fprintf(&b, "route: %s\nstatus: %s", strings.ReplaceAll(r.Route(), ">", " > "), status)
	if errMsg != "" {
		fmt.Fprintf(&b, " (%s)", clip(errMsg, 120))
	}
	b.WriteString("\n")
	turn, handedBy := 0, map[string]string{} // the source of the latest transfer to each agent
	for _, e := range r.Trace.Events {
		switch e.Kind {
		case traces.KindAgentStarted:
			turn++
			how := reached(e)
			if how == "by transfer" && handedBy[e.Agent] != "" {
				how += " from " + handedBy[e.Agent]
			}
			fmt.Fprintf(&b, "\n%d. %s, %s, fed %s\n", turn, e.Agent, how, fed(e.AgentRun))
		case traces.KindToolStarted:
			if e.Tool != nil && e.Tool.Name != "transfer_to_agent" {
				fmt.Fprintf(&b, "   calls %s(%s)\n", e.Tool.Name, clip(e.Tool.Arguments, 60))
			}
		case traces.KindModelFinished:
			if e.Model != nil && e.Model.Output != nil && e.Model.Output.Content != "" {
				fmt.Fprintf(&b, "   says %q\n", clip(e.Model.Output.Content, 60))
			}
		case traces.KindTransfer:
			if t := e.Transfer; t != nil {
				handedBy[t.To] = t.From
				fmt.Fprintf(&b, "   %s%s (%s)", handOff, t.To, t.Mode)
				if t.Outcome == traces.TransferFailed {
					b.WriteString(", refused")
				}
				b.WriteString("\n")
			}
		case traces.KindAgentToolEnter:
			if c := e.AgentTool; c != nil {
				fmt.Fprintf(&b, "   runs %s as a tool\n", c.Callee)
			}
		case traces.KindExit:
			b.WriteString("   exits the run\n")
		case traces.KindBreakLoop:
			b.WriteString("   breaks its loop\n")
		case traces.KindInterrupted:
			b.WriteString("   interrupts the run\n")
		case traces.KindResumed:
			b.WriteString("   (resumed)\n")
		case traces.KindError:
			if e.Error != nil {
				fmt.Fprintf(&b, "   error: %s\n", clip(e.Error.Message, 100))
			}
		}
	}
	session := r.Session()
	if len(session) > 0 {
		b.WriteString("\nsession:\n")
		keys := make([]string, 0, len(session))
		for k := range session {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "   %s = %s\n", k, clip(session[k], 80))
		}
	}
	if author, text := r.Answer(); author != "" {
		fmt.Fprintf(&b, "\nanswer by %s: %q\n", author, clip(text, 200))
	}
	return b.String()
}

// reached says how control reached an agent's turn.
func reached(e traces.Event) string {
	if e.AgentRun == nil {
		return "started"
	}
	switch e.AgentRun.Via {
	case "run":
		return "as the root"
	case "agenttool":
		return "as a tool"
	case "":
		return "started"
	}
	return "by " + e.AgentRun.Via
}

// fed says how many messages an agent was fed, by origin.
func fed(run *traces.AgentRun) string {
	if run == nil || len(run.Input) == 0 {
		return "nothing"
	}
	var origins []string
	counts := map[string]int{}
	for _, m := range run.Input {
		o := lint.Origin(m)
		if counts[o] == 0 {
			origins = append(origins, o)
		}
		counts[o]++
	}
	parts := make([]string, len(origins))
	for i, o := range origins {
		parts[i] = fmt.Sprintf("%d from %s", counts[o], o)
	}
	return strings.Join(parts, ", ")
}

func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// storyDiff says how got differs from want: the first different handoff when the routes differ,
// else the first different line, then the whole diff, line by line ("-" wanted, "+" got).
func storyDiff(want, got string) string {
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
	n, m := len(want), len(got)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if want[i] == got[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []string
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && want[i] == got[j]:
			out = append(out, "  "+want[i])
			i, j = i+1, j+1
		case j < m && (i == n || lcs[i][j+1] >= lcs[i+1][j]):
			out = append(out, "+ "+got[j])
			j++
		default:
			out = append(out, "- "+want[i])
			i++
		}
	}
	return out
}
