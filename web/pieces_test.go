package web

import (
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/baton-dev/baton/internal/prices"
	"github.com/baton-dev/baton/internal/webtest"
	"github.com/baton-dev/baton/traces"
)

// The analysis's pieces, each tested on its own: its add, and its copy for time travel.

// pieceTraces are runs that reach every piece's corners: transfers failed late (by an error) and
// at once, AgentTool calls seen through callbacks only, agents started more often than a history
// lists, a real recorded run, and a run interrupted, resumed and interrupted again.
func pieceTraces(t *testing.T) map[string]traces.Trace {
	return map[string]traces.Trace{
		"recorded supervisor": webtest.RecordedSupervisor(t), "failed transfer": webtest.FailedTransfer(),
		"refused transfer": webtest.RefusedTransfer(), "callbacks only": callbacksOnly(), "long": webtest.Big(120),
		"plan-execute": webtest.PlanExecute(), "paused": paused(),
	}
}

// callbacksOnly is the agenttool run as a recorder writes it when the caller's event stream does
// not carry the callees' events: each exit says so, on the caller's run path.
func callbacksOnly() traces.Trace {
	tr := webtest.AgentTool()
	tr.Events = slices.Clone(tr.Events)
	for i := range tr.Events {
		if e := &tr.Events[i]; e.Kind == traces.KindAgentToolExit {
			c := *e.AgentTool
			c.InnerEvents = traces.InnerEventsCallbacks
			e.AgentTool, e.RunPath = &c, []string{"project_manager"}
		}
	}
	return tr
}

// paused is a run interrupted at a tool call, resumed, then interrupted again with no
// run.finished to say so.
func paused() traces.Trace {
	b := webtest.New("r-p", "approval", "pay", traces.Agent{Name: "payer", Kind: traces.AgentChatModel})
	b.Start("payer", "run", webtest.Msg("user", "pay"))
	b.Add(traces.Event{Kind: traces.KindToolStarted, Agent: "payer", Tool: &traces.ToolCall{Name: "approve", CallID: "c1"}})
	b.Add(traces.Event{Kind: traces.KindToolFinished, Agent: "payer", Tool: &traces.ToolCall{Name: "approve", CallID: "c1", Interrupted: true}})
	b.Add(traces.Event{Kind: traces.KindInterrupted, Agent: "payer", Interrupt: &traces.Interrupt{ID: "i1", Info: "approve 10?"}})
	b.Add(traces.Event{Kind: traces.KindRunFinished, Run: &traces.RunMark{Status: traces.StatusInterrupted}})
	b.Add(traces.Event{Kind: traces.KindResumed, Agent: "payer", Interrupt: &traces.Interrupt{ID: "i1"}})
	b.Add(traces.Event{Kind: traces.KindInterrupted, Agent: "payer", Interrupt: &traces.Interrupt{ID: "i2", Info: "approve 20?"}})
	tr := b.Trace
	tr.Run.Status = traces.StatusInterrupted // its process ended before a second run.finished
	return tr
}

// pieces names each piece of a, for comparing them one by one. The inputs the session last
// classified are a cache, which it forgets.
func pieces(a *analysis) map[string]any {
	clear(a.session.sources.chains)
	return map[string]any{"tree": a.tree, "run": a.run, "session": a.session, "timeline": a.timeline,
		"inspect": a.inspect, "sequence": a.spans}
}

// Each piece's copy is a piece of its own: the copy taken at any event, fed the rest, is the
// piece of the whole run; the piece it was copied from, left alone meanwhile, is still the
// piece of the run up to there.
func TestEachPieceCopiesItself(t *testing.T) {
	for name, tr := range pieceTraces(t) {
		whole := analyse(tr, prices.Run{})
		for k := range len(tr.Events) + 1 {
			a := newAnalysis(tr.Run, tr.Agents, prices.Run{})
			a.takeUpTo(tr, k)
			c := a.clone()
			c.takeUpTo(tr, len(tr.Events))
			upTo := newAnalysis(tr.Run, tr.Agents, prices.Run{})
			upTo.takeUpTo(tr, k)
			got, want := pieces(c), pieces(whole)
			for p := range want {
				if !reflect.DeepEqual(got[p], want[p]) {
					t.Fatalf("%s: the %s copied at event %d and fed the rest differs from the whole run's", name, p, k)
				}
			}
			left, orig := pieces(a), pieces(upTo)
			for p := range orig {
				if !reflect.DeepEqual(left[p], orig[p]) {
					t.Fatalf("%s: feeding the copy changed the %s it was copied from at event %d", name, p, k)
				}
			}
		}
	}
}

// treeOf tells the other pieces what each event did: a model call counted once whichever of its
// two events came, a transfer failed at once or later by an error (late: its row is drawn again),
// an AgentTool call ended.
func TestTreeSaysWhatAnEventDid(t *testing.T) {
	tr := webtest.FailedTransfer()
	tree := newTreeState(tr.Agents)
	var models int
	for i, e := range tr.Events {
		c := tree.add(tr.Events, i)
		if c.newCall {
			models++
		}
		switch e.Kind {
		case traces.KindError:
			if c.failed == nil || !c.late || c.failed.seq != tree.transfers[0].seq {
				t.Fatalf("the error failing transfer #%d says %+v, want it failed late", tree.transfers[0].seq, c)
			}
		default:
			if c.failed != nil {
				t.Fatalf("event %d (%s) failed transfer %d", e.Seq, e.Kind, c.failed.seq)
			}
		}
	}
	if models != 1 {
		t.Errorf("a model call's two events counted %d calls, want 1", models)
	}
	if x := tree.stateOf("billing_agent"); x.state != StateFailed || !tree.roster.byName["billing_agent"].missing {
		t.Errorf("the missing target is %s (missing %v), want failed and missing", x.state, tree.roster.byName["billing_agent"].missing)
	}

	refused := webtest.RefusedTransfer()
	tree = newTreeState(refused.Agents)
	for i, e := range refused.Events {
		if c := tree.add(refused.Events, i); e.Kind == traces.KindTransfer && (c.failed == nil || c.late) {
			t.Fatalf("a refused transfer says %+v, want it failed at once", c)
		}
	}

	at := callbacksOnly()
	tree, exits := newTreeState(at.Agents), 0
	for i, e := range at.Events {
		c := tree.add(at.Events, i)
		if (e.Kind == traces.KindAgentToolExit) != (c.exited != nil) {
			t.Fatalf("event %d (%s) ended call %+v", e.Seq, e.Kind, c.exited)
		}
		if c.exited != nil {
			exits++
			if c.exited.exit != e.Seq || c.exited.callee != e.AgentTool.Callee {
				t.Fatalf("exit %d ended the call of %s exited at %d", e.Seq, c.exited.callee, c.exited.exit)
			}
		}
	}
	if exits != 3 || !tree.roster.byName["code_agent"].callbacksOnly {
		t.Errorf("%d exits, code_agent's frame callbacks only: %v; want 3, true", exits, tree.roster.byName["code_agent"].callbacksOnly)
	}
}

// The run's state counts what the tree counted, and follows the run through an interrupt, a
// resume and a second interrupt: where it waits is the newest interrupt's.
func TestRunStateFollowsTheRun(t *testing.T) {
	tr := paused()
	feed := func(run traces.Run) *runState {
		tree, s := newTreeState(tr.Agents), newRunState(run, prices.Run{})
		for i := range tr.Events {
			e := &tr.Events[i]
			s.add(e, tree, tree.add(tr.Events, i))
			if e.Kind != traces.KindRunFinished {
				continue
			}
			if o := s.outcome(""); s.status != traces.StatusInterrupted || o.Paused == nil || o.Paused.Tool != "approve" || o.ErrorSeq != e.Seq {
				t.Fatalf("after run.finished: %s, outcome %+v; want interrupted at the approve call, pointing at it", s.status, o)
			}
		}
		return s
	}
	running := traces.Run{Status: traces.StatusRunning}
	s := feed(running)
	if s.tools != 1 || s.paused == nil || s.paused.ID != "i2" || s.paused.Tool != "" || s.status != traces.StatusRunning {
		t.Fatalf("tools %d, %s, paused at %+v; want 1, running (resumed), at i2 with no tool", s.tools, s.status, s.paused)
	}
	// Made on the run as running, then given its own status at its last event: what the run's own
	// status would have made from the start.
	s.endAs(tr.Run)
	if own := feed(tr.Run); !reflect.DeepEqual(s, own) {
		t.Errorf("ended as %+v, want %+v", s, own)
	}
	if c := s.clone(); c == s || !reflect.DeepEqual(c, s) {
		t.Errorf("the copy is not an equal state of its own")
	}
}

// The session keeps each key's newest value with how often it was set, and each agent's newest
// starts, the history it was fed classified on the index it grows.
func TestSessionStateKeepsValuesAndStarts(t *testing.T) {
	tr := webtest.Big(120)
	tree, s := newTreeState(tr.Agents), newSessionState()
	starts, sets := map[string]int{}, map[string]int{}
	for i, e := range tr.Events {
		tree.add(tr.Events, i)
		s.add(tr, i, tree.roster)
		switch {
		case e.Kind == traces.KindAgentStarted && e.AgentRun != nil:
			starts[e.Agent]++
		case e.Kind == traces.KindSessionSet && e.Session != nil:
			sets[e.Session.Key]++
		}
	}
	if len(starts) == 0 || len(sets) == 0 {
		t.Fatalf("the run has %d agents started and %d keys set: it tests nothing", len(starts), len(sets))
	}
	for agent, n := range starts {
		h := s.histories[agent]
		if h == nil || h.count != n || len(h.starts) != min(n, MaxStarts) || h.starts[len(h.starts)-1] != h.seq {
			t.Fatalf("%s started %d times; its history is %+v", agent, n, h)
		}
	}
	for key, n := range sets {
		if v := s.values[s.valueAt[key]]; v.Key != key || v.Sets != n {
			t.Fatalf("%s set %d times; its value is %+v", key, n, v)
		}
	}
	s.panel(tr, tree.roster) // what agents were fed is classified when shown
	if s.sources.next == 0 {
		t.Errorf("classifying what agents were fed read no event into the index")
	}
}

// The timeline's index finds the call each echoing message repeats, and marks the events seen
// through callbacks only, drawing their rows again at the call's exit.
func TestTimelineIndexFoldsAndMarks(t *testing.T) {
	tr := callbacksOnly()
	tree, x, inspect := newTreeState(tr.Agents), newTimelineIndex(), newInspectIndex(prices.Run{})
	for i := range tr.Events {
		inspect.add(tr.Events, i, x.add(tr.Events, i, tree.add(tr.Events, i)))
	}
	inner := 0
	for _, e := range tr.Events {
		inside := len(e.RunPath) == 2 && e.Kind != traces.KindSessionSet
		if inside {
			inner++
		}
		if x.callbacksOnly[e.Seq] != inside && e.Kind != traces.KindSessionSet {
			t.Errorf("event %d (%s, path %v): callbacks only %v", e.Seq, e.Kind, e.RunPath, x.callbacksOnly[e.Seq])
		}
	}
	if len(x.amended) < inner {
		t.Errorf("%d rows drawn again, want at least the %d inner events", len(x.amended), inner)
	}
	last := tr.Events[len(tr.Events)-1].Seq
	if got := x.amendedSince(0, last); len(got) != 0 {
		t.Errorf("a page with no rows has rows to draw again: %v", got)
	}
	first := slices.IndexFunc(tr.Events, func(e traces.Event) bool { return len(e.RunPath) == 2 })
	if got := x.amendedSince(tr.Events[first].Seq, last); !slices.Equal(got, []int64{tr.Events[first].Seq}) {
		t.Errorf("a page holding the first inner row (%d) draws again %v", tr.Events[first].Seq, got)
	}

	// The supervisor's stream echoes every reply: each echo links both ways.
	rec := webtest.RecordedSupervisor(t)
	tree, x, inspect = newTreeState(rec.Agents), newTimelineIndex(), newInspectIndex(prices.Run{})
	for i := range rec.Events {
		inspect.add(rec.Events, i, x.add(rec.Events, i, tree.add(rec.Events, i)))
	}
	if len(x.echoOf) == 0 {
		t.Fatal("no message of a recorded run echoes a call")
	}
	for msg, call := range x.echoOf {
		if inspect.echoedBy[call] != msg {
			t.Errorf("message %d echoes call %d, which links to %d", msg, call, inspect.echoedBy[call])
		}
	}
}

// The sequence draws a transfer's arrow failed when a later error fails it, as a change at the
// error's event, and a copy's open bars close without closing the original's.
func TestSequenceFailsLateAndCopiesOpenBars(t *testing.T) {
	tr := webtest.FailedTransfer()
	a := newAnalysis(tr.Run, tr.Agents, prices.Run{})
	var errSeq int64
	for i, e := range tr.Events {
		if e.Kind == traces.KindError {
			errSeq = e.Seq
			before := a.spans.view(e.Seq-1, e.Seq-1, 0, 0, a.tree.roster)
			if len(before.Arrows) != 0 {
				t.Fatalf("a delta of no events holds arrows: %+v", before.Arrows)
			}
		}
		a.takeUpTo(tr, i+1)
	}
	d := a.spans.view(errSeq-1, errSeq, 0, 0, a.tree.roster)
	if len(d.Arrows) != 1 || !d.Arrows[0].Failed || d.Arrows[0].Kind != ArrowTransfer {
		t.Fatalf("the error's delta holds arrows %+v, want the transfer's, failed", d.Arrows)
	}

	s, tree := newSequence(), newTreeState(nil)
	t0 := time.Unix(0, 0)
	started := traces.Event{Seq: 1, Time: t0, Kind: traces.KindAgentStarted, Agent: "a", AgentRun: &traces.AgentRun{}}
	finished := traces.Event{Seq: 2, Time: t0.Add(time.Second), Kind: traces.KindAgentFinished, Agent: "a", AgentRun: &traces.AgentRun{}}
	for i, e := range []traces.Event{started} {
		s.add(&e, tree, tree.add([]traces.Event{started}, i), t0)
	}
	c := s.clone()
	c.add(&finished, tree, treeChange{}, t0)
	if s.bars[0].End != 0 || !s.open[0] || c.bars[0].End != 2 || c.open[0] {
		t.Errorf("closing the copy's visit: original %+v (open %v), copy %+v (open %v)", s.bars[0], s.open[0], c.bars[0], c.open[0])
	}
}

// A reply of many tool calls: the agent hands its model all their messages after all their ends,
// further back than a reply's echo looks. Each message that says its call's result links to that
// call; one a middleware rewrote says something else, and is its own.
func TestToolMessagesEchoTheirCallsAfterABatch(t *testing.T) {
	const calls = 20
	path := []string{"a"}
	ev := []traces.Event{{Kind: traces.KindModelFinished, Agent: "a", RunPath: path, Model: &traces.ModelCall{ID: "m1"}}}
	for i := range calls {
		id := fmt.Sprintf("call_%d", i)
		ev = append(ev,
			traces.Event{Kind: traces.KindToolStarted, Agent: "a", RunPath: path, Tool: &traces.ToolCall{Name: "tick", CallID: id}},
			traces.Event{Kind: traces.KindToolFinished, Agent: "a", RunPath: path, Tool: &traces.ToolCall{Name: "tick", CallID: id, Result: "r" + id}})
	}
	first := len(ev)
	for i := range calls {
		id := fmt.Sprintf("call_%d", i)
		content := "r" + id
		if i == 7 {
			content = "short(" + content + ")"
		}
		ev = append(ev, traces.Event{Kind: traces.KindMessage, Agent: "a", RunPath: path,
			Message: &traces.Message{Role: "tool", Content: content, ToolCallID: id, ToolName: "tick"}})
	}
	for i := range ev {
		ev[i].Seq = int64(i + 1)
	}
	for i := first; i < len(ev); i++ {
		k := i - first
		want := int64(0)
		if k != 7 {
			want = int64(2 + 2*k + 1) // its call's tool.finished
		}
		if got := echoed(ev, i); got != want {
			t.Errorf("message of call %d echoes event %d, want %d", k, got, want)
		}
	}
}
