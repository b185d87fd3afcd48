package web_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/baton-dev/baton/internal/webtest"
	"github.com/baton-dev/baton/traces"
	"github.com/baton-dev/baton/web"
)

// TestTimelineSearchAndEchoes checks on a recorded real supervisor run that rows carry their
// full content for search ("For context" is in agents' inputs, not in any summary), that an
// input's search text holds only what it adds to the agent's previous input, and that every
// message event repeating a call's reply is folded into that call's row.
func TestTimelineSearchAndEchoes(t *testing.T) {
	tr := webtest.RecordedSupervisor(t)
	rows := web.NewTimeline(tr, 0)
	context, inSummary, echoes := 0, 0, 0
	for _, r := range rows {
		if strings.Contains(r.Search, "for context") {
			context++
		}
		if strings.Contains(strings.ToLower(r.Summary), "for context") {
			inSummary++
		}
		if r.Search != strings.ToLower(r.Search) {
			t.Errorf("row #%d: search text is not lower-cased", r.Seq)
		}
		e := tr.Events[r.Seq-1]
		if r.EchoOf == 0 {
			continue
		}
		echoes++
		c := tr.Events[r.EchoOf-1]
		if e.Kind != traces.KindMessage || c.Agent != e.Agent || c.Seq >= e.Seq ||
			c.Kind != traces.KindModelFinished && c.Kind != traces.KindToolFinished {
			t.Errorf("row #%d %s folds into #%d %s of %s", r.Seq, e.Kind, c.Seq, c.Kind, c.Agent)
		}
	}
	if context == 0 || inSummary != 0 {
		t.Errorf("\"for context\" is in %d rows' search text and %d summaries, want some and none", context, inSummary)
	}
	messages := 0
	for _, e := range tr.Events {
		if e.Kind == traces.KindMessage {
			messages++
		}
	}
	if echoes == 0 || echoes > messages {
		t.Errorf("%d of %d message events folded", echoes, messages)
	}

	// The supervisor's second model call repeats its first input: its search text must not.
	var starts []web.Row
	for _, r := range rows {
		if r.Kind == traces.KindModelStarted && r.Agent == "supervisor" {
			starts = append(starts, r)
		}
	}
	if len(starts) < 2 || strings.Contains(starts[1].Search, "decision rule") || !strings.Contains(starts[0].Search, "decision rule") {
		t.Errorf("the supervisor's model calls' search texts repeat its instruction or lack it: %d calls", len(starts))
	}
}

// FuzzOneLine: the fast path of oneLine returns what folding the whitespace returns.
func FuzzOneLine(f *testing.F) {
	for _, s := range []string{"", "a b", " a", "a ", "a  b", "a\tb", "a\u00a0b", "é b", "a\u2028b", "x\x85y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := web.OneLine(s), strings.Join(strings.Fields(s), " "); len(s) <= 1280 && got != want {
			t.Fatalf("oneLine(%q) = %q, want %q", s, got, want)
		}
	})
}

// A model input that branches off the one before (all but its last message kept, two added) is
// searched for what it adds alone, as one that extends the one before: a run of such calls has
// search text linear in its messages, not quadratic, and each message is found in the row that
// added it.
func TestTimelineSearchOfBranchingInputs(t *testing.T) {
	msg := func(k int) traces.Message { return traces.Message{Role: "user", Content: fmt.Sprintf("word%03d", k)} }
	tr := traces.Trace{Run: traces.Run{ID: "r", Flow: "f"}, Agents: []traces.Agent{{Name: "a", Kind: traces.AgentChatModel}},
		Events: []traces.Event{{Seq: 1, Kind: traces.KindRunStarted, Run: &traces.RunMark{Status: traces.StatusRunning}}}}
	input := []traces.Message{msg(0), msg(1)}
	for call := range 50 {
		tr.Events = append(tr.Events, traces.Event{Seq: int64(call + 2), Kind: traces.KindModelStarted, Agent: "a",
			Model: &traces.ModelCall{ID: fmt.Sprint(call), Input: input}})
		// The next input: a copy of all but this one's last message, and two more.
		input = append(slices.Clone(input[:len(input)-1]), msg(2*call+2), msg(2*call+3))
	}
	rows := web.NewTimeline(tr, 0)
	for i, r := range rows[1:] {
		if n := strings.Count(r.Search, "word"); n > 2 {
			t.Errorf("#%d's search text holds %d messages, want the 2 it added", r.Seq, n)
		}
		if w := msg(2*i + 1).Content; !strings.Contains(r.Search, w) {
			t.Errorf("#%d's search text has not %s, which it added: %q", r.Seq, w, r.Search)
		}
	}
}
