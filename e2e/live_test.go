package e2e_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/baton-dev/baton/traces"
)

// supervisorEdges are the supervisor flow's transfers, in order.
var supervisorEdges = []string{
	"1 llm supervisor->research_agent",
	"2 deterministic research_agent->supervisor",
	"3 llm supervisor->math_agent",
	"4 deterministic math_agent->supervisor",
}

// runFromIndex does what a user does to start flow: open the index page, move the pace slider
// to paceSteps*50 ms with the arrow keys, and press the flow's Run button. It returns once the
// run page has loaded.
func runFromIndex(t *testing.T, tb *tab, b *baton, flow string, paceSteps int) {
	t.Helper()
	tb.open(t, b.base+"/")
	tb.do(t, "move the pace slider", chromedp.Focus(chromedp.ID("pace")), chromedp.KeyEvent(strings.Repeat(kb.ArrowRight, paceSteps)))
	tb.waitFor(t, "the pace to read the chosen value", `document.getElementById('pace-value').textContent === `+jsString(itoa(paceSteps*50)+" ms"))
	tb.click(t, attrSel("data-testid", "flow-"+flow)+" [data-testid=run-button]")
	tb.waitFor(t, "the run page after pressing Run", runPageLoaded)
}

// TestSupervisorLive: a run started from the index page is drawn as it happens: the transfer
// edges arrive one by one in order, the active agent moves (its node redrawn alone, still marked
// when it is the agent summarised), the histories fill, and the run ends completed.
func TestSupervisorLive(t *testing.T) {
	t.Parallel()
	supervisor, gate := gated(t, "supervisor")
	b := startBaton(t, supervisor)
	tb := newTab(t, nil)
	runFromIndex(t, tb, b, "supervisor", 2) // 100 ms per model reply
	tb.startRecording(t)
	// The run goes on one stage at a time, each shown before the next: the recording sees every
	// stage whatever the machine's pace.
	// Over research_agent's first model call its node's detail line comes to count it while the
	// tree itself stays the element it was: the node is redrawn alone, as SVG.
	for _, stage := range []struct {
		call, edges int
		active      string
		detail      string // how the active agent's detail line begins, when checked
	}{{2, 1, "research_agent", "chat_model"}, {3, 1, "research_agent", "1 call "}, {4, 2, "supervisor", ""}, {5, 3, "math_agent", ""}} {
		holdAt(t, gate, stage.call)
		node := `document.querySelector('#graph [data-testid^="node-"]` + attrSel("data-agent", stage.active) + `')`
		tb.waitFor(t, fmt.Sprintf("%d transfer edges and %s active, its detail %q", stage.edges, stage.active, stage.detail),
			`document.querySelectorAll('[data-testid=transfer-edge]').length === `+itoa(stage.edges)+
				` && `+node+`?.dataset.state === 'active'`+
				` && `+node+`.querySelector('.node-detail').textContent.startsWith(`+jsString(stage.detail)+`)`)
		switch stage.call {
		case 2:
			tb.do(t, "keep the tree element", chromedp.Evaluate[chromedp.Void](`window.keptGraph = document.getElementById('graph')`))
			tb.click(t, `#graph [data-testid^="node-"]`+attrSel("data-agent", stage.active)) // summarise it
			tb.waitFor(t, "its node marked", node+`.classList.contains('selected')`)
		case 3:
			if !evalJS[bool](t, tb, `document.getElementById('graph') === window.keptGraph`) {
				t.Errorf("the tree was redrawn whole for a model call")
			}
			if !evalJS[bool](t, tb, node+` instanceof SVGGElement && `+node+`.getBBox().width > 0`) {
				t.Errorf("the redrawn node of %s is not drawn as SVG", stage.active)
			}
			if !evalJS[bool](t, tb, node+`.classList.contains('selected')`) {
				t.Errorf("the summarised agent's node lost its mark when redrawn")
			}
		}
	}
	gate.Open()
	tb.waitStatus(t, "completed")
	rec := tb.recording(t)
	final := tb.state(t)

	var maxOrders []int
	sawPartial := false
	active := map[string]bool{}
	for _, s := range rec.States {
		orders := make([]int, len(s.Edges))
		for i, e := range s.Edges {
			orders[i] = e.Order
		}
		if len(orders) > 0 && !slices.Equal(orders, span(len(orders))) {
			t.Errorf("edges drawn out of order at one point: orders %v", orders)
		}
		maxOrders = append(maxOrders, len(orders))
		sawPartial = sawPartial || len(orders) < 4
		for _, a := range s.Active {
			active[a] = true
		}
	}
	t.Logf("max data-order over %d observed states: %v; active agents seen: %v", len(rec.States), maxOrders, keys(active))
	if !slices.IsSorted(maxOrders) || len(maxOrders) == 0 || maxOrders[len(maxOrders)-1] != 4 {
		t.Errorf("max data-order over time = %v, want non-decreasing and ending at 4", maxOrders)
	}
	if !sawPartial {
		t.Errorf("never saw fewer than 4 edges: the page did not show the run live (states: %v)", maxOrders)
	}
	if len(active) < 2 {
		t.Errorf("data-state=active seen on %v, want at least two different agents over time", keys(active))
	}
	if got := edgeStrings(final.Edges); !slices.Equal(got, supervisorEdges) {
		t.Errorf("final edges = %q, want %q", got, supervisorEdges)
	}
	if len(final.Active) != 0 {
		t.Errorf("agents still active after the run: %v", final.Active)
	}

	// The session tab's per-agent histories filled as agents started.
	if first := rec.States[0]; len(first.Histories) >= 3 {
		t.Errorf("all histories were there from the first observed state %v: not live", first.Histories)
	}
	for _, a := range []string{"supervisor", "research_agent", "math_agent"} {
		if final.Fed[a] == 0 {
			t.Errorf("history of %s lists no fed messages (histories %v, counts %v)", a, final.Histories, final.Fed)
		}
	}
	tb.click(t, "#tab-btn-session")
	tb.waitVisible(t, "[data-testid=session-history-math_agent]")

	tr := b.trace(t, runID(t, final.URL))
	if !contiguous(final.Seqs, len(tr.Events)) {
		t.Errorf("timeline rows %v, want 1..%d", final.Seqs, len(tr.Events))
	}
	// An agent that starts again has its section redrawn alone: each shows its newest start's
	// input (the supervisor started three times, its input growing).
	fed, starts := map[string]int{}, map[string]int{}
	for _, e := range tr.Events {
		if e.Kind == traces.KindAgentStarted && e.AgentRun != nil {
			fed[e.Agent], starts[e.Agent] = len(e.AgentRun.Input), starts[e.Agent]+1
		}
	}
	if starts["supervisor"] < 2 || !maps.Equal(final.Fed, fed) {
		t.Errorf("fed messages shown per agent %v, want those of each agent's newest start %v (starts %v)", final.Fed, fed, starts)
	}
}

// TestAgentToolLive: in the agenttool flow the session value research_notes shows up while the
// run goes on, set by research_agent.
func TestAgentToolLive(t *testing.T) {
	t.Parallel()
	agenttool, gate := gated(t, "agenttool")
	b := startBaton(t, agenttool)
	tb := newTab(t, nil)
	runFromIndex(t, tb, b, "agenttool", 2) // 100 ms per model reply
	// The run waits before its first reply until the recording is on.
	tb.startRecording(t)
	gate.Open()
	tb.waitStatus(t, "completed")
	rec := tb.recording(t)

	notes := func(s pageState) (sessionValue, bool) {
		i := slices.IndexFunc(s.Values, func(v sessionValue) bool { return v.Key == "research_notes" })
		if i < 0 {
			return sessionValue{}, false
		}
		return s.Values[i], true
	}
	if _, ok := notes(rec.States[0]); ok {
		t.Errorf("research_notes was there from the first observed state: not live")
	}
	final := rec.States[len(rec.States)-1]
	v, ok := notes(final)
	if !ok || v.SetBy != "research_agent" {
		t.Fatalf("session values at the end = %+v, want research_notes set by research_agent", final.Values)
	}
	tb.click(t, "#tab-btn-session")
	row := `[data-testid=session-value][data-key="research_notes"]`
	tb.waitVisible(t, row)
	text := evalJS[string](t, tb, `document.querySelector('`+row+`').textContent`)
	if !strings.Contains(text, "research_agent") || !strings.Contains(text, "token bucket") {
		t.Errorf("research_notes row reads %q, want its setter and the notes", text)
	}
}

// TestReloadMidRun: reloading while a run goes on shows at least what was there, then follows the
// run to its end with every event once.
func TestReloadMidRun(t *testing.T) {
	t.Parallel()
	supervisor, gate := gated(t, "supervisor")
	b := startBaton(t, supervisor)
	tb := newTab(t, nil) // first: it may have to start the browser
	id := b.startRun(t, "supervisor", 100*time.Millisecond)
	holdAt(t, gate, 4) // research_agent has handed back: two transfers done, two to come
	tb.open(t, b.base+"/runs/"+id)
	tb.waitFor(t, "the first two transfer edges", `document.querySelectorAll('[data-testid=transfer-edge]').length === 2`)
	before := tb.state(t)
	if before.Status != string(traces.StatusRunning) {
		t.Fatalf("the run held mid-way shows status %s, want running", before.Status)
	}
	tb.do(t, "reload", chromedp.Reload())
	tb.waitFor(t, "the reloaded page", `document.readyState === 'complete' && document.body.dataset.page === 'run'`)
	after := tb.state(t)
	t.Logf("before the reload: %d rows, %d edges; after: %d rows, %d edges, status %s",
		len(before.Seqs), len(before.Edges), len(after.Seqs), len(after.Edges), after.Status)
	if !isSubset(before.Seqs, after.Seqs) {
		t.Errorf("rows after the reload %v lack some of before %v", after.Seqs, before.Seqs)
	}
	if !isSubset(edgeStrings(before.Edges), edgeStrings(after.Edges)) {
		t.Errorf("edges after the reload %v lack some of before %v", after.Edges, before.Edges)
	}
	gate.Open()
	tb.waitStatus(t, "completed")
	final := tb.state(t)
	tr := b.trace(t, id)
	if !contiguous(final.Seqs, len(tr.Events)) {
		t.Errorf("timeline rows %v, want each of 1..%d once", final.Seqs, len(tr.Events))
	}
	if got := edgeStrings(final.Edges); !slices.Equal(got, supervisorEdges) {
		t.Errorf("final edges = %q, want %q", got, supervisorEdges)
	}
}

// TestTwoViewers: two tabs on one run end up showing the same thing.
func TestTwoViewers(t *testing.T) {
	t.Parallel()
	supervisor, gate := gated(t, "supervisor")
	b := startBaton(t, supervisor)
	one := newTab(t, nil)
	two := newTab(t, one)
	id := b.startRun(t, "supervisor", 100*time.Millisecond)
	holdAt(t, gate, 4) // both tabs open on a run half done, then follow the rest
	one.open(t, b.base+"/runs/"+id)
	two.open(t, b.base+"/runs/"+id)
	if s := two.state(t); s.Status != string(traces.StatusRunning) {
		t.Fatalf("the run held mid-way shows status %s, want running", s.Status)
	}
	gate.Open()
	one.waitStatus(t, "completed")
	two.waitStatus(t, "completed")
	s1, s2 := one.state(t), two.state(t)
	tr := b.trace(t, id)
	for i, s := range []pageState{s1, s2} {
		if !contiguous(s.Seqs, len(tr.Events)) {
			t.Errorf("viewer %d: rows %v, want 1..%d", i+1, s.Seqs, len(tr.Events))
		}
	}
	if !slices.Equal(s1.Seqs, s2.Seqs) {
		t.Errorf("rows differ:\n%v\n%v", s1.Seqs, s2.Seqs)
	}
	if !slices.Equal(s1.Edges, s2.Edges) || !slices.Equal(edgeStrings(s1.Edges), supervisorEdges) {
		t.Errorf("edges differ or are wrong:\n%v\n%v", s1.Edges, s2.Edges)
	}
	if !mapsEqual(s1.Nodes, s2.Nodes) || len(s1.Nodes) != 3 {
		t.Errorf("node states differ:\n%v\n%v", s1.Nodes, s2.Nodes)
	}
}
