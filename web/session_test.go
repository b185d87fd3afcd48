package web_test

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/baton-dev/baton/internal/webtest"
	"github.com/baton-dev/baton/traces"
	"github.com/baton-dev/baton/web"
)

func TestSessionKeepsLatestValue(t *testing.T) {
	b := webtest.New("r-s", "agenttool", "x", webtest.AgentToolAgents()...)
	b.Set("research_agent", "findings", "first")
	b.Set("code_agent", "code", map[string]int{"lines": 3})
	seq := b.Set("review_agent", "findings", "second")
	s := web.NewSession(b.Trace)
	if len(s.Values) != 2 {
		t.Fatalf("values = %+v", s.Values)
	}
	f := s.Values[0]
	if f.Key != "findings" || f.Value.Text != "second" || !f.Value.String || f.SetBy != "review_agent" || f.Seq != seq || f.Sets != 2 || f.Colour != 3 {
		t.Errorf("findings = %+v", f)
	}
	if c := s.Values[1]; c.Key != "code" || !c.Value.JSON || c.Value.Text != "{\n  \"lines\": 3\n}" {
		t.Errorf("code = %+v", c)
	}
}

func TestSessionHistoriesWithOrigins(t *testing.T) {
	s := web.NewSession(webtest.Supervisor())
	var math *web.History
	for i := range s.Histories {
		if s.Histories[i].Agent == "math_agent" {
			math = &s.Histories[i]
		}
	}
	if len(s.Histories) != 3 || s.Histories[0].Agent != "supervisor" || len(s.Histories[0].Starts) != 3 || math == nil {
		t.Fatalf("histories = %+v", s.Histories)
	}
	want := []struct{ from, how string }{{"", "input"}, {"research_agent", "said"}, {"supervisor", "called a tool"}}
	if len(math.Messages) != len(want) || math.Via != "transfer" {
		t.Fatalf("math fed %+v", math)
	}
	for i, w := range want {
		m := math.Messages[i]
		if m.From != w.from || m.How != w.how {
			t.Errorf("message %d from %q how %q, want %q %q", i, m.From, m.How, w.from, w.how)
		}
		if m.From != "" && m.FromColour < 0 {
			t.Errorf("message %d: no colour for %s", i, m.From)
		}
	}
}

func TestTimelineRows(t *testing.T) {
	tr := webtest.Supervisor()
	all := web.NewTimeline(tr, 0)
	if len(all) != len(tr.Events) {
		t.Fatalf("%d rows for %d events", len(all), len(tr.Events))
	}
	tail := web.NewTimeline(tr, 30)
	if len(tail) != len(tr.Events)-30 || tail[0].Seq != 31 {
		t.Errorf("rows after 30 start at %d (%d rows)", tail[0].Seq, len(tail))
	}
	orders := 0
	for _, r := range all {
		if r.Kind == traces.KindTransfer {
			orders++
			if r.Order != orders || !strings.Contains(r.Summary, "→") {
				t.Errorf("transfer row %+v, want order %d", r, orders)
			}
		}
		if r.Agent == "" && r.Colour != -1 || r.Agent != "" && r.Colour < 0 {
			t.Errorf("row %d agent %q colour %d", r.Seq, r.Agent, r.Colour)
		}
		if strings.ContainsAny(r.Summary, "\n") || r.Summary == "" {
			t.Errorf("row %d summary %q", r.Seq, r.Summary)
		}
	}
	if r := all[12]; r.Kind != traces.KindToolFinished || r.Summary != `search → "US GDP 2024: 29.18T"` || r.Group != "tool" {
		t.Errorf("row 13 = %+v", r)
	}
}

func TestInspection(t *testing.T) {
	tr := webtest.Supervisor()
	if _, err := web.NewInspection(tr, 999); traces.ErrorCode(err) != traces.CodeNotFound {
		t.Errorf("missing event: %v", err)
	}
	find := func(kind traces.Kind, agent string) int64 {
		for _, e := range tr.Events {
			if e.Kind == kind && e.Agent == agent {
				return e.Seq
			}
		}
		t.Fatalf("no %s of %s", kind, agent)
		return 0
	}
	in, err := web.NewInspection(tr, find(traces.KindModelFinished, "math_agent"))
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Messages) != 2 || in.Messages[0].How != "instruction" || len(in.Links) != 2 || in.Links[0].Label != "call" ||
		tr.Events[in.Links[1].Seq-1].Kind != traces.KindMessage {
		t.Errorf("model.finished inspection = %+v", in)
	}
	if len(in.Blocks) == 0 || !in.Blocks[0].JSON || !strings.Contains(in.Blocks[0].Text, "\n  \"a\": 29.18") {
		t.Errorf("tool call args not pretty: %+v", in.Blocks)
	}
	in, _ = web.NewInspection(tr, find(traces.KindTransfer, "research_agent"))
	if in.Title != "#"+itoa(in.Seq)+" transfer 2" || in.Facts[0].Value != "research_agent" || in.Facts[0].Colour != 1 {
		t.Errorf("transfer inspection = %+v", in)
	}
	long := strings.Repeat("line\n", 100)
	b := webtest.New("r-l", "x", "x")
	seq := b.Add(traces.Event{Kind: traces.KindToolFinished, Agent: "a", Tool: &traces.ToolCall{Name: "t", Result: long}})
	in, _ = web.NewInspection(b.Trace, seq)
	if r := in.Blocks[0]; !r.Long || strings.Count(r.Preview, "\n") > 8 || r.Text != long {
		t.Errorf("long result block = %+v", r)
	}
}

func TestStatsAndPrefix(t *testing.T) {
	tr := webtest.Supervisor()
	s := web.NewStats(tr)
	if s.Status != traces.StatusCompleted || !s.Ended || s.Transfers != 4 || s.ModelCalls != 7 || s.Tokens != 1750 || s.Agents != 3 {
		t.Errorf("stats = %+v", s)
	}
	// From run.started to run.finished: the builder spaces events 150 ms apart.
	if want := time.Duration(len(tr.Events)-1) * 150 * time.Millisecond; s.Elapsed != want || s.ElapsedText != web.Clock(want) {
		t.Errorf("elapsed %v %q, want %v", s.Elapsed, s.ElapsedText, want)
	}
	p := web.NewStats(web.Prefix(tr, 10))
	if p.Status != traces.StatusRunning || p.Ended || p.LastSeq != 10 || p.Events != 10 {
		t.Errorf("prefix stats = %+v", p)
	}
	if got := web.Clock(3*time.Hour + 4*time.Second + 250*time.Millisecond); got != "3:00:04.2" {
		t.Errorf("Clock = %q", got)
	}
}

func TestUpdate(t *testing.T) {
	tr := webtest.Supervisor()
	if u := web.NewUpdate(tr, int64(len(tr.Events))); u.Changed || len(u.Rows) != 0 {
		t.Errorf("no new events: %+v", u)
	}
	sets := int64(0)
	for _, e := range tr.Events {
		if e.Kind == traces.KindSessionSet {
			sets = e.Seq
		}
	}
	u := web.NewUpdate(web.Prefix(tr, sets), sets-1)
	if !u.Changed || !u.ValuesChanged || u.HistoriesChanged || len(u.Rows) != 1 || len(u.Session.Values) != 1 || u.AgentsChanged {
		t.Errorf("update with a session.set = %+v", u)
	}
	b := webtest.New("r-n", "supervisor", "x", webtest.SupervisorAgents()...)
	b.Start("newcomer", "run")
	if u := web.NewUpdate(b.Trace, 1); !u.AgentsChanged || len(u.Agents) != 4 || !u.HistoriesChanged {
		t.Errorf("update with a new agent = %+v", u)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestSummaryShowsMarkupAsWritten: a JSON value escaped as \u003c in a trace file reads as "<" in
// its timeline row; escaping it for the page is templ's job, not the summary's.
func TestSummaryShowsMarkupAsWritten(t *testing.T) {
	e := traces.Event{Kind: traces.KindSessionSet, Session: &traces.SessionSet{Key: "note", Value: []byte(`{"html":"\u003cb\u003e \u0026 co"}`)}}
	if got := web.Summary(e); !strings.Contains(got, `{"html":"<b> & co"}`) {
		t.Errorf("summary %q does not show the value as written", got)
	}
}

func TestSummarySaysHowManyEventsWereLost(t *testing.T) {
	e := traces.Event{Kind: traces.KindLost, Lost: &traces.Lost{Count: 37}}
	if got := web.Summary(e); !strings.HasPrefix(got, "37 events lost") {
		t.Errorf("summary %q does not say 37 events were lost", got)
	}
}

func TestInspectionOfAnAgentToolInputMode(t *testing.T) {
	b := webtest.New("r-im", "agenttool-history", "Escalate")
	enter := b.Add(traces.Event{Kind: traces.KindAgentToolEnter, Agent: "lead", AgentTool: &traces.AgentToolCall{
		Caller: "lead", Callee: "escalation", CallID: "c1", Request: "Please take over.", InputMode: traces.AgentToolInputFullHistory}})
	start := b.Start("escalation", "agenttool", webtest.Msg("user", "For context: [lead] said: Customer 7781."))
	in, err := web.NewInspection(b.Trace, enter)
	if err != nil {
		t.Fatal(err)
	}
	input := ""
	for _, f := range in.Facts {
		if f.Label == "input" {
			input = f.Value
		}
	}
	if !strings.Contains(input, "history") || !strings.Contains(input, "dropped") {
		t.Errorf("input fact %q does not say the callee got the history, not the request", input)
	}
	if !slices.ContainsFunc(in.Links, func(r web.Ref) bool { return r.Label == "callee's input" && r.Seq == start }) {
		t.Errorf("links %+v lack the callee's agent.started", in.Links)
	}
}

// TestElapsedIsActiveTime: a run interrupted, then resumed a minute later in the same trace,
// shows its active time, not the minute it waited: stopped at the interrupt, counting on from
// there once resumed (ClockFrom moves on by the wait, for the page's own clock).
func TestElapsedIsActiveTime(t *testing.T) {
	b := webtest.New("r-resume", "approval", "refund me")
	b.Start("billing_agent", "run")
	b.Add(traces.Event{Kind: traces.KindInterrupted, Agent: "billing_agent", Interrupt: &traces.Interrupt{ID: "i1", Info: "approve?"}})
	stop := b.Add(traces.Event{Kind: traces.KindRunFinished, Run: &traces.RunMark{Status: traces.StatusInterrupted}})
	resume := b.Add(traces.Event{Kind: traces.KindResumed, Agent: "billing_agent", Interrupt: &traces.Interrupt{ID: "i1"}})
	b.Finish("billing_agent")
	tr := b.End(traces.StatusCompleted, "")
	const wait = time.Minute
	for i := range tr.Events {
		if tr.Events[i].Seq >= resume {
			tr.Events[i].Time = tr.Events[i].Time.Add(wait)
		}
	}
	*tr.Run.EndedAt = tr.Events[len(tr.Events)-1].Time
	at := func(seq int64) time.Time { return tr.Events[seq-1].Time }
	waited := at(resume).Sub(at(stop))

	live := tr.Run // as the page of the live run sees it
	live.Status, live.EndedAt = traces.StatusRunning, nil
	vs := web.NewViewState(live, tr.Agents)
	for _, e := range tr.Events {
		vs.Add(e)
		s := vs.View().Stats
		want := at(e.Seq).Sub(at(1))
		if e.Seq >= resume {
			want -= waited
		}
		if s.Elapsed != want || s.ElapsedText != web.Clock(want) {
			t.Errorf("after #%d (%s): elapsed %v %q, want %v", e.Seq, e.Kind, s.Elapsed, s.ElapsedText, want)
		}
		if e.Seq >= resume && !s.ClockFrom.Equal(at(1).Add(waited)) {
			t.Errorf("after #%d: the clock counts from %v, want the start moved on by %v", e.Seq, s.ClockFrom, waited)
		}
	}
	if s := web.NewStats(tr); s.Elapsed >= wait || !s.Ended {
		t.Errorf("finished run: elapsed %v (ended %v), want its active time, under the %v it waited", s.Elapsed, s.Ended, wait)
	}
}

// TestElapsedIsTheRunsOwnTime: a run recorded in an app is timed by the app's clock, from its
// run.started to its run.finished, never by the server's: not from when the server registered
// the run (here 2 s after the app started it, by a clock 2 s behind) nor to when the server
// closed it (3 s after the app's end), live or read back.
func TestElapsedIsTheRunsOwnTime(t *testing.T) {
	b := webtest.New("r-app", "app", "hi", traces.Agent{Name: "assistant", Kind: traces.AgentChatModel})
	b.Start("assistant", "run")
	b.Model("assistant", nil, nil, webtest.Msg("assistant", "hello"), 10)
	b.Finish("assistant")
	tr := b.End(traces.StatusCompleted, "")
	first, last := tr.Events[0].Time, tr.Events[len(tr.Events)-1].Time
	closed := last.Add(3 * time.Second)
	tr.Run.StartedAt, tr.Run.EndedAt = first.Add(2*time.Second), &closed
	want := last.Sub(first)

	if s := web.NewStats(tr); s.Elapsed != want || s.ElapsedText != web.Clock(want) {
		t.Errorf("read back: elapsed %v %q, want the app's %v", s.Elapsed, s.ElapsedText, want)
	}
	live := tr.Run
	live.Status, live.EndedAt = traces.StatusRunning, nil
	vs := web.NewViewState(live, tr.Agents)
	vs.Add(tr.Events...)
	if s := vs.View().Stats; s.Elapsed != want || !s.ClockFrom.Equal(first) {
		t.Errorf("live: elapsed %v counted from %v, want the app's %v from its run.started %v", s.Elapsed, s.ClockFrom, want, first)
	}
}
