package web_test

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/baton-dev/baton/internal/webtest"
	"github.com/baton-dev/baton/traces"
	"github.com/baton-dev/baton/web"
)

// generated are the trees past a handful of agents: 10 and 20 agents 5 levels deep (with
// AgentTool frames and a name too long for any box), a supervisor fanning out to 8
// specialists over 22 transfers, and supervisors with 8, 12 and 20 specialists.
func generated() map[string]traces.Trace {
	return map[string]traces.Trace{
		"tree 10 depth 5":   webtest.Tree(10, 5),
		"tree 20 depth 5":   webtest.Tree(20, 5),
		"fan 8 22":          webtest.Fan(8, 22),
		"specialists 8 22":  webtest.Specialists(8, 11),
		"specialists 12 22": webtest.Specialists(12, 11),
		"specialists 20 22": webtest.Specialists(20, 11),
	}
}

// shapeBounds are the most a generated tree may be wide for each unit of height: one column per
// leaf made them 1.43, 3.32, 3.55, 2.90, 3.99 and 5.72 (4,252 px wide for 20 specialists), a
// long strip of which Fit shows a sliver.
var shapeBounds = map[string]float64{"tree 10 depth 5": 1.6, "tree 20 depth 5": 2.6, "fan 8 22": 2,
	"specialists 8 22": 2, "specialists 12 22": 2, "specialists 20 22": 2}

// badge is a drawn badge's box and what it numbers.
type badge struct {
	what string
	box  web.Rect
}

// badges returns the badges g shows with its bundles collapsed (expanded false) or expanded:
// transfers' order numbers, bundles' counts, AgentTool arrows' order numbers.
func badges(g web.Graph, expanded bool) []badge {
	var out []badge
	circle := func(what string, p web.Point, r float64) badge {
		return badge{what, web.Rect{X: p.X - r, Y: p.Y - r, W: 2 * r, H: 2 * r}}
	}
	for _, e := range g.Transfers {
		if e.Path != "" && (expanded || !e.Bundled) {
			out = append(out, circle("transfer "+strconv.Itoa(e.Order), e.Label, web.BadgeR))
		}
	}
	if !expanded {
		for _, b := range g.Bundles {
			w := b.BadgeW()
			out = append(out, badge{"bundle " + b.From + "→" + b.To, web.Rect{X: b.Label.X - w/2, Y: b.Label.Y - web.BadgeR, W: w, H: 2 * web.BadgeR}})
		}
	}
	for _, b := range g.Boundaries {
		if b.Order > 0 {
			out = append(out, circle("call of "+b.Callee, b.CallBadge, web.AtBadgeR), circle("result of "+b.Callee, b.ResultBadge, web.AtBadgeR))
		}
	}
	return out
}

// TestGeneratedTreesLegible: on trees of 10 and 20 agents 5 levels deep and a fan of 8
// specialists with 22 transfers, no boxes overlap, no badge covers another badge or a box,
// collapsed or expanded, all inside the drawing; every name is drawn whole or, cut, with the
// widest box; the zoom the page opens at keeps the smallest text at the minimum size; and the
// drawing is no wider for its height than shapeBounds allow.
func TestGeneratedTreesLegible(t *testing.T) {
	if web.MinZoom*web.SmallestFont < web.MinFont || web.MinZoom >= 1 {
		t.Fatalf("MinZoom %.3f: the smallest text (%vpx) at %.1fpx", web.MinZoom, web.SmallestFont, web.MinZoom*web.SmallestFont)
	}
	for name, tr := range generated() {
		t.Run(name, func(t *testing.T) {
			if err := traces.Validate(tr); err != nil {
				t.Fatal(err)
			}
			g := web.WholeGraph(tr)
			if len(g.Nodes) != len(tr.Agents) {
				t.Fatalf("%d nodes for %d agents", len(g.Nodes), len(tr.Agents))
			}
			t.Logf("drawing %.0f x %.0f", g.Width, g.Height)
			if k := g.Width / g.Height; k > shapeBounds[name] {
				t.Errorf("drawing %.0fx%.0f: %.2f wide for each unit of height, want at most %.2f", g.Width, g.Height, k, shapeBounds[name])
			}
			view := web.Rect{W: g.Width, H: g.Height}
			for i, n := range g.Nodes {
				if !view.Contains(n.Box) {
					t.Errorf("%s at %+v outside the drawing %vx%v", n.Name, n.Box, g.Width, g.Height)
				}
				for _, o := range g.Nodes[i+1:] {
					if n.Box.Overlaps(o.Box) {
						t.Errorf("boxes of %s and %s overlap", n.Name, o.Name)
					}
				}
				// The name's estimated width (as the box is sized) fits; a cut name ends in "…"
				// and only where even the widest box could not hold it.
				if w := web.NameX + float64(len([]rune(n.Label)))*9.4 + 12; w > n.Box.W+0.01 {
					t.Errorf("%s: label %q needs %.0f, box is %.0f wide", n.Name, n.Label, w, n.Box.W)
				}
				if n.Label != n.Name && (!strings.HasSuffix(n.Label, "…") || !strings.HasPrefix(n.Name, strings.TrimSuffix(n.Label, "…")) || n.Box.W < web.MaxNodeW) {
					t.Errorf("%s shown as %q in a box %.0f wide", n.Name, n.Label, n.Box.W)
				}
				if n.Name != webtest.LongName && n.Label != n.Name {
					t.Errorf("%s is cut to %q", n.Name, n.Label)
				}
			}
			for _, expanded := range []bool{false, true} {
				bs := badges(g, expanded)
				for i, b := range bs {
					if !view.Contains(b.box) {
						t.Errorf("expanded %v: %s at %+v outside the drawing", expanded, b.what, b.box)
					}
					for _, o := range bs[i+1:] {
						if b.box.Overlaps(o.box) {
							t.Errorf("expanded %v: %s and %s overlap", expanded, b.what, o.what)
						}
					}
					for _, n := range g.Nodes {
						if b.box.Overlaps(n.Box) {
							t.Errorf("expanded %v: %s covers the box of %s", expanded, b.what, n.Name)
						}
					}
				}
			}
		})
	}
}

// TestTreeDepthAndFrames: the generated trees are as deep as asked, and their AgentTool
// arrows are numbered 1..n in the order the calls entered, their badges inside their frames.
func TestTreeDepthAndFrames(t *testing.T) {
	for _, n := range []int{10, 20} {
		g := web.WholeGraph(webtest.Tree(n, 5))
		deepest := 0
		for _, nd := range g.Nodes {
			deepest = max(deepest, nd.Depth)
		}
		if deepest != 5 {
			t.Errorf("tree of %d: deepest agent at depth %d, want 5", n, deepest)
		}
		if len(g.Boundaries) == 0 {
			t.Fatalf("tree of %d has no AgentTool frame", n)
		}
		bs := slices.Clone(g.Boundaries)
		slices.SortFunc(bs, func(x, y web.Boundary) int { return int(x.CallSeq - y.CallSeq) })
		for i, b := range bs {
			if b.Order != i+1 {
				t.Errorf("tree of %d: %s, called %d-th, is numbered %d", n, b.Callee, i+1, b.Order)
			}
			for _, p := range []web.Point{b.CallBadge, b.ResultBadge} {
				r := web.Rect{X: p.X - web.AtBadgeR, Y: p.Y - web.AtBadgeR, W: 2 * web.AtBadgeR, H: 2 * web.AtBadgeR}
				if !b.Frame.Contains(r) {
					t.Errorf("tree of %d: a badge of %s at %v is outside its frame %+v", n, b.Callee, p, b.Frame)
				}
			}
		}
	}
}

// TestRepeatedTransfersBundle: in the fan, each direction taken more than once is one bundle
// with its count, drawn along its newest edge with its badge there; every transfer is counted
// once, bundled or drawn alone; and inspecting any of a bundle's transfers lists them all.
func TestRepeatedTransfersBundle(t *testing.T) {
	tr := webtest.Fan(8, 22)
	g := web.NewGraph(tr)
	perPair := map[[2]string]int{}
	for _, e := range tr.Events {
		if e.Transfer != nil {
			perPair[[2]string{e.Transfer.From, e.Transfer.To}]++
		}
	}
	if len(g.Bundles) != 2 {
		t.Fatalf("%d bundles, want the 2 directions between supervisor and network_specialist", len(g.Bundles))
	}
	counted := 0
	for _, b := range g.Bundles {
		if b.Count != perPair[[2]string{b.From, b.To}] || b.Count != 4 {
			t.Errorf("bundle %s→%s counts %d, the run made %d", b.From, b.To, b.Count, perPair[[2]string{b.From, b.To}])
		}
		var members []web.TransferEdge
		for _, e := range g.Transfers {
			if e.From == b.From && e.To == b.To {
				members = append(members, e)
			}
		}
		newest := members[len(members)-1]
		if !slices.IsSorted(b.Orders) || len(b.Orders) != len(members) || b.Seq != newest.Seq || b.Path != newest.Path || b.Label != newest.Label {
			t.Errorf("bundle %s→%s: orders %v, seq %d, label %v; its newest edge: seq %d, label %v", b.From, b.To, b.Orders, b.Seq, b.Label, newest.Seq, newest.Label)
		}
		counted += b.Count
		in, err := web.NewInspection(tr, members[0].Seq)
		if err != nil {
			t.Fatal(err)
		}
		if len(in.Pair) != b.Count || !strings.Contains(in.PairTitle, b.From+" → "+b.To) || in.Pair[len(in.Pair)-1].Seq != b.Seq {
			t.Errorf("inspector of transfer %d lists %v (%q)", members[0].Order, in.Pair, in.PairTitle)
		}
	}
	for _, e := range g.Transfers {
		if bundled := perPair[[2]string{e.From, e.To}] > 1; e.Bundled != bundled {
			t.Errorf("transfer %d %s→%s: bundled %v", e.Order, e.From, e.To, e.Bundled)
		} else if !bundled {
			counted++
		}
	}
	if counted != g.TransferCount || g.TransferCount != 22 {
		t.Errorf("bundles and single edges count %d transfers, the run made %d", counted, g.TransferCount)
	}
	alone := g.Transfers[slices.IndexFunc(g.Transfers, func(e web.TransferEdge) bool { return !e.Bundled })]
	if in, err := web.NewInspection(tr, alone.Seq); err != nil || len(in.Pair) != 0 {
		t.Errorf("transfer %d, alone in its direction, lists %v (%v)", alone.Order, in.Pair, err)
	}
}

// BenchmarkGraphGenerated measures drawing the generated trees from their traces: analysing the
// events, laying out and routing the tree, bundling the transfers.
//
//	go test ./web -run '^$' -bench GraphGenerated -count 5
func BenchmarkGraphGenerated(b *testing.B) {
	for _, name := range []string{"tree 10 depth 5", "tree 20 depth 5", "fan 8 22", "specialists 20 22"} {
		tr := generated()[name]
		b.Run(strings.ReplaceAll(name, " ", "_"), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				web.NewGraph(tr)
			}
		})
	}
}
