package web_test

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/baton-dev/baton/internal/webtest"
	"github.com/baton-dev/baton/traces"
	"github.com/baton-dev/baton/web"
)

// drawing is a line of the graph: what it is, and its route.
type drawing struct {
	what     string
	from, to string
	route    web.Route
}

// drawings returns every line of g: tree links, AgentTool calls and results, drawn transfers.
func drawings(g web.Graph) []drawing {
	var out []drawing
	for _, l := range g.Links {
		out = append(out, drawing{"link " + l.From + "-" + l.To, l.From, l.To, l.Route})
	}
	for _, b := range g.Boundaries {
		out = append(out, drawing{"call of " + b.Callee, b.Caller, b.Callee, b.Call},
			drawing{"result of " + b.Callee, b.Callee, b.Caller, b.Result})
	}
	for _, e := range g.Transfers {
		if e.Path != "" {
			out = append(out, drawing{fmt.Sprintf("transfer %d %s->%s", e.Order, e.From, e.To), e.From, e.To, e.Route})
		}
	}
	return out
}

// fanned reports whether d runs between a parent and its child: a line of that parent's fan.
func fanned(g web.Graph, d drawing) bool {
	return node0(g, d.to).Parent == d.from || node0(g, d.from).Parent == d.to
}

func node0(g web.Graph, name string) web.Node {
	for _, n := range g.Nodes {
		if n.Name == name {
			return n
		}
	}
	return web.Node{}
}

func TestEveryLineIsDrawn(t *testing.T) {
	for name, tr := range shapes() {
		g := web.NewGraph(tr)
		for _, d := range drawings(g) {
			if len(d.route) == 0 {
				t.Errorf("%s: %s has no route", name, d.what)
			}
		}
		for _, l := range g.Links {
			if l.Path == "" || l.A != l.Route.Start() || l.B != l.Route.End() {
				t.Errorf("%s: link %s-%s: path %q, ends %v %v", name, l.From, l.To, l.Path, l.A, l.B)
			}
		}
	}
}

// TestFanLinesDoNotCross: the lines between a parent and its children (links, AgentTool pairs,
// transfers either way) never cross or touch each other, in any fan; lines that are not in a
// fan may cross them.
func TestFanLinesDoNotCross(t *testing.T) {
	for name, tr := range shapes() {
		t.Run(name, func(t *testing.T) {
			g := web.NewGraph(tr)
			var ds []drawing
			for _, d := range drawings(g) {
				if fanned(g, d) {
					ds = append(ds, d)
				}
			}
			for i, d := range ds {
				p := d.route.Points(24)
				for _, o := range ds[i+1:] {
					if dist := polylineDist(p, o.route.Points(24)); dist < 3 {
						t.Errorf("%s and %s come %.1f apart", d.what, o.what, dist)
					}
				}
			}
		})
	}
}

// TestAgentToolPairsInCalleeOrder: a caller's pairs leave it in the order of their callees, left
// to right, each with its result left of its call at both ends, so pairs nest instead of
// crossing.
func TestAgentToolPairsInCalleeOrder(t *testing.T) {
	for name, tr := range map[string]traces.Trace{"agenttool": webtest.AgentTool(), "wide": webtest.Wide(3)} {
		g := web.NewGraph(tr)
		bs := slices.Clone(g.Boundaries)
		slices.SortFunc(bs, func(a, b web.Boundary) int { return int(node0(g, a.Callee).Box.X - node0(g, b.Callee).Box.X) })
		last := math.Inf(-1)
		for _, b := range bs {
			atCaller := []float64{b.Result.End().X, b.Call.Start().X}
			atCallee := []float64{b.Result.Start().X, b.Call.End().X}
			if atCaller[0] <= last || atCaller[1] <= atCaller[0] || atCallee[1] <= atCallee[0] {
				t.Errorf("%s: %s's pair at %v on the caller (after %v), %v on the callee", name, b.Callee, atCaller, last, atCallee)
			}
			last = atCaller[1]
			if b.ResultLabel.X >= b.CallLabel.X || b.ResultAnchor != "end" || b.CallAnchor != "start" {
				t.Errorf("%s: labels of %s: result %v %s, call %v %s", name, b.Callee, b.ResultLabel, b.ResultAnchor, b.CallLabel, b.CallAnchor)
			}
		}
	}
}

// TestArrowsEndOnBoxEdges: every line leaves its tail's box from an edge and stops just short
// of its head's box, over the straight part of an edge (not a rounded corner, not the colour
// band), so its arrowhead is whole and outside every box. Lines of a fan meet boxes square-on.
func TestArrowsEndOnBoxEdges(t *testing.T) {
	for name, tr := range shapes() {
		t.Run(name, func(t *testing.T) {
			g := web.NewGraph(tr)
			for _, d := range drawings(g) {
				from, to := node0(g, d.from).Box, node0(g, d.to).Box
				if gap, ok := onEdge(from, d.route.Start()); !ok || gap > 1 {
					t.Errorf("%s starts at %v, %.1f off an edge of %s %+v", d.what, d.route.Start(), gap, d.from, from)
				}
				if gap, ok := onEdge(to, d.route.End()); !ok || gap < 2 || gap > 6 {
					t.Errorf("%s ends at %v, %.1f off an edge of %s %+v", d.what, d.route.End(), gap, d.to, to)
				}
				for _, p := range head(d.route, 12) {
					for _, n := range g.Nodes {
						if inside(n.Box, p, 0) {
							t.Errorf("%s: its arrowhead at %v is under %s", d.what, p, n.Name)
						}
					}
				}
				// Square-on: down into a top edge, or sideways into a stacked leaf's left side.
				last, side := d.route[len(d.route)-1], d.route.End().X < to.X
				if fanned(g, d) && (!side && math.Abs(last.B.X-last.C2.X) > 1e-6 || side && math.Abs(last.B.Y-last.C2.Y) > 1e-6) {
					t.Errorf("%s meets %s at a slant: %+v", d.what, d.to, last)
				}
			}
		})
	}
}

// TestLinesAvoidBoxes: no line runs through a box.
func TestLinesAvoidBoxes(t *testing.T) {
	for name, tr := range shapes() {
		g := web.NewGraph(tr)
		for _, d := range drawings(g) {
			for _, p := range d.route.Points(24) {
				for _, n := range g.Nodes {
					if inside(n.Box, p, 1) {
						t.Errorf("%s: %s runs through %s at %v", name, d.what, n.Name, p)
						break
					}
				}
			}
		}
	}
}

// TestBadgesClear: order badges do not cover each other or a tree link, and sit in the
// viewBox.
func TestBadgesClear(t *testing.T) {
	const r = 12 // the badge's radius, as graph.templ draws it
	for name, tr := range shapes() {
		t.Run(name, func(t *testing.T) {
			g := web.NewGraph(tr)
			var badges []web.TransferEdge
			for _, e := range g.Transfers {
				if e.Path != "" {
					badges = append(badges, e)
				}
			}
			view := web.Rect{W: g.Width, H: g.Height}
			for i, e := range badges {
				if !view.Contains(web.Rect{X: e.Label.X - r, Y: e.Label.Y - r, W: 2 * r, H: 2 * r}) {
					t.Errorf("badge %d at %v outside the viewBox", e.Order, e.Label)
				}
				for _, o := range badges[i+1:] {
					if d := math.Hypot(e.Label.X-o.Label.X, e.Label.Y-o.Label.Y); d < 2*r {
						t.Errorf("badges %d and %d overlap: %.1f apart", e.Order, o.Order, d)
					}
				}
				for _, l := range g.Links {
					if d := pointPolylineDist(e.Label, l.Route.Points(24)); d < r+1 {
						t.Errorf("badge %d covers the link %s-%s (%.1f from it)", e.Order, l.From, l.To, d)
					}
				}
			}
		})
	}
}

// TestFrameTextClear: a frame's caption and note are inside it, under what it holds, and no line
// crosses them; its call and result labels are inside its top, above the callee.
func TestFrameTextClear(t *testing.T) {
	for name, tr := range map[string]traces.Trace{"agenttool": webtest.AgentTool(), "wide": webtest.Wide(3)} {
		g := web.NewGraph(tr)
		for _, b := range g.Boundaries {
			callee := node0(g, b.Callee).Box
			if !b.Frame.Contains(b.Text) || b.Text.Y < callee.Bottom() || len(b.Lines) != len(b.CaptionLines)+len(b.NoteLines) {
				t.Errorf("%s: text of %s at %+v, frame %+v, callee %+v", name, b.Callee, b.Text, b.Frame, callee)
			}
			for _, n := range g.Nodes {
				if b.Text.Overlaps(n.Box) {
					t.Errorf("%s: text of %s covers %s", name, b.Callee, n.Name)
				}
			}
			for _, d := range drawings(g) {
				if crossesRect(d.route.Points(24), b.Text) {
					t.Errorf("%s: %s crosses the text of %s's frame", name, d.what, b.Callee)
				}
			}
			for _, l := range []web.Point{b.CallLabel, b.ResultLabel} {
				if l.Y-11 < b.Frame.Y || l.Y > callee.Y || l.X < b.Frame.X || l.X > b.Frame.Right() {
					t.Errorf("%s: a label of %s's pair at %v is not in the frame's top %+v", name, b.Callee, l, b.Frame)
				}
			}
		}
	}
}

// TestBuiltInFlowsFitThePanel: at 1280x800 the tree panel shows 672x360 of drawing, and the
// tree's smallest text is 13.5px: the three built-in flows fit it with that text at 12px or
// more, and with transfer lanes at least rowGap tall.
func TestBuiltInFlowsFitThePanel(t *testing.T) {
	const panelW, panelH, smallest, least = 672.0, 360.0, 13.5, 12.0
	for name, tr := range map[string]traces.Trace{"supervisor": webtest.Supervisor(), "transfer": webtest.Transfer(), "agenttool": webtest.AgentTool()} {
		g := web.NewGraph(tr)
		scale := min(1, panelW/g.Width, panelH/g.Height)
		if smallest*scale < least {
			t.Errorf("%s: %vx%v is drawn at %.2f, its text at %.1fpx", name, g.Width, g.Height, scale, smallest*scale)
		}
	}
	g := web.NewGraph(webtest.Supervisor())
	if gap := node0(g, "research_agent").Box.Y - node0(g, "supervisor").Box.Bottom(); gap < 120 {
		t.Errorf("supervisor's transfer lanes get %v", gap)
	}
}

// onEdge returns how far p is outside r, and whether it faces the straight part of one of r's
// edges: clear of the rounded corners (10) and, on the left, of the colour band (7).
func onEdge(r web.Rect, p web.Point) (float64, bool) {
	const corner, band = 10.0, 7.0
	switch {
	case p.Y <= r.Y || p.Y >= r.Bottom():
		return math.Max(r.Y-p.Y, p.Y-r.Bottom()), p.X >= r.X+band+corner && p.X <= r.Right()-corner
	case p.X <= r.X || p.X >= r.Right():
		return math.Max(r.X-p.X, p.X-r.Right()), p.Y >= r.Y+corner && p.Y <= r.Bottom()-corner
	}
	return -1, false
}

// head returns the points of the last length units of r.
func head(r web.Route, length float64) []web.Point {
	p := r.Points(48)
	out := []web.Point{p[len(p)-1]}
	for i := len(p) - 2; i >= 0 && length > 0; i-- {
		length -= math.Hypot(p[i+1].X-p[i].X, p[i+1].Y-p[i].Y)
		out = append(out, p[i])
	}
	return out
}

// inside reports whether p is inside r shrunk by in on every side.
func inside(r web.Rect, p web.Point, in float64) bool {
	return p.X > r.X+in && p.X < r.Right()-in && p.Y > r.Y+in && p.Y < r.Bottom()-in
}

func polylineDist(a, b []web.Point) float64 {
	d := math.Inf(1)
	for i := 1; i < len(a); i++ {
		for j := 1; j < len(b); j++ {
			d = math.Min(d, segDist(a[i-1], a[i], b[j-1], b[j]))
		}
	}
	return d
}

func pointPolylineDist(p web.Point, l []web.Point) float64 {
	d := math.Inf(1)
	for i := 1; i < len(l); i++ {
		d = math.Min(d, pointSegDist(p, l[i-1], l[i]))
	}
	return d
}

// segDist is the distance between segments ab and cd: 0 when they cross.
func segDist(a, b, c, d web.Point) float64 {
	cross := func(o, p, q web.Point) float64 { return (p.X-o.X)*(q.Y-o.Y) - (p.Y-o.Y)*(q.X-o.X) }
	if d1, d2, d3, d4 := cross(a, b, c), cross(a, b, d), cross(c, d, a), cross(c, d, b); d1*d2 < 0 && d3*d4 < 0 {
		return 0
	}
	return math.Min(math.Min(pointSegDist(a, c, d), pointSegDist(b, c, d)), math.Min(pointSegDist(c, a, b), pointSegDist(d, a, b)))
}

func pointSegDist(p, a, b web.Point) float64 {
	dx, dy := b.X-a.X, b.Y-a.Y
	t := 0.0
	if n := dx*dx + dy*dy; n > 0 {
		t = math.Max(0, math.Min(1, ((p.X-a.X)*dx+(p.Y-a.Y)*dy)/n))
	}
	return math.Hypot(p.X-a.X-t*dx, p.Y-a.Y-t*dy)
}

// crossesRect reports whether the polyline l enters r.
func crossesRect(l []web.Point, r web.Rect) bool {
	corners := []web.Point{{X: r.X, Y: r.Y}, {X: r.Right(), Y: r.Y}, {X: r.Right(), Y: r.Bottom()}, {X: r.X, Y: r.Bottom()}}
	for i := range l {
		if inside(r, l[i], 0) {
			return true
		}
		if i == 0 {
			continue
		}
		for k := range corners {
			if segDist(l[i-1], l[i], corners[k], corners[(k+1)%4]) == 0 {
				return true
			}
		}
	}
	return false
}
