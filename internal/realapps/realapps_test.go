package realapps_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/baton-dev/baton/internal/realapps"
	"github.com/baton-dev/baton/traces"
	"github.com/baton-dev/baton/web"
)

// Bounds of what Baton may cost an app and how late a run may end.
const (
	// stallBound is how much longer than without Baton an attached app may take, first query to
	// last event: far more than recording costs, far less than any wait for an event that
	// does not come.
	stallBound = time.Second
	// endBound is how long after the app saw its stream end Baton may end the run.
	endBound = time.Second
)

// TestRealApps runs every app in a process of its own, once without Baton and once per idiom
// attached to a Baton server of its own, each exiting right after its last event, and checks
// that Baton holds what the app saw.
func TestRealApps(t *testing.T) {
	for _, app := range realapps.Apps {
		t.Run(app.Name, func(t *testing.T) {
			t.Parallel()
			alone := runApp(t, app, realapps.Unattached, "")
			for _, idiom := range app.Idioms() {
				t.Run(string(idiom), func(t *testing.T) {
					base := startBaton(t)
					attached := runApp(t, app, idiom, base)
					t.Logf("first query to last event: %.0f ms attached, %.0f ms without Baton; process %s and %s",
						attached.journal.ElapsedMS, alone.journal.ElapsedMS, attached.wall.Round(time.Millisecond), alone.wall.Round(time.Millisecond))
					if msg := stall(alone.journal, attached.journal, func() realapps.Journal {
						return runApp(t, app, realapps.Unattached, "").journal
					}); msg != "" {
						t.Error(msg)
					}
					checkApp(t, alone.journal, attached.journal, settledRuns(t, base, len(app.Queries)))
				})
			}
		})
	}
}

// checkApp checks an attached app's journal against the same app's without Baton, and the runs
// Baton holds against the journal.
func checkApp(t *testing.T, alone, attached realapps.Journal, runs []traces.Trace) {
	t.Helper()
	if d := sameStreams(alone, attached); d != "" {
		t.Errorf("the app's own stream changed with Baton attached: %s", d)
	}
	paired := pairRuns(t, attached.Turns, runs)
	for i, turn := range attached.Turns {
		tr, ok := paired[i]
		if !ok {
			continue
		}
		checkTurn(t, fmt.Sprintf("query %d (%q)", i+1, turn.Query), turn, tr)
	}
	checkCalls(t, attached, runs)
}

// stall says how the attached app stalled, or "" when it took at most stallBound longer than
// alone, first query to last event. The alone run was made earlier, maybe at a quieter moment of
// a shared machine: an attached run past the bound is compared again with an alone run made right
// after it, under the same load, and a stall is one past the bound against both. A wait for an
// event that does not come (seconds an agent) is past it either way.
func stall(alone, attached realapps.Journal, aloneAgain func() realapps.Journal) string {
	bound := float64(stallBound / time.Millisecond)
	if attached.ElapsedMS-alone.ElapsedMS <= bound {
		return ""
	}
	again := aloneAgain()
	if extra := attached.ElapsedMS - max(alone.ElapsedMS, again.ElapsedMS); extra > bound {
		return fmt.Sprintf("stall: first query to last event took %.0f ms with Baton attached, %.0f and %.0f ms without (+%.0f ms)",
			attached.ElapsedMS, alone.ElapsedMS, again.ElapsedMS, extra)
	}
	return ""
}

// pairRuns pairs each turn with the run of its query, one run per query: it reports queries
// without a run and runs of no query.
func pairRuns(t *testing.T, turns []realapps.Turn, runs []traces.Trace) map[int]traces.Trace {
	t.Helper()
	paired := map[int]traces.Trace{}
	taken := make([]bool, len(runs))
	for i, turn := range turns {
		j := -1
		for k, tr := range runs {
			if !taken[k] && tr.Run.Input == turn.Query {
				j = k
				break
			}
		}
		if j < 0 {
			t.Errorf("query %d (%q) has no run in Baton; Baton holds %d runs for %d queries:%s", i+1, turn.Query, len(runs), len(turns), describeRuns(runs))
			continue
		}
		taken[j] = true
		paired[i] = runs[j]
	}
	for j, tr := range runs {
		if !taken[j] {
			t.Errorf("a run of no query, %d runs for %d queries: %s", len(runs), len(turns), describeRun(tr))
		}
	}
	return paired
}

func describeRuns(runs []traces.Trace) string {
	var b strings.Builder
	for _, tr := range runs {
		b.WriteString("\n\t" + describeRun(tr))
	}
	return b.String()
}

func describeRun(tr traces.Trace) string {
	first := "no event"
	if len(tr.Events) > 0 {
		e := tr.Events[0]
		first = fmt.Sprintf("first event %s by %q", e.Kind, e.Agent)
	}
	return fmt.Sprintf("run %s of flow %q, input %q, %s, %d events, %s", tr.Run.ID, tr.Run.Flow, tr.Run.Input, tr.Run.Status, len(tr.Events), first)
}

// checkTurn checks the run of one query: its status sequence, its story, its final answer and
// when it ended.
func checkTurn(t *testing.T, name string, turn realapps.Turn, tr traces.Trace) {
	t.Helper()
	var want, got []string
	for _, p := range turn.Parts {
		want = append(want, p.Status)
	}
	for _, e := range tr.Events {
		if e.Kind == traces.KindRunFinished && e.Run != nil {
			got = append(got, statusText(e.Run))
		}
	}
	if !slices.Equal(want, got) || string(tr.Run.Status) != want[len(want)-1] {
		t.Errorf("%s: status sequence: the app saw %s; Baton has %s, now %s",
			name, strings.Join(want, ", "), orNone(got), statusText(&traces.RunMark{Status: tr.Run.Status, Error: tr.Run.Error}))
	}
	if d := storyDiff(streamFacts(turn), traceFacts(tr)); d != "" {
		t.Errorf("%s: events: %s", name, d)
	}
	if out := web.NewStats(tr).Outcome; (out.Answer != turn.Final || out.AnswerBy != turn.FinalBy) && !concurrentAnswer(turn, out) {
		t.Errorf("%s: final answer: the stream ends with %q by %s; Baton shows %q by %q",
			name, turn.Final, turn.FinalBy, out.Answer, out.AnswerBy)
	}
	if tr.Run.EndedAt == nil || tr.Run.EndedAt.Sub(turn.EndedAt) > endBound {
		t.Errorf("%s: the app saw its stream end at %s; Baton ended the run at %v", name, turn.EndedAt.Format(time.StampMilli), stamp(tr.Run.EndedAt))
	}
}

// concurrentAnswer reports whether out's answer, which is not the turn's final message, is the
// last message of a branch that ran at once with the final message's (a parallel workflow's): the
// trace orders a streamed reply when it is complete, the stream when it starts (see the trace
// format's order of events), so of concurrent branches' last words either may come last.
func concurrentAnswer(turn realapps.Turn, out web.Outcome) bool {
	events := turn.Parts[len(turn.Parts)-1].Events
	// lastSaid returns the run path of agent's last message, when its text is text, else nil.
	lastSaid := func(agent, text string) []string {
		for i := len(events) - 1; i >= 0; i-- {
			if e := events[i]; e.Agent == agent && e.Role != "" {
				if e.Text != text {
					return nil
				}
				return e.RunPath
			}
		}
		return nil
	}
	final, said := lastSaid(turn.FinalBy, turn.Final), lastSaid(out.AnswerBy, out.Answer)
	return final != nil && said != nil && !ordered(final, said)
}

func statusText(m *traces.RunMark) string {
	if m.Error == "" {
		return string(m.Status)
	}
	return fmt.Sprintf("%s (%q)", m.Status, m.Error)
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "no run.finished"
	}
	return strings.Join(s, ", ")
}

func stamp(t *time.Time) string {
	if t == nil {
		return "no end"
	}
	return t.Format(time.StampMilli)
}

// checkCalls checks that Baton counts the model calls of every agent and the calls of the app's
// own tools as the app's models and tools counted them, over all its runs.
func checkCalls(t *testing.T, j realapps.Journal, runs []traces.Trace) {
	t.Helper()
	models, tools := map[string]int{}, map[string]int{}
	for _, tr := range runs {
		for _, e := range tr.Events {
			switch {
			case e.Kind == traces.KindModelStarted:
				models[e.Agent]++
			case e.Kind == traces.KindToolStarted && e.Tool != nil:
				if _, ours := j.ToolCalls[e.Tool.Name]; ours {
					tools[e.Tool.Name]++
				}
			}
		}
	}
	if !maps.Equal(models, j.ModelCalls) {
		t.Errorf("model calls per agent: the app's models counted %v; Baton has %v", j.ModelCalls, models)
	}
	if !maps.Equal(tools, j.ToolCalls) {
		t.Errorf("tool calls per tool: the app's tools counted %v; Baton has %v", j.ToolCalls, tools)
	}
}

// sameStreams compares two journals of one app: each agent told the same, turn by turn (the
// order across agents may differ where branches run in parallel; interrupt ids are fresh).
func sameStreams(a, b realapps.Journal) string {
	if len(a.Turns) != len(b.Turns) {
		return fmt.Sprintf("%d turns without Baton, %d with", len(a.Turns), len(b.Turns))
	}
	for i := range a.Turns {
		fa, fb := perAgent(streamFacts(a.Turns[i])), perAgent(streamFacts(b.Turns[i]))
		for _, agent := range slices.Sorted(maps.Keys(fa)) {
			if x, y := fa[agent], fb[agent]; !slices.Equal(x, y) {
				return fmt.Sprintf("query %d, %s told %q without Baton and %q with it", i+1, agent, x, y)
			}
		}
		if len(fa) != len(fb) {
			return fmt.Sprintf("query %d: agents %v without Baton, %v with it", i+1, slices.Sorted(maps.Keys(fa)), slices.Sorted(maps.Keys(fb)))
		}
	}
	return ""
}

func perAgent(facts []fact) map[string][]string {
	out := map[string][]string{}
	for _, f := range facts {
		d := f.detail
		if f.what == "interrupt" {
			d = ""
		}
		out[f.agent] = append(out[f.agent], f.what+" "+d)
	}
	return out
}

// TestStallIsMeasuredUnderTheSameLoad checks the stall check: an attached run past the bound
// against an alone run made at a quieter moment is no stall if an alone run made right after
// takes as long, and a wait of seconds is a stall against both.
func TestStallIsMeasuredUnderTheSameLoad(t *testing.T) {
	took := func(ms float64) realapps.Journal { return realapps.Journal{ElapsedMS: ms} }
	again := 0
	aloneAgain := func(ms float64) func() realapps.Journal {
		return func() realapps.Journal { again++; return took(ms) }
	}
	if msg := stall(took(200), took(900), aloneAgain(0)); msg != "" || again != 0 {
		t.Errorf("within the bound: %q, %d alone runs more; want none", msg, again)
	}
	if msg := stall(took(200), took(1500), aloneAgain(1100)); msg != "" || again != 1 {
		t.Errorf("as slow as an alone run under the same load: %q, %d alone runs more; want no stall, one", msg, again)
	}
	if msg := stall(took(200), took(5400), aloneAgain(300)); !strings.Contains(msg, "+5100 ms") {
		t.Errorf("a 5 s wait: %q, want a stall of +5100 ms", msg)
	}
}
