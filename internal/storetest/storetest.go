// Package storetest is the contract of live.Store as tests: every store runs Run on itself
// from its own tests (the in-memory one, SQLite, PostgreSQL, and any other that joins), so that the broker
// lists, searches, loads and forgets runs the same whichever store holds them. Baton's own, not
// API.
package storetest

import (
	"bytes"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/baton-dev/baton/internal/live"
	"github.com/baton-dev/baton/traces"
)

// Open returns an empty store that keeps up to keep runs (the store's default when 0; negative
// keeps all), closed by t's cleanup.
type Open func(t *testing.T, keep int) live.Store

// Run runs the contract's tests on the stores open returns, each test on a fresh one.
func Run(t *testing.T, open Open) {
	for _, tc := range []struct {
		name string
		test func(*testing.T, Open)
	}{
		{"LoadReadsBackWhatWasSaved", testLoadReadsBackWhatWasSaved},
		{"StartIsTheRuns", testStartIsTheRuns},
		{"UnknownRuns", testUnknownRuns},
		{"CreateRefusesATakenID", testCreateRefusesATakenID},
		{"List", testList},
		{"SearchIsWithinOneText", testSearchIsWithinOneText},
		{"ListIsByAddition", testListIsByAddition},
		{"Retention", testRetention},
		{"RetentionByAge", testRetentionByAge},
		{"Interrupted", testInterrupted},
		{"SessionHash", testSessionHash},
		{"NextBreakpoints", testNextBreakpoints},
		{"Findings", testFindings},
		{"ConcurrentUse", testConcurrentUse},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.test(t, open) })
	}
}

// t0 is when the runs of these tests start.
var t0 = time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)

// ended returns the events of a run of flow that says message and ends with status, started at
// minute m.
func ended(flow string, status traces.Status, input, message string, m int) []traces.Event {
	start := t0.Add(time.Duration(m) * time.Minute)
	return []traces.Event{
		{Seq: 1, Time: start, Kind: traces.KindRunStarted, Run: &traces.RunMark{Flow: flow, Input: input, Status: traces.StatusRunning}},
		{Seq: 2, Time: start.Add(time.Second), Kind: traces.KindMessage, Agent: "a", Message: &traces.Message{Role: "assistant", Content: message}},
		{Seq: 3, Time: start.Add(2 * time.Second), Kind: traces.KindRunFinished, Run: &traces.RunMark{Status: status}},
	}
}

// create stores run id of flow, started at minute m, with events, as a broker does.
func create(t *testing.T, s live.Store, id, flow, input string, m int, events []traces.Event) {
	t.Helper()
	var tally live.Tally
	for _, e := range events {
		tally.Add(e)
	}
	run := tally.Apply(traces.Run{ID: id, Flow: flow, Input: input, StartedAt: t0.Add(time.Duration(m) * time.Minute)})
	if err := s.Create(run, tally, []traces.Agent{{Name: "a", Kind: traces.AgentChatModel}}, events); err != nil {
		t.Fatalf("Create(%s): %v", id, err)
	}
}

// createEnded stores an ended run of flow with status, input and one message, started at minute m.
func createEnded(t *testing.T, s live.Store, id, flow string, status traces.Status, input, message string, m int) {
	t.Helper()
	create(t, s, id, flow, input, m, ended(flow, status, input, message, m))
}

func ids(p live.RunPage) []string {
	var out []string
	for _, r := range p.Runs {
		out = append(out, r.ID)
	}
	return out
}

func list(t *testing.T, s live.Store, q live.RunQuery) live.RunPage {
	t.Helper()
	p, err := s.List(q)
	if err != nil {
		t.Fatalf("List(%+v): %v", q, err)
	}
	return p
}

func marshal(t *testing.T, tr traces.Trace) []byte {
	t.Helper()
	data, err := traces.Marshal(tr)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// A search matches a text within one input or message, never across two consecutive ones (with
// a newline or without), and finds a text again in each run that says it, in a part saved later
// too; a text with newlines matches whole.
func testSearchIsWithinOneText(t *testing.T, open Open) {
	s := open(t, 0)
	say := func(seq int64, text string) traces.Event {
		return traces.Event{Seq: seq, Time: t0.Add(time.Duration(seq) * time.Second), Kind: traces.KindMessage, Agent: "a",
			Message: &traces.Message{Role: "assistant", Content: text}}
	}
	create(t, s, "r1", "f", "an input", 0, []traces.Event{say(1, "alpha one"), say(2, "beta two"), say(3, "gamma\nthree"),
		say(4, "alpha one"), say(5, "delta four")})
	create(t, s, "r2", "f", "another input", 1, []traces.Event{say(1, "one\nbeta"), say(2, "alpha one")})
	var tally live.Tally
	tally.Events = 6
	if err := s.Save(traces.Run{ID: "r1", Flow: "f", Input: "an input", StartedAt: t0, Status: traces.StatusRunning}, tally, nil,
		[]traces.Event{say(6, "beta two")}); err != nil {
		t.Fatal(err)
	}
	for text, want := range map[string][]string{
		"one\nbeta":    {"r2"},
		"one beta":     nil,
		"onebeta":      nil,
		"twogamma":     nil,
		"two\ngamma":   nil,
		"ma\nthr":      {"r1"},
		"GAMMA\nTHREE": {"r1"},
		"alpha one":    {"r2", "r1"},
		"beta two":     {"r1"},
		"four":         {"r1"},
		"input\nalpha": nil,
	} {
		if got := ids(list(t, s, live.RunQuery{Text: text})); !slices.Equal(got, want) {
			t.Errorf("search %q found %q, want %q", text, got, want)
		}
	}
	if tr, err := s.Load("r1"); err != nil || len(tr.Events) != 6 || tr.Events[2].Message.Content != "gamma\nthree" {
		t.Errorf("Load(r1) = %d events, %v: want 6, the third saying gamma, a newline and three", len(tr.Events), err)
	}
}

// A run created with its first events, then saved in parts as a broker writes it (a new agent
// once, the tally and status with each part), reads back byte for byte as it was recorded, and
// lists with its tally: its tokens by the model each call named among it.
func testLoadReadsBackWhatWasSaved(t *testing.T, open Open) {
	s := open(t, 0)
	start := t0
	agents := []traces.Agent{{Name: "root", Kind: traces.AgentSupervisor}}
	rec := traces.NewRecording(traces.Run{ID: "r-parts", Flow: "f", Input: "go\nnow", Model: "scripted", StartedAt: start}, agents)
	emit := func(e traces.Event) {
		e.Time = start.Add(time.Duration(len(rec.Snapshot().Events)) * time.Second)
		rec.Emit(e)
	}
	emit(traces.Event{Kind: traces.KindRunStarted, Run: &traces.RunMark{Flow: "f", Input: "go\nnow", Status: traces.StatusRunning}})
	emit(traces.Event{Kind: traces.KindAgentStarted, Agent: "root", AgentRun: &traces.AgentRun{Via: "run"}})
	var tally live.Tally
	first := rec.Snapshot()
	for _, e := range first.Events {
		tally.Add(e)
	}
	if err := s.Create(tally.Apply(first.Run), tally, first.Agents, first.Events); err != nil {
		t.Fatal(err)
	}
	save := func(agents []traces.Agent, from int) {
		t.Helper()
		tr := rec.Snapshot()
		for _, e := range tr.Events[from:] {
			tally.Add(e)
		}
		if err := s.Save(tally.Apply(tr.Run), tally, agents, tr.Events[from:]); err != nil {
			t.Fatal(err)
		}
	}
	rec.PutAgent(traces.Agent{Name: "helper", Kind: traces.AgentChatModel, Parent: "root", Relation: traces.RelationSubAgent})
	emit(traces.Event{Kind: traces.KindTransfer, Agent: "root", Transfer: &traces.Transfer{From: "root", To: "helper", Mode: traces.TransferLLM}})
	emit(traces.Event{Kind: traces.KindAgentStarted, Agent: "helper", AgentRun: &traces.AgentRun{Via: "transfer"}})
	save(rec.Agents(), 2)
	emit(traces.Event{Kind: traces.KindModelFinished, Agent: "helper", Model: &traces.ModelCall{ID: "m1", Name: "gpt-4o-mini",
		Output: &traces.Message{Role: "assistant", Content: "done"}, Usage: &traces.Usage{PromptTokens: 30, CompletionTokens: 10, TotalTokens: 40}}})
	emit(traces.Event{Kind: traces.KindMessage, Agent: "helper", Message: &traces.Message{Role: "assistant", Content: "done"}})
	save(nil, 4) // the agents as they were: kept
	mid := list(t, s, live.RunQuery{}).Runs[0].Usage
	if want := []live.ModelTokens{{Model: "gpt-4o-mini", Prompt: 30, Completion: 10}}; !slices.Equal(mid, want) {
		t.Errorf("usage after the first call = %+v, want %+v", mid, want)
	}
	emit(traces.Event{Kind: traces.KindModelFinished, Agent: "helper", Model: &traces.ModelCall{ID: "m2",
		Usage: &traces.Usage{PromptTokens: 1, CompletionTokens: 1, TotalTokens: 2}}}) // named no model
	rec.Finish(traces.StatusCompleted, "")
	save(nil, 6)
	if len(mid) != 1 || mid[0].Prompt != 30 {
		t.Errorf("a listed summary changed as the run went on: %+v", mid)
	}

	tr, err := s.Load("r-parts")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := marshal(t, tr), marshal(t, rec.Snapshot()); !bytes.Equal(got, want) {
		t.Errorf("the run reads back different from the recording:\n got %.400s\nwant %.400s", got, want)
	}
	p := list(t, s, live.RunQuery{})
	if len(p.Runs) != 1 {
		t.Fatalf("listed %v, want r-parts alone", ids(p))
	}
	r := p.Runs[0]
	if r.Input != "go" || r.Status != traces.StatusCompleted || r.Agents != 2 || r.Transfers != 1 || r.Tokens != 42 ||
		r.Events != 8 || r.EndedAt == nil || !r.EndedAt.Equal(*rec.Run().EndedAt) || !r.StartedAt.Equal(start) {
		t.Errorf("summary %+v, want the first line of the input, completed, 2 agents, 1 transfer, 42 tokens, 8 events, its start and end", r)
	}
	// The prompt and completion tokens by the model each call named, in the order they came:
	// what prices the run in the list.
	if want := []live.ModelTokens{{Model: "gpt-4o-mini", Prompt: 30, Completion: 10}, {Prompt: 1, Completion: 1}}; !slices.Equal(r.Usage, want) {
		t.Errorf("usage %+v, want %+v", r.Usage, want)
	}
}

// A run recorded elsewhere (an app's, streamed in) is created before its first event arrives; it
// started when its run.started says, by the app's clock, and its listed start and duration follow.
func testStartIsTheRuns(t *testing.T, open Open) {
	s := open(t, 0)
	rec := traces.NewRecording(traces.Run{ID: "r-app", Flow: "app", Model: "app", StartedAt: t0}, nil)
	var tally live.Tally
	created := rec.Snapshot()
	if err := s.Create(tally.Apply(created.Run), tally, created.Agents, nil); err != nil {
		t.Fatal(err)
	}
	appStart := t0.Add(-time.Hour) // the app's clock is an hour behind
	rec.Emit(traces.Event{Time: appStart, Kind: traces.KindRunStarted, Run: &traces.RunMark{Flow: "app", Status: traces.StatusRunning}})
	rec.FinishAt(appStart.Add(260*time.Millisecond), traces.StatusCompleted, "")
	tr := rec.Snapshot()
	for _, e := range tr.Events {
		tally.Add(e)
	}
	if err := s.Save(tally.Apply(tr.Run), tally, nil, tr.Events); err != nil {
		t.Fatal(err)
	}
	p := list(t, s, live.RunQuery{})
	if len(p.Runs) != 1 {
		t.Fatalf("listed %v, want r-app alone", ids(p))
	}
	r := p.Runs[0]
	if !r.StartedAt.Equal(appStart) || r.EndedAt == nil || r.EndedAt.Sub(r.StartedAt) != 260*time.Millisecond {
		t.Errorf("listed from %v to %v, want the app's 0.26 s from %v", r.StartedAt, r.EndedAt, appStart)
	}
}

// What names no run is not found, whatever is asked of it.
func testUnknownRuns(t *testing.T, open Open) {
	s := open(t, 0)
	createEnded(t, s, "r-1", "f", traces.StatusCompleted, "in", "out", 0)
	for name, err := range map[string]error{
		"Load":   func() error { _, err := s.Load("r-nope"); return err }(),
		"Save":   s.Save(traces.Run{ID: "r-nope", Status: traces.StatusRunning}, live.Tally{}, nil, nil),
		"Delete": s.Delete("r-nope"),
	} {
		if traces.ErrorCode(err) != traces.CodeNotFound || traces.ErrorMessage(err) != `run "r-nope" not found` {
			t.Errorf("%s of an unknown run: %v, want not found", name, err)
		}
	}
	if err := s.Delete("r-1"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load("r-1"); traces.ErrorCode(err) != traces.CodeNotFound {
		t.Errorf("Load of a deleted run: %v, want not found", err)
	}
	if err := s.Delete("r-1"); traces.ErrorCode(err) != traces.CodeNotFound {
		t.Errorf("second Delete: %v, want not found", err)
	}
	if p := list(t, s, live.RunQuery{}); p.Runs == nil || len(p.Runs) != 0 || p.Next != "" {
		t.Errorf("an empty list is %#v, want no runs (an empty list, not nil) and no next page", p)
	}
}

func testCreateRefusesATakenID(t *testing.T, open Open) {
	s := open(t, 0)
	createEnded(t, s, "r-1", "f", traces.StatusCompleted, "in", "out", 0)
	err := s.Create(traces.Run{ID: "r-1", Status: traces.StatusRunning}, live.Tally{}, nil, nil)
	if traces.ErrorCode(err) != traces.CodeConflict {
		t.Errorf("Create of a taken id: %v, want a conflict", err)
	}
	if tr, err := s.Load("r-1"); err != nil || len(tr.Events) != 3 {
		t.Errorf("the conflict changed the run: %d events, %v", len(tr.Events), err)
	}
}

// Lists page through every run once, filter by flow, status and conversation, and search inputs
// and what the runs said, case folded, taking the text literally.
func testList(t *testing.T, open Open) {
	s := open(t, 0)
	for i := range 25 {
		flow, status := "alpha", traces.StatusCompleted
		if i%2 == 1 {
			flow = "beta"
		}
		if i%5 == 0 {
			status = traces.StatusFailed
		}
		createEnded(t, s, fmt.Sprintf("r-%02d", i), flow, status,
			fmt.Sprintf("question %d\nsecond line", i), fmt.Sprintf("answer about Zebra-%d", i), i)
	}
	conv := ended("gamma", traces.StatusCompleted, "turn", "ok", 30)
	var tally live.Tally
	for _, e := range conv {
		tally.Add(e)
	}
	for _, id := range []string{"r-turn-1", "r-turn-2"} {
		run := tally.Apply(traces.Run{ID: id, Flow: "gamma", Input: "turn", StartedAt: t0, Conversation: "conv-1"})
		if err := s.Create(run, tally, nil, conv); err != nil {
			t.Fatal(err)
		}
	}

	pages := func(t *testing.T, q live.RunQuery) [][]string {
		t.Helper()
		var out [][]string
		for {
			p := list(t, s, q)
			out = append(out, ids(p))
			if p.Next == "" {
				return out
			}
			if len(out) > 10 {
				t.Fatalf("more than 10 pages of %+v", q)
			}
			q.After = p.Next
		}
	}
	t.Run("pages cover every run once, newest first", func(t *testing.T) {
		got := pages(t, live.RunQuery{Limit: 10})
		if len(got) != 3 || len(got[0]) != 10 || len(got[1]) != 10 || len(got[2]) != 7 {
			t.Fatalf("pages %v, want 10, 10 and 7 runs", got)
		}
		all := slices.Concat(got...)
		want := []string{"r-turn-2", "r-turn-1"}
		for i := 24; i >= 0; i-- {
			want = append(want, fmt.Sprintf("r-%02d", i))
		}
		if !slices.Equal(all, want) {
			t.Errorf("listed %v, want %v", all, want)
		}
	})
	t.Run("a page of exactly the runs left has no next", func(t *testing.T) {
		if p := list(t, s, live.RunQuery{Limit: 27}); len(p.Runs) != 27 || p.Next != "" {
			t.Errorf("%d runs, next %q: want all 27 and no next page", len(p.Runs), p.Next)
		}
	})
	t.Run("flow and status", func(t *testing.T) {
		if got := fmt.Sprint(ids(list(t, s, live.RunQuery{Flow: "beta", Status: traces.StatusFailed}))); got != "[r-15 r-05]" {
			t.Errorf("failed beta runs %s, want [r-15 r-05]", got)
		}
	})
	t.Run("conversation", func(t *testing.T) {
		if got := fmt.Sprint(ids(list(t, s, live.RunQuery{Conversation: "conv-1"}))); got != "[r-turn-2 r-turn-1]" {
			t.Errorf("runs of conv-1 %s, want [r-turn-2 r-turn-1]", got)
		}
	})
	t.Run("text in a message, any case", func(t *testing.T) {
		if got := fmt.Sprint(ids(list(t, s, live.RunQuery{Text: "zebra-17"}))); got != "[r-17]" {
			t.Errorf("search zebra-17: %s", got)
		}
	})
	t.Run("text in an input past its first line, in pages", func(t *testing.T) {
		got := pages(t, live.RunQuery{Text: "second LINE", Flow: "alpha", Limit: 5})
		if all := slices.Concat(got...); len(got) != 3 || len(all) != 13 || all[0] != "r-24" || all[12] != "r-00" {
			t.Errorf("search in inputs of alpha: pages %v, want 13 runs in 3 pages, r-24 to r-00", got)
		}
	})
	t.Run("text with quotes and operators is literal", func(t *testing.T) {
		for _, text := range []string{`"zebra" OR *`, "zebra_17", "zebr%17", `zebra\-17`} {
			if got := ids(list(t, s, live.RunQuery{Text: text})); len(got) != 0 {
				t.Errorf("literal search %q found %v", text, got)
			}
		}
	})
	t.Run("bad queries", func(t *testing.T) {
		for _, q := range []live.RunQuery{{Text: "ab"}, {Status: "done"}, {Limit: 100000}, {After: "yesterday"}} {
			if _, err := s.List(q); traces.ErrorCode(err) != traces.CodeInvalid {
				t.Errorf("List(%+v): %v, want an invalid-input error", q, err)
			}
		}
	})
	t.Run("a deleted run is found no more", func(t *testing.T) {
		if err := s.Delete("r-17"); err != nil {
			t.Fatal(err)
		}
		if got := ids(list(t, s, live.RunQuery{Text: "zebra-17"})); len(got) != 0 {
			t.Errorf("the deleted run is still found: %v", got)
		}
	})
}

// testFindings: a run's findings count, set when it is created or saved, is listed and filters
// the list, alone or with text; a later save can change it.
func testFindings(t *testing.T, open Open) {
	s := open(t, 0)
	withFindings := func(id string, n, m int) {
		events := ended("alpha", traces.StatusCompleted, "question", "answer about Zebra", m)
		var tally live.Tally
		for _, e := range events {
			tally.Add(e)
		}
		tally.Findings = n
		if err := s.Create(tally.Apply(traces.Run{ID: id, Flow: "alpha", Input: "question", StartedAt: t0}), tally, nil, events); err != nil {
			t.Fatal(err)
		}
	}
	withFindings("r-clean", 0, 0)
	withFindings("r-bugs", 2, 1)
	withFindings("r-clean-2", 0, 2)
	p := list(t, s, live.RunQuery{Findings: true})
	if got := fmt.Sprint(ids(p)); got != "[r-bugs]" || p.Runs[0].Findings != 2 {
		t.Errorf("runs with findings %s (%+v), want [r-bugs] with 2", got, p.Runs)
	}
	if got := fmt.Sprint(ids(list(t, s, live.RunQuery{Findings: true, Text: "zebra"}))); got != "[r-bugs]" {
		t.Errorf("runs with findings and text %s, want [r-bugs]", got)
	}
	// The run is saved again when it ends anew (a resume): its count follows.
	tr, err := s.Load("r-clean-2")
	if err != nil {
		t.Fatal(err)
	}
	var tally live.Tally
	for _, e := range tr.Events {
		tally.Add(e)
	}
	tally.Findings = 1
	if err := s.Save(tally.Apply(tr.Run), tally, nil, nil); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(ids(list(t, s, live.RunQuery{Findings: true}))); got != "[r-clean-2 r-bugs]" {
		t.Errorf("after a save with findings: %s, want [r-clean-2 r-bugs]", got)
	}
}

// A list goes by when runs were added, not when they started: a run imported from a file, which
// started long ago, comes first once added.
func testListIsByAddition(t *testing.T, open Open) {
	s := open(t, 0)
	createEnded(t, s, "r-new", "f", traces.StatusCompleted, "in", "out", 60)
	createEnded(t, s, "r-old", "f", traces.StatusCompleted, "in", "out", 0)
	if got := fmt.Sprint(ids(list(t, s, live.RunQuery{}))); got != "[r-old r-new]" {
		t.Errorf("listed %s, want the run added last first: [r-old r-new]", got)
	}
}

// Past what it keeps, a store forgets the oldest added runs that have ended, never one that is
// going on.
func testRetention(t *testing.T, open Open) {
	s := open(t, 3)
	create(t, s, "r-running", "f", "in", 0, ended("f", traces.StatusCompleted, "in", "out", 0)[:2])
	for i := range 5 {
		createEnded(t, s, fmt.Sprintf("r-%d", i), "f", traces.StatusCompleted, "in", "out", 10-i) // added last, started first
	}
	if got := fmt.Sprint(ids(list(t, s, live.RunQuery{Limit: 10}))); got != "[r-4 r-3 r-2 r-running]" {
		t.Errorf("kept %s, want the last 3 added and the one going on: [r-4 r-3 r-2 r-running]", got)
	}
	if _, err := s.Load("r-0"); traces.ErrorCode(err) != traces.CodeNotFound {
		t.Errorf("Load(r-0) after retention: %v, want not found", err)
	}
	if tr, err := s.Load("r-running"); err != nil || len(tr.Events) != 2 {
		t.Errorf("Load(r-running): %d events, %v; want it whole", len(tr.Events), err)
	}
}

// ager is a store that also forgets runs by age (--keep-days).
type ager interface{ KeepFor(age time.Duration) }

// Past the age it keeps runs for, a store forgets, when a run is added, the runs that ended and
// were last written longer ago than that: never one going on, nor one written again since.
func testRetentionByAge(t *testing.T, open Open) {
	s := open(t, -1)
	a, ok := s.(ager)
	if !ok {
		t.Skip("this store keeps runs whatever their age")
	}
	const age = 200 * time.Millisecond
	a.KeepFor(age)
	create(t, s, "r-running", "f", "in", 0, ended("f", traces.StatusCompleted, "in", "out", 0)[:2])
	createEnded(t, s, "r-old", "f", traces.StatusCompleted, "in", "out", 1)
	createEnded(t, s, "r-rewritten", "f", traces.StatusCompleted, "in", "out", 2)
	time.Sleep(age + time.Millisecond) // the runs so far are now older than the age
	rewritten := time.Now()
	tr, err := s.Load("r-rewritten")
	if err != nil {
		t.Fatal(err)
	}
	var tally live.Tally
	for _, e := range tr.Events {
		tally.Add(e)
	}
	tally.Findings = 1 // a later save, as when a resumed run ends again
	if err := s.Save(tally.Apply(tr.Run), tally, nil, nil); err != nil {
		t.Fatal(err)
	}
	createEnded(t, s, "r-new", "f", traces.StatusCompleted, "in", "out", 3)
	want := "[r-new r-rewritten r-running]"
	if time.Since(rewritten) >= age {
		// The machine took longer than the age since the rewrite: it may be gone too.
		want = fmt.Sprint(ids(list(t, s, live.RunQuery{Limit: 10})))
		t.Logf("too slow to check that a rewritten run is kept")
	}
	if got := fmt.Sprint(ids(list(t, s, live.RunQuery{Limit: 10}))); got != want || slices.Contains(ids(list(t, s, live.RunQuery{})), "r-old") {
		t.Errorf("kept %s, want %s: the old ended run forgotten, the one going on and the ones written lately kept", got, want)
	}
}

// Interrupted finds the newest run that ended interrupted at an interrupt, and no run that went
// on since.
func testInterrupted(t *testing.T, open Open) {
	s := open(t, 0)
	interrupted := func(id, interruptID string) []traces.Event {
		events := ended("f", traces.StatusInterrupted, "in", "out", 0)
		events[1] = traces.Event{Seq: 2, Time: t0, Kind: traces.KindInterrupted, Agent: "a",
			Interrupt: &traces.Interrupt{ID: interruptID, Info: "approve?"}}
		return events
	}
	create(t, s, "r-a", "f", "in", 0, interrupted("r-a", "int-1"))
	create(t, s, "r-b", "f", "in", 1, interrupted("r-b", "int-1"))
	create(t, s, "r-c", "f", "in", 2, interrupted("r-c", "int-2"))
	for interruptID, want := range map[string]string{"int-1": "r-b", "int-2": "r-c", "int-3": ""} {
		if got, err := s.Interrupted(interruptID); err != nil || got != want {
			t.Errorf("Interrupted(%s) = %q, %v; want %q", interruptID, got, err, want)
		}
	}
	// r-c resumes: it is going on again, no longer waiting at int-2.
	tr, err := s.Load("r-c")
	if err != nil {
		t.Fatal(err)
	}
	var tally live.Tally
	for _, e := range tr.Events {
		tally.Add(e)
	}
	resumed := traces.Event{Seq: 4, Time: t0.Add(time.Minute), Kind: traces.KindResumed, Agent: "a",
		Interrupt: &traces.Interrupt{ID: "int-2"}}
	tally.Add(resumed)
	if err := s.Save(tally.Apply(tr.Run), tally, nil, []traces.Event{resumed}); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Interrupted("int-2"); err != nil || got != "" {
		t.Errorf("Interrupted(int-2) after r-c resumed = %q, %v; want none", got, err)
	}
	if p := list(t, s, live.RunQuery{Status: traces.StatusRunning}); fmt.Sprint(ids(p)) != "[r-c]" || p.Runs[0].EndedAt != nil {
		t.Errorf("running runs after the resume: %+v, want r-c with no end", p.Runs)
	}
}

// Runs written, listed and read from several goroutines at once each keep their own events.
func testConcurrentUse(t *testing.T, open Open) {
	s := open(t, -1)
	const runs, parts = 4, 20
	var wg sync.WaitGroup
	for r := range runs {
		wg.Go(func() {
			id := fmt.Sprintf("r-%d", r)
			var tally live.Tally
			run := traces.Run{ID: id, Flow: "f", Input: "in", StartedAt: t0, Status: traces.StatusRunning}
			if err := s.Create(run, tally, nil, nil); err != nil {
				t.Error(err)
				return
			}
			for i := range parts {
				e := traces.Event{Seq: int64(i + 1), Time: t0, Kind: traces.KindMessage, Agent: id,
					Message: &traces.Message{Role: "assistant", Content: fmt.Sprintf("%s says %d", id, i+1)}}
				tally.Add(e)
				if err := s.Save(tally.Apply(run), tally, nil, []traces.Event{e}); err != nil {
					t.Error(err)
					return
				}
				if _, err := s.List(live.RunQuery{Text: "says"}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	for r := range runs {
		id := fmt.Sprintf("r-%d", r)
		tr, err := s.Load(id)
		if err != nil {
			t.Fatal(err)
		}
		for i, e := range tr.Events {
			if e.Seq != int64(i+1) || e.Agent != id || e.Message.Content != fmt.Sprintf("%s says %d", id, i+1) {
				t.Fatalf("%s events[%d] = seq %d by %s: another run's event, or out of order", id, i, e.Seq, e.Agent)
			}
		}
		if len(tr.Events) != parts {
			t.Errorf("%s has %d events, want %d", id, len(tr.Events), parts)
		}
	}
}
