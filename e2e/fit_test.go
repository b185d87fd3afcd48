package e2e_test

import (
	"testing"

	"github.com/chromedp/chromedp/kb"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/internal/webtest"
)

// insidePanelJS lists the agents of the tree drawn (the nodes of open team cards too) whose
// boxes are not wholly inside the tree panel's visible area, and whose names are drawn smaller
// than min px.
const insidePanelJS = `((min) => {
  const p = document.getElementById('graph-scroll').getBoundingClientRect();
  const out = [], small = [];
  for (const n of document.querySelectorAll('#graph .node')) {
    const r = n.querySelector('.node-box').getBoundingClientRect();
    if (r.width === 0) continue; // in a closed team card
    if (r.left < p.left - 0.5 || r.top < p.top - 0.5 || r.right > p.right + 0.5 || r.bottom > p.bottom + 0.5) out.push(n.dataset.agent);
    const name = n.querySelector('.node-name');
    const svg = document.querySelector('#graph svg');
    const px = parseFloat(getComputedStyle(name).fontSize) * svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
    if (px < min - 0.01) small.push(n.dataset.agent + ' ' + px.toFixed(1));
  }
  return {out, small, agents: document.querySelectorAll('#graph .node').length};
})`

// cardCoversJS lists the agents of the tree, outside the open team card, whose boxes its box
// intersects on screen.
const cardCoversJS = `(() => {
  const card = document.querySelector('.team-card.open');
  if (!card) return ['no open card'];
  const c = card.querySelector('.team-card-box').getBoundingClientRect();
  const out = [];
  for (const n of document.querySelectorAll('#graph .node')) {
    if (card.contains(n)) continue;
    const r = n.querySelector('.node-box').getBoundingClientRect();
    if (r.width > 0 && r.left < c.right && c.left < r.right && r.top < c.bottom && c.top < r.bottom) out.push(n.dataset.agent);
  }
  return out;
})()`

// treeSettledJS says whether the tree's last fit was for the panel as it now is (graph.js's
// data-fit-for): on a narrow page the panel is as tall as the tree, so a fit resizes it and the
// page fits again, a few frames on, until a fit leaves the size it was for. Until then the tree
// moves: what is measured or clicked there is not what the reader will see.
const treeSettledJS = `(() => { const b = document.getElementById('graph-scroll');
  return b.dataset.fitFor === b.clientWidth + 'x' + b.clientHeight; })()`

type inside struct {
	Out, Small []string
	Agents     int
}

// checkFitted presses Fit and checks that every agent box drawn lies inside the tree panel,
// its name no smaller than the page's least text.
func checkFitted(t *testing.T, tb *tab, where string) {
	t.Helper()
	tb.click(t, "#zoom-fit")
	tb.waitFor(t, where+": fitted, the tree settled", treeSettledJS)
	got := evalJS[inside](t, tb, insidePanelJS+`(11)`)
	if got.Agents == 0 || len(got.Out) > 0 || len(got.Small) > 0 {
		t.Errorf("%s: after Fit, of %d agents, outside the panel: %v; names under 11px: %v", where, got.Agents, got.Out, got.Small)
	}
}

// TestEveryFlowFits: at 1440x900 and 800x900, after Fit every agent box of every catalogue flow
// lies inside the tree panel, its name legible (the overview draws names larger); Maximise gives
// the panel the page, and the tree fits it too.
func TestEveryFlowFits(t *testing.T) {
	t.Parallel()
	b := startBaton(t)
	ids := map[string]string{}
	for _, f := range agents.Catalogue() {
		ids[f.Name] = b.startRun(t, f.Name, 0)
	}
	for _, id := range ids {
		b.waitRunEnded(t, id, waitTimeout)
	}
	tb := newTab(t, nil)
	for _, size := range [][2]int64{{1440, 900}, {800, 900}} {
		tb.view(t, size[0], size[1], "light")
		for _, f := range agents.Catalogue() {
			tb.open(t, b.base+"/runs/"+ids[f.Name])
			checkFitted(t, tb, f.Name+" at "+itoa(int(size[0])))
		}
	}
	// workflow's loop shows on the agents it ran, with their iteration.
	tb.open(t, b.base+"/runs/"+ids["workflow"])
	loops := evalJS[[]string](t, tb, `Array.from(document.querySelectorAll('[data-testid=node-loop]')).map(l => l.closest('.node').dataset.agent + ' ' + l.textContent)`)
	if len(loops) == 0 {
		t.Errorf("workflow: no agent shows its loop's iteration")
	}
	t.Logf("workflow's loops: %v", loops)

	tb.view(t, 1440, 900, "light")
	tb.open(t, b.base+"/runs/"+ids["supervisor"])
	before := evalJS[float64](t, tb, `document.getElementById('graph-scroll').getBoundingClientRect().width`)
	tb.click(t, "#tree-max")
	tb.waitFor(t, "the agents panel maximised", `document.getElementById('graph-scroll').getBoundingClientRect().width > `+jsFloat(before+300)+
		` && document.getElementById('tree-max').getAttribute('aria-pressed') === 'true' && !document.getElementById('inspector-panel').checkVisibility()`)
	checkFitted(t, tb, "supervisor maximised")
	tb.click(t, "#tree-max")
	tb.waitFor(t, "the agents panel back", `document.getElementById('inspector-panel').checkVisibility()`)
}

// TestTeamsCollapse: the 20-agent, 40-transfer tree of four teams opens with the supervisor and
// its four team leads on screen, each lead standing for its team, with the handoffs between
// them numbered; a team's badge opens its card of agents, which the fitted tree holds too and
// which covers no other agent, and one of them inspects; the badge closes it again; another
// team's badge opens its card in place of the first's.
func TestTeamsCollapse(t *testing.T) {
	t.Parallel()
	b := startBaton(t)
	id := importTrace(t, b, webtest.Teams([]int{4, 4, 4, 3}, 40))
	tb := newTab(t, nil)
	for _, size := range [][2]int64{{1440, 900}, {800, 900}} {
		tb.view(t, size[0], size[1], "light")
		tb.open(t, b.base+"/runs/"+id)
		evalJS[bool](t, tb, `(window.drawn = (el) => !!el && el.getBoundingClientRect().width > 0, true)`)
		at := itoa(int(size[0]))
		tb.waitFor(t, "the tree fitted at "+at+", settled", treeSettledJS)
		got := evalJS[inside](t, tb, insidePanelJS+`(11)`)
		if got.Agents != 20 || len(got.Out) > 0 || len(got.Small) > 0 {
			t.Errorf("at %s the tree opens with %d agents (want 20, 15 of them in cards), outside the panel %v, names under 11px %v", at, got.Agents, got.Out, got.Small)
		}
		leads := evalJS[[]string](t, tb, `Array.from(document.querySelectorAll('[data-testid=team-badge]')).map(b => b.dataset.team + ' ' + b.querySelector('.badge-body').textContent.trim())`)
		want := []string{"billing_lead team +4", "shipping_lead team +4", "returns_lead team +4", "warranty_lead team +3"}
		if len(leads) != len(want) {
			t.Fatalf("at %s the teams are %v, want %v", at, leads, want)
		}
		for i := range want {
			if leads[i] != want[i] {
				t.Errorf("at %s team %d is %q, want %q", at, i, leads[i], want[i])
			}
		}
		// The handoffs to the leads are drawn, bundled per direction, on screen.
		if n := evalJS[int](t, tb, `Array.from(document.querySelectorAll('[data-testid=bundle-badge]')).filter(b => drawn(b)).length`); n != 8 {
			t.Errorf("at %s %d bundles drawn, want 8 (to and from each lead)", at, n)
		}
		tb.click(t, `[data-testid=team-badge][data-team=billing_lead]`) // on the settled tree: where the click lands
		tb.waitFor(t, "billing's team open", `document.querySelector('[data-testid=team-badge][data-team=billing_lead]').getAttribute('aria-expanded') === 'true' && drawn(document.querySelector('[data-testid=node-billing_agent_1] .node-box'))`)
		checkFitted(t, tb, "billing's team open at "+at)
		if covered := evalJS[[]string](t, tb, cardCoversJS); len(covered) > 0 {
			t.Errorf("at %s billing's open card covers %v", at, covered)
		}
		tb.click(t, `[data-testid=node-billing_agent_3]`)
		tb.waitFor(t, "billing_agent_3 inspected", `!!document.querySelector('[data-testid=agent-summary]') && document.querySelector('[data-testid=agent-summary]').textContent.includes('billing_agent_3')`)
		tb.press(t, kb.Escape) // at 800 px the inspector is a drawer over the tree
		// The drawer slides away to the right: click shipping's badge (right of billing's, so
		// uncovered later) once the drawer no longer covers it (on a loaded machine its transition
		// is still running when Escape returns).
		tb.waitFor(t, "shipping's badge uncovered", `(() => { const b = document.querySelector('[data-testid=team-badge][data-team=shipping_lead]');
		  const r = b.getBoundingClientRect(); const at = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2);
		  return !!at && b.contains(at); })()`)
		// Another team's card opens in billing's place: one at a time, so that they never cover
		// each other; it covers no node either.
		tb.click(t, `[data-testid=team-badge][data-team=shipping_lead]`)
		tb.waitFor(t, "shipping's team open, billing's closed", `drawn(document.querySelector('[data-testid=node-shipping_agent_1] .node-box')) &&
		  !drawn(document.querySelector('[data-testid=node-billing_agent_1] .node-box')) && document.querySelector('[data-testid=team-badge][data-team=billing_lead]').getAttribute('aria-expanded') === 'false'`)
		tb.waitFor(t, "the tree fitted again with shipping's card, settled", treeSettledJS)
		if covered := evalJS[[]string](t, tb, cardCoversJS); len(covered) > 0 {
			t.Errorf("at %s shipping's open card covers %v", at, covered)
		}
		tb.click(t, `[data-testid=team-badge][data-team=shipping_lead]`)
		tb.waitFor(t, "shipping's team closed", `!drawn(document.querySelector('[data-testid=node-shipping_agent_1] .node-box'))`)
	}
	tb.checkAxe(t, "teams collapsed")
}
