package web_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/baton-dev/baton/internal/webtest"
	"github.com/baton-dev/baton/traces"
	"github.com/baton-dev/baton/web"
)

func shapes() map[string]traces.Trace {
	return map[string]traces.Trace{
		"supervisor":       webtest.Supervisor(),
		"transfer":         webtest.Transfer(),
		"failed transfer":  webtest.FailedTransfer(),
		"refused transfer": webtest.RefusedTransfer(),
		"agenttool":        webtest.AgentTool(),
		"wide 12":          webtest.Wide(12),
		"tree 10 depth 5":  webtest.Tree(10, 5),
		"tree 20 depth 5":  webtest.Tree(20, 5),
		"fan 8 22":         webtest.Fan(8, 22),
		"empty":            {Run: traces.Run{ID: "r-empty", Status: traces.StatusRunning}},
		"undeclared only":  webtest.New("r-u", "x", "in").Trace,
	}
}

func TestTracesAreValid(t *testing.T) {
	for name, tr := range shapes() {
		if len(tr.Events) == 0 {
			continue
		}
		if err := traces.Validate(tr); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestLayoutNoOverlapInsideViewBox(t *testing.T) {
	for name, tr := range shapes() {
		t.Run(name, func(t *testing.T) {
			g := web.NewGraph(tr)
			view := web.Rect{W: g.Width, H: g.Height}
			for i, n := range g.Nodes {
				if !view.Contains(n.Box) {
					t.Errorf("node %s %+v outside viewBox %+v", n.Name, n.Box, view)
				}
				for _, o := range g.Nodes[i+1:] {
					if n.Box.Overlaps(o.Box) {
						t.Errorf("nodes %s %+v and %s %+v overlap", n.Name, n.Box, o.Name, o.Box)
					}
				}
			}
			for _, b := range g.Boundaries {
				if !view.Contains(b.Frame) {
					t.Errorf("boundary of %s %+v outside viewBox", b.Callee, b.Frame)
				}
				for _, n := range g.Nodes {
					if n.Name != b.Callee && !isUnder(g, n.Name, b.Callee) && b.Frame.Overlaps(n.Box) {
						t.Errorf("boundary of %s overlaps node %s outside it", b.Callee, n.Name)
					}
				}
			}
		})
	}
}

// isUnder reports whether name is a descendant of anc in g.
func isUnder(g web.Graph, name, anc string) bool {
	parent := make(map[string]string)
	for _, n := range g.Nodes {
		parent[n.Name] = n.Parent
	}
	for p := parent[name]; p != ""; p = parent[p] {
		if p == anc {
			return true
		}
	}
	return false
}

// TestWideTreeStacksLeaves: a root with 12 leaf sub-agents lists them in columns under it, read
// top to bottom then left to right, each column's boxes left-aligned and apart: narrower than
// 8 boxes side by side (one column per leaf was over 12), and no taller than it is wide.
func TestWideTreeStacksLeaves(t *testing.T) {
	g := web.NewGraph(webtest.Wide(12))
	if len(g.Nodes) != 1+12+3 {
		t.Fatalf("got %d nodes, want 16", len(g.Nodes))
	}
	root, leaves := g.Nodes[0], g.Nodes[1:13]
	cols := 1
	for i, n := range leaves {
		if n.Depth != 1 || n.Box.Y <= root.Box.Bottom() {
			t.Errorf("specialist %s at depth %d, y=%v: not under the root (bottom %v)", n.Name, n.Depth, n.Box.Y, root.Box.Bottom())
		}
		if i == 0 {
			continue
		}
		switch prev := leaves[i-1].Box; {
		case n.Box.X == prev.X && n.Box.Y > prev.Bottom(): // next in its column
		case n.Box.X > prev.Right() && n.Box.Y == leaves[0].Box.Y: // tops the next column
			cols++
		default:
			t.Errorf("%s at %+v does not follow %+v down its column or start the next", n.Name, n.Box, prev)
		}
	}
	if cols < 2 || cols > 6 {
		t.Errorf("12 leaves in %d columns", cols)
	}
	if g.Width > 8*web.NodeW || g.Height > g.Width {
		t.Errorf("drawing %.0fx%.0f: want it narrower than 8 boxes, and wider than tall", g.Width, g.Height)
	}
}

func TestBoundaryContainsCallee(t *testing.T) {
	for name, tr := range map[string]traces.Trace{"agenttool": webtest.AgentTool(), "wide": webtest.Wide(3)} {
		t.Run(name, func(t *testing.T) {
			g := web.NewGraph(tr)
			if len(g.Boundaries) == 0 {
				t.Fatal("no boundaries")
			}
			for _, b := range g.Boundaries {
				callee := node(t, g, b.Callee)
				if !b.Frame.Contains(callee.Box) {
					t.Errorf("frame %+v does not contain %s %+v", b.Frame, b.Callee, callee.Box)
				}
				if caller := node(t, g, b.Caller); b.Frame.Overlaps(caller.Box) || !caller.Caller {
					t.Errorf("caller %s: inside frame or not marked as caller (%+v)", b.Caller, caller)
				}
				for _, n := range g.Nodes {
					if n.Parent == b.Callee && !b.Frame.Contains(n.Box) {
						t.Errorf("frame of %s does not contain its sub-agent %s", b.Callee, n.Name)
					}
				}
			}
		})
	}
	g := web.NewGraph(webtest.AgentTool())
	b := g.Boundaries[0]
	if b.Caller != "project_manager" || b.Callee != "research_agent" || b.Calls != 1 || b.CallSeq == 0 || b.ResultSeq <= b.CallSeq || b.Running {
		t.Errorf("research boundary = %+v", b)
	}
	if b.Caption != "AgentTool of project_manager:" || b.Note != "own history, shared session values" {
		t.Errorf("labels %q %q", b.Caption, b.Note)
	}
}

func TestTransfersNumberedInOrder(t *testing.T) {
	g := web.NewGraph(webtest.Supervisor())
	want := []struct{ from, to, mode string }{
		{"supervisor", "research_agent", "llm"},
		{"research_agent", "supervisor", "deterministic"},
		{"supervisor", "math_agent", "llm"},
		{"math_agent", "supervisor", "deterministic"},
	}
	if len(g.Transfers) != len(want) {
		t.Fatalf("got %d transfers, want %d", len(g.Transfers), len(want))
	}
	var lastSeq int64
	for i, e := range g.Transfers {
		w := want[i]
		if e.Order != i+1 || e.From != w.from || e.To != w.to || e.Mode != w.mode || e.Failed {
			t.Errorf("transfer %d = %+v, want %d %+v", i, e, i+1, w)
		}
		if e.Seq <= lastSeq || e.Path == "" {
			t.Errorf("transfer %d: seq %d after %d, path %q", i, e.Seq, lastSeq, e.Path)
		}
		lastSeq = e.Seq
		if e.Current != (i == len(want)-1) {
			t.Errorf("transfer %d current = %v", i+1, e.Current)
		}
	}
	if g.Transfers[0].Label == g.Transfers[1].Label {
		t.Errorf("the two directions share a label position")
	}
}

func TestFailedTransfer(t *testing.T) {
	for name, tr := range map[string]traces.Trace{"from eino's error": webtest.FailedTransfer(), "from the outcome": webtest.RefusedTransfer()} {
		t.Run(name, func(t *testing.T) { checkFailedTransfer(t, tr) })
	}
}

func checkFailedTransfer(t *testing.T, tr traces.Trace) {
	g := web.NewGraph(tr)
	if len(g.Transfers) != 1 {
		t.Fatalf("transfers: %+v", g.Transfers)
	}
	e := g.Transfers[0]
	if !e.Failed || e.To != "billing_agent" || e.FailSeq == 0 || e.Error == "" {
		t.Errorf("transfer = %+v, want failed to billing_agent", e)
	}
	ghost := node(t, g, "billing_agent")
	if !ghost.Missing || ghost.State != web.StateFailed || ghost.Parent != "router" {
		t.Errorf("billing_agent = %+v, want a missing failed node under router", ghost)
	}
	if r := node(t, g, "router"); r.State != web.StateDone {
		t.Errorf("router state %s, want done", r.State)
	}
	rows := web.NewTimeline(tr, 0)
	for _, r := range rows {
		if r.Kind == traces.KindTransfer && (!r.Failed || r.Order != 1) {
			t.Errorf("transfer row = %+v, want failed order 1", r)
		}
	}
}

func TestStatesFollowEvents(t *testing.T) {
	tr := webtest.Supervisor()
	seqOf := func(kind traces.Kind, agent string, nth int) int64 {
		for _, e := range tr.Events {
			if e.Kind == kind && e.Agent == agent {
				if nth--; nth == 0 {
					return e.Seq
				}
			}
		}
		t.Fatalf("no %s #%d for %s", kind, nth, agent)
		return 0
	}
	cases := []struct {
		name  string
		upTo  int64
		state map[string]web.State
	}{
		{"before start", 1, map[string]web.State{"supervisor": web.StateIdle, "research_agent": web.StateIdle}},
		{"supervisor started", seqOf(traces.KindAgentStarted, "supervisor", 1), map[string]web.State{"supervisor": web.StateActive, "math_agent": web.StateIdle}},
		{"research working", seqOf(traces.KindToolStarted, "research_agent", 1), map[string]web.State{"supervisor": web.StateDone, "research_agent": web.StateActive, "math_agent": web.StateIdle}},
		{"back to supervisor", seqOf(traces.KindAgentStarted, "supervisor", 2), map[string]web.State{"supervisor": web.StateActive, "research_agent": web.StateDone}},
		{"math working", seqOf(traces.KindModelStarted, "math_agent", 1), map[string]web.State{"math_agent": web.StateActive, "supervisor": web.StateDone}},
		{"completed", int64(len(tr.Events)), map[string]web.State{"supervisor": web.StateDone, "research_agent": web.StateDone, "math_agent": web.StateDone}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := web.NewGraph(web.Prefix(tr, c.upTo))
			for agent, want := range c.state {
				if got := node(t, g, agent).State; got != want {
					t.Errorf("%s after #%d: %s, want %s", agent, c.upTo, got, want)
				}
			}
		})
	}
}

func TestStatesFailedAndInterrupted(t *testing.T) {
	b := webtest.New("r-f", "supervisor", "x", webtest.SupervisorAgents()...)
	b.Start("supervisor", "run")
	b.Error("", "model exploded")
	g := web.NewGraph(b.End(traces.StatusFailed, "model exploded"))
	if s := node(t, g, "supervisor"); s.State != web.StateFailed || s.Error != "model exploded" {
		t.Errorf("unattributed error after supervisor's event: %+v", s)
	}

	b = webtest.New("r-i", "supervisor", "x", webtest.SupervisorAgents()...)
	b.Start("supervisor", "run")
	b.Transfer("supervisor", "math_agent", "llm", "c1")
	b.Start("math_agent", "transfer")
	b.Add(traces.Event{Kind: traces.KindInterrupted, Agent: "supervisor", Interrupt: &traces.Interrupt{ID: "i1", Info: "approve?"}})
	g = web.NewGraph(b.End(traces.StatusInterrupted, ""))
	if s := node(t, g, "math_agent").State; s != web.StateInterrupted {
		t.Errorf("math_agent %s, want interrupted", s)
	}
}

func TestLatestActivityWinsOverPairing(t *testing.T) {
	// Stream events lag callbacks: research_agent's message arrives after supervisor restarted,
	// then its transfer; the end state must not depend on that order.
	b := webtest.New("r-x", "supervisor", "x", webtest.SupervisorAgents()...)
	b.Start("supervisor", "run")
	b.Transfer("supervisor", "research_agent", "llm", "c1")
	b.Start("research_agent", "transfer")
	b.Finish("research_agent")
	b.Start("supervisor", "transfer")
	b.Add(traces.Event{Kind: traces.KindMessage, Agent: "research_agent", Message: &traces.Message{Role: "assistant", Content: "late"}})
	b.Transfer("research_agent", "supervisor", "deterministic", "d1")
	g := web.NewGraph(b.Trace)
	if s := node(t, g, "research_agent").State; s != web.StateDone {
		t.Errorf("research_agent %s, want done", s)
	}
	if s := node(t, g, "supervisor").State; s != web.StateActive {
		t.Errorf("supervisor %s, want active", s)
	}
}

func TestNodeCountsAndColours(t *testing.T) {
	g := web.NewGraph(webtest.Supervisor())
	sup := node(t, g, "supervisor")
	if sup.ModelCalls != 3 || sup.Tokens != 700 || sup.Detail != "3 calls · 700 tok" {
		t.Errorf("supervisor = %d calls %d tokens %q", sup.ModelCalls, sup.Tokens, sup.Detail)
	}
	for i, n := range g.Nodes {
		if n.Colour != i {
			t.Errorf("%s colour %d, want %d (tree order)", n.Name, n.Colour, i)
		}
	}
}

func TestExtraAgentsBecomeNodes(t *testing.T) {
	b := webtest.New("r-e", "supervisor", "x", webtest.SupervisorAgents()...)
	b.Start("supervisor", "run")
	b.Add(traces.Event{Kind: traces.KindAgentToolEnter, Agent: "math_agent", AgentTool: &traces.AgentToolCall{Caller: "math_agent", Callee: "calculator", CallID: "c"}})
	b.Add(traces.Event{Kind: traces.KindMessage, Agent: "stray", Message: &traces.Message{Role: "assistant", Content: "hi"}})
	g := web.NewGraph(b.Trace)
	calc := node(t, g, "calculator")
	if calc.Parent != "math_agent" || calc.Relation != traces.RelationAgentTool || !calc.Extra || calc.Colour != 3 {
		t.Errorf("calculator = %+v", calc)
	}
	if s := node(t, g, "stray"); s.Parent != "supervisor" || s.Colour != 4 {
		t.Errorf("stray = %+v, want under supervisor from its run path", s)
	}
	if len(g.Boundaries) != 1 || g.Boundaries[0].Callee != "calculator" || !g.Boundaries[0].Running {
		t.Errorf("boundaries = %+v", g.Boundaries)
	}
}

func node(t *testing.T, g web.Graph, name string) web.Node {
	t.Helper()
	for _, n := range g.Nodes {
		if n.Name == name {
			return n
		}
	}
	t.Fatalf("no node %q in %s", name, names(g))
	return web.Node{}
}

func names(g web.Graph) string {
	var s []string
	for _, n := range g.Nodes {
		s = append(s, n.Name)
	}
	return fmt.Sprint(s)
}

func TestManyTransfersDrawOnlyRecentLanes(t *testing.T) {
	g := web.NewGraph(webtest.Big(600))
	drawn := map[[2]string][]web.TransferEdge{}
	for _, e := range g.Transfers {
		if e.Path != "" {
			drawn[[2]string{e.From, e.To}] = append(drawn[[2]string{e.From, e.To}], e)
		}
	}
	if len(drawn) != 4 {
		t.Fatalf("drawn pairs %v", drawn)
	}
	total := 0
	for pair, es := range drawn {
		if len(es) != web.Lanes || es[0].Earlier == 0 || es[1].Earlier != 0 {
			t.Errorf("%v: %d lanes, earlier %d", pair, len(es), es[0].Earlier)
		}
		total += len(es) + es[0].Earlier
	}
	if total != g.TransferCount || !g.Transfers[len(g.Transfers)-1].Current || g.Transfers[len(g.Transfers)-1].Path == "" {
		t.Errorf("drawn %d + earlier != %d transfers, or the current one is not drawn", total, g.TransferCount)
	}
}

// TestCallbacksOnlyMark: in the agenttool-silent flow (EmitInternalEvents off) every event
// inside the callees' frames is marked as seen through callbacks only, in its row, its
// inspection and the frame; a live page gets those rows drawn again when the call exits. With
// internal events on (agenttool) nothing is marked.
func TestCallbacksOnlyMark(t *testing.T) {
	tr := runFlow(t, "agenttool-silent", "")
	live := web.NewViewState(traces.Run{ID: tr.Run.ID, Status: traces.StatusRunning}, tr.Agents)
	amended := map[int64]bool{}
	for _, e := range tr.Events {
		from := live.Seq()
		live.Add(e)
		for _, r := range live.Update(from).Amended {
			amended[r.Seq] = r.CallbacksOnly
		}
	}
	inside := func(e traces.Event) bool { return len(e.RunPath) > 1 && e.RunPath[0] == "trip_planner" }
	marked := 0
	for _, r := range live.Rows(0, 0) {
		e := tr.Events[r.Seq-1]
		if r.CallbacksOnly != inside(e) {
			t.Errorf("#%d %s of %s: callbacks only %v", r.Seq, e.Kind, e.Agent, r.CallbacksOnly)
		}
		if !r.CallbacksOnly {
			continue
		}
		marked++
		if !amended[r.Seq] {
			t.Errorf("#%d: the live page was not told to draw its row again", r.Seq)
		}
		in, err := web.NewInspection(tr, r.Seq)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(in.Facts, func(f web.Fact) bool { return f.Label == "seen" && strings.Contains(f.Value, "callbacks only") }) {
			t.Errorf("#%d's inspection does not say it was seen through callbacks only: %+v", r.Seq, in.Facts)
		}
	}
	if marked == 0 {
		t.Fatal("no event marked")
	}
	g := live.View().Graph
	if len(g.Boundaries) != 2 {
		t.Fatalf("%d frames, want flight_agent's and hotel_agent's", len(g.Boundaries))
	}
	for _, b := range g.Boundaries {
		if !b.CallbacksOnly || !strings.Contains(strings.Join(b.NoteLines, " "), "seen through callbacks only") {
			t.Errorf("frame of %s: callbacks only %v, note %q", b.Callee, b.CallbacksOnly, b.NoteLines)
		}
	}

	streamed := runFlow(t, "agenttool", "")
	for _, r := range web.NewTimeline(streamed, 0) {
		if r.CallbacksOnly {
			t.Errorf("agenttool (internal events on): #%d marked callbacks only", r.Seq)
		}
	}
	for _, b := range web.NewGraph(streamed).Boundaries {
		if b.CallbacksOnly {
			t.Errorf("agenttool: frame of %s marked callbacks only", b.Callee)
		}
	}
}

// TestColumnsStayPut: as the generated supervisor runs' transfers add up, their specialists keep
// their columns (boxes move right as trunks widen, but no leaf changes column), so a live tree
// does not reshuffle under the reader. (Counting columns by the transfers so far moved the fan's
// from three columns to two.)
func TestColumnsStayPut(t *testing.T) {
	columns := func(g web.Graph) map[string]int { // leaf -> its column, numbered left to right
		xs := map[float64]bool{}
		for _, n := range g.Nodes[1:] {
			xs[n.Box.X] = true
		}
		out := map[string]int{}
		for _, n := range g.Nodes[1:] {
			for x := range xs {
				if x < n.Box.X {
					out[n.Name]++
				}
			}
		}
		return out
	}
	for name, tr := range generated() {
		if !strings.HasPrefix(name, "specialists") && !strings.HasPrefix(name, "fan") {
			continue
		}
		want := columns(web.NewGraph(tr))
		if slices.Max(slices.Collect(maps.Values(want))) == 0 {
			t.Fatalf("%s: one column", name)
		}
		for n := 1; n < len(tr.Events); n += 3 {
			part := tr
			part.Events = tr.Events[:n]
			if got := columns(web.NewGraph(part)); !maps.Equal(got, want) {
				t.Errorf("%s: after %d events the columns are %v, at the end %v", name, n, got, want)
				break
			}
		}
	}
}

// TestResumedAgentToolCallIsOneCall: eino enters an AgentTool call again, with its id, when the
// run resumes into it after an interrupt: the frame counts one call ("call"), not two, and it
// runs again until its exit; a later call of the same callee counts as a second.
func TestResumedAgentToolCallIsOneCall(t *testing.T) {
	b := webtest.New("r-resumed-at", "approval", "refund it",
		traces.Agent{Name: "support_agent", Kind: traces.AgentChatModel},
		traces.Agent{Name: "billing_agent", Kind: traces.AgentChatModel, Parent: "support_agent", Relation: traces.RelationAgentTool})
	enter := func(id string) {
		b.Add(traces.Event{Kind: traces.KindAgentToolEnter, Agent: "support_agent", AgentTool: &traces.AgentToolCall{Caller: "support_agent", Callee: "billing_agent", CallID: id, Request: "refund"}})
	}
	exit := func(id string) {
		b.Add(traces.Event{Kind: traces.KindAgentToolExit, Agent: "support_agent", AgentTool: &traces.AgentToolCall{Caller: "support_agent", Callee: "billing_agent", CallID: id, Result: "ok"}})
	}
	b.Start("support_agent", "run", webtest.Msg("user", "refund it"))
	enter("call_1")
	b.Add(traces.Event{Kind: traces.KindInterrupted, Agent: "billing_agent", Interrupt: &traces.Interrupt{ID: "i1", Info: "approve?"}})
	exit("call_1")
	b.Add(traces.Event{Kind: traces.KindResumed, Interrupt: &traces.Interrupt{ID: "i1"}})
	enter("call_1")
	running := web.NewGraph(b.Trace).Boundaries[0]
	exit("call_1")
	once := web.NewGraph(b.Trace).Boundaries[0]
	enter("call_2")
	exit("call_2")
	twice := web.NewGraph(b.Trace).Boundaries[0]
	if !running.Running || running.Calls != 1 || once.Running || once.CallWord() != "call" || twice.CallWord() != "call ×2" {
		t.Errorf("resumed: running %v, %d calls; ended: %q; after a second call: %q", running.Running, running.Calls, once.CallWord(), twice.CallWord())
	}
}
