package web

import (
	"cmp"
	"math"
	"slices"
)

// How the graph draws its lines. A parent's lines to its children (tree links, AgentTool call
// and result arrows, transfers either way) form a fan. Each line has a port of its own on the
// parent's bottom edge and one on the child's top edge; a fan's ports are grouped in one bundle
// per child, ordered like the children, left to right, on both ends. A line goes straight down
// when its child is under its port, and otherwise leaves its port downward, turns onto a
// horizontal track of its own and turns down into its child. Lines going left take higher tracks
// the further left they leave, lines going right the further right, so no two lines of a fan
// cross (a stacked leaf is entered from the left instead: see stack.go); every line meets the
// boxes square-on, away from their rounded corners and colour band, and every arrowhead stops
// arrowGap short of the box it points at, so it is never under it.

const (
	portInset = 24.0 // least distance of a port from a box's side: clear of the colour band and the rounded corners
	portStep  = 22.0 // room between neighbouring ports of a bundle, when the parent's edge has it
	minStep   = 12.0 // below this, arrowheads at neighbouring ports would touch
	sideStep  = 8.0  // between lines into a box's side when they do not both end in arrowheads
	bundleGap = 1.6  // extra room between two bundles on the parent, in port steps
	arrowGap  = 4.0  // between an arrowhead's end of a line and the box edge: clear of the thickest box stroke
	cornerR   = 10.0 // radius of a line's turns
	BadgeR    = 12.0 // radius of a transfer's order badge, and half the height of a bundle's count
	headRoom  = 16.0 // least straight run into a box at a line's ends, for its arrowhead
	earlierH  = 16.0 // room for a line of 13px text: the count of transfers a lane does not draw
)

// lineKind is what a line of a fan draws, in the order of a bundle: transfers up to the parent
// first, then the link or the AgentTool pair, then transfers down to the child.
type lineKind int

const (
	lineUp lineKind = iota
	lineLink
	lineResult
	lineCall
	lineDown
)

// fanLine is one line of a fan.
type fanLine struct {
	kind  lineKind
	child *slot
	edge  int     // index in Graph.Transfers, for lineUp and lineDown
	a, b  float64 // x of its ports on the parent's bottom and on the child's top
	track float64 // y of its horizontal run, when it bends
	enter float64 // y where it turns into a stacked child's left side
	top   float64 // y of the children's row: where the fan ends
	route Route   // from its tail to its head
	badge Point   // where a transfer's order badge sits
}

// route draws every line of g: the fans of each parent in slots, then the transfers no fan
// holds (between agents that are not parent and child). drawn[i] is whether g.Transfers[i] has
// a line.
func (g *Graph) route(slots []*slot, drawn []bool) {
	links := make(map[string]*Link, len(g.Links))
	for i := range g.Links {
		links[g.Links[i].To] = &g.Links[i]
	}
	bounds := make(map[string]*Boundary, len(g.Boundaries))
	for i := range g.Boundaries {
		bounds[g.Boundaries[i].Callee] = &g.Boundaries[i]
	}
	pairs := make(map[[2]string][]int) // drawn transfers of each direction, oldest first
	for i, e := range g.Transfers {
		if drawn[i] {
			pairs[[2]string{e.From, e.To}] = append(pairs[[2]string{e.From, e.To}], i)
		}
	}
	fanned := make([]bool, len(g.Transfers))
	boxes := make(map[string]Rect, len(slots))
	for _, p := range slots {
		boxes[p.m.Name] = p.box
		bundles, reserve := g.bundles(p, pairs)
		if len(bundles) == 0 {
			continue
		}
		for _, l := range fan(p, bundles, reserve) {
			if l.transfer() {
				fanned[l.edge] = true
			}
			g.draw(l, links, bounds)
		}
	}
	for i := range g.Transfers {
		e := &g.Transfers[i]
		if drawn[i] && !fanned[i] {
			e.Route, e.Label = transferRoute(boxes[e.From], boxes[e.To], laneOf(pairs, *e, i))
			e.Path = e.Route.Path()
			e.EarlierAt, e.EarlierAnchor = e.Label.add(Point{16, 5}), "start"
		}
	}
}

// bundles returns the bundles of p's fan, one per child with lines, and how much room under
// the fan's tracks to keep for counts of earlier transfers, written just above the children.
func (g *Graph) bundles(p *slot, pairs map[[2]string][]int) ([][]fanLine, float64) {
	var out [][]fanLine
	reserve := 0.0
	for _, k := range p.kids {
		b := bundle(k, pairs[[2]string{k.m.Name, p.m.Name}], pairs[[2]string{p.m.Name, k.m.Name}])
		for _, l := range b {
			if l.transfer() && g.Transfers[l.edge].Earlier > 0 {
				reserve = earlierH + BadgeR
			}
		}
		if len(b) > 0 {
			out = append(out, b)
		}
	}
	// Left to right as they end: a parent's columns of stacked leaves are one band among its
	// children, and in it each leaf's lines run down where placeCols put them.
	slices.SortStableFunc(out, func(x, y []fanLine) int { return cmp.Compare(x[0].child.portX(), y[0].child.portX()) })
	return out, reserve
}

// transfer reports whether l draws a transfer.
func (l fanLine) transfer() bool { return l.kind == lineUp || l.kind == lineDown }

// laneOf returns how many drawn transfers of e's direction are older than the i-th transfer.
func laneOf(pairs map[[2]string][]int, e TransferEdge, i int) int {
	return slices.Index(pairs[[2]string{e.From, e.To}], i)
}

// bundle returns the lines between a parent and its child k, left to right: the transfers up
// (oldest outermost), the link or the AgentTool pair, the transfers down (newest innermost).
func bundle(k *slot, up, down []int) []fanLine {
	var b []fanLine
	for _, i := range up {
		b = append(b, fanLine{kind: lineUp, child: k, edge: i})
	}
	switch {
	case k.frame:
		b = append(b, fanLine{kind: lineResult, child: k}, fanLine{kind: lineCall, child: k})
	case !k.m.missing:
		b = append(b, fanLine{kind: lineLink, child: k})
	}
	for j := len(down) - 1; j >= 0; j-- {
		b = append(b, fanLine{kind: lineDown, child: k, edge: down[j]})
	}
	return b
}

// fan places the ports, tracks and routes of the bundles from parent p to its children.
func fan(p *slot, bundles [][]fanLine, reserve float64) []fanLine {
	n := 0
	for _, b := range bundles {
		n += len(b)
	}
	units := float64(n-len(bundles)) + bundleGap*float64(len(bundles)-1)
	step := portStep
	if room := p.box.W - 2*portInset; units*step > room {
		step = room / units
	}
	x := p.box.Center().X - units*step/2
	least := minStep
	if p.cols != nil {
		least = linkStep
	}
	var lines []fanLine
	for i, b := range bundles {
		if i > 0 {
			x += bundleGap * step
		}
		for j := range b {
			if j > 0 {
				x += step
			}
			b[j].a = x
		}
		childPorts(b, step, least)
		lines = append(lines, b...)
	}
	tracks(p.box.Bottom(), lines, reserve)
	return lines
}

// childPorts places the ports of bundle b on its child: right under the parent's ports when the
// child is under them all (the lines go straight down), else centred on the child.
//
// In a fan over stacked columns, lines into a box's top are least apart, so that a badge beside
// a tree link does not cover it (see stripBadges); a stacked child's lines run down its trunk
// and turn into its left side, the outer line lower, so that none crosses another.
func childPorts(b []fanLine, step, least float64) {
	if k := b[0].child; k.stacked && len(k.ports) == len(b) {
		sidePorts(b, k)
		return
	}
	c := b[0].child.box
	lo, hi := c.X+portInset, c.Right()-portInset
	if step >= least && b[0].a >= lo && b[len(b)-1].a <= hi {
		for j := range b {
			b[j].b = b[j].a
		}
		return
	}
	step = max(step, min(portStep, least))
	if len(b) > 1 {
		step = min(step, (hi-lo)/float64(len(b)-1))
	}
	left := c.Center().X - float64(len(b)-1)*step/2
	for j := range b {
		b[j].b = left + float64(j)*step
	}
}

// tracks gives the bending lines of a fan whose parent's bottom is at y0 their tracks, above the
// bottom reserve of the room between the rows, routes every line and places the transfers'
// badges.
func tracks(y0 float64, lines []fanLine, reserve float64) {
	top, open := math.Inf(1), math.Inf(1) // the children's box tops, and where the first frame opens
	for _, l := range lines {
		top = min(top, l.child.box.Y)
		open = min(open, l.child.box.Y)
		if l.child.frame {
			open = min(open, l.child.outer.Y)
		}
	}
	left, right, straight := sides(lines)
	// Below the frames' top, a frame gives the lines room to run straight into the callee.
	tail := max(reserve, headRoom)
	if open < top {
		tail = max(reserve, cornerR)
	}
	stacked := slices.ContainsFunc(lines, func(l fanLine) bool { return l.child.stacked })
	if stacked {
		tail = badgeStrip(reserve)
	}
	end := func(l *fanLine) Point {
		l.top = top
		if l.child.stacked {
			return Point{l.b, l.enter - cornerR}
		}
		return Point{l.b, top}
	}
	ys, step := levels(y0, open-y0, y0+headRoom, open-tail, max(len(left), len(right)))
	r := min(cornerR, step)
	for _, side := range [][]*fanLine{left, right} {
		for i, l := range side {
			l.track = ys[i]
			l.route = elbow(Point{l.a, y0}, end(l), l.track, r)
			// Badges sit on the tracks; when tracks are closer than a badge, neighbours take
			// turns along the run so that they do not cover each other. The runs of a side
			// nest, each a port further in than the one above, so the turns go outward.
			f := 0.5
			if step < 2*BadgeR+2 {
				f = []float64{0.75, 0.5, 0.25}[i%3]
			}
			l.badge = Point{l.a + (l.b-l.a)*f, l.track}
		}
	}
	var badged []*fanLine
	for _, l := range straight {
		l.a = l.b // within half a unit: a trunk's line may be that far off its port
		l.route = Route{line(Point{l.a, y0}, end(l))}
		if l.transfer() {
			badged = append(badged, l)
		}
	}
	ys, _ = levels(y0, top-y0, y0+headRoom, top-tail, len(badged))
	for i, l := range badged {
		l.badge = Point{l.a, ys[i]}
	}
	if stacked {
		stripBadges(lines, open, reserve)
	}
	for i := range lines {
		l := &lines[i]
		if l.child.stacked {
			l.route = append(l.route, intoSide(l.route.End(), l.child.box.X)...)
		}
		if l.kind == lineUp || l.kind == lineResult {
			l.route = l.route.reverse()
		}
		l.route = l.route.headGap()
	}
}

// sides sorts the lines of a fan by where they go: left, in the order of their tracks from the
// top, right likewise, and straight down. Going left, the line leaving further left runs
// higher, so it never crosses the others; going right, the one leaving further right.
func sides(lines []fanLine) (left, right, straight []*fanLine) {
	for i := range lines {
		l := &lines[i]
		switch {
		case l.b < l.a-0.5:
			left = append(left, l)
		case l.b > l.a+0.5:
			right = append(right, l)
		default:
			straight = append(straight, l)
		}
	}
	slices.SortFunc(left, func(p, q *fanLine) int { return cmp.Compare(p.a, q.a) })
	slices.SortFunc(right, func(p, q *fanLine) int { return cmp.Compare(q.a, p.a) })
	return left, right, straight
}

// levels returns n heights spread evenly over the room between base and base+span, if that
// keeps them between lo and hi, else spread from lo to hi; and how far apart they are.
func levels(base, span, lo, hi float64, n int) ([]float64, float64) {
	ys := make([]float64, n)
	step := span / float64(n+1)
	first := base + step
	if first < lo || first+float64(n-1)*step > hi {
		first, step = (lo+hi)/2, span
		if n > 1 {
			first, step = lo, (hi-lo)/float64(n-1)
		}
	}
	for i := range ys {
		ys[i] = first + float64(i)*step
	}
	return ys, step
}

// elbow returns the line from a down to b that runs horizontally at y track, turning with
// radius r.
func elbow(a, b Point, track, r float64) Route {
	dir := 1.0
	if b.X < a.X {
		dir = -1
	}
	r = min(r, math.Abs(b.X-a.X)/2, track-a.Y, b.Y-track)
	const k = 0.5523 // a cubic's handle for a quarter circle, per unit of radius
	p1, p2 := Point{a.X, track - r}, Point{a.X + dir*r, track}
	p3, p4 := Point{b.X - dir*r, track}, Point{b.X, track + r}
	out := make(Route, 0, 5) // at most two lines, two turns and the run between them
	if p1.Y > a.Y {
		out = append(out, line(a, p1))
	}
	out = append(out, Curve{p1, Point{a.X, track - r + k*r}, Point{p2.X - dir*k*r, track}, p2})
	if dir*(p3.X-p2.X) > 0 {
		out = append(out, line(p2, p3))
	}
	out = append(out, Curve{p3, Point{p3.X + dir*k*r, track}, Point{b.X, p4.Y - k*r}, p4})
	if b.Y > p4.Y {
		out = append(out, line(p4, b))
	}
	return out
}

// headGap returns r ending arrowGap short of where it ends, along its last curve's direction
// there.
func (r Route) headGap() Route {
	last := r[len(r)-1]
	d := last.B.sub(last.C2)
	if n := math.Hypot(d.X, d.Y); n > 0 {
		d = d.scale(arrowGap / n)
	}
	out := slices.Clone(r)
	if last.straight() {
		out[len(out)-1] = line(last.A, last.B.sub(d))
	} else {
		out[len(out)-1] = Curve{last.A, last.C1, last.C2.sub(d), last.B.sub(d)}
	}
	return out
}

// draw puts the route of fan line l on what it draws.
func (g *Graph) draw(l fanLine, links map[string]*Link, bounds map[string]*Boundary) {
	name := l.child.m.Name
	switch l.kind {
	case lineLink:
		if k := links[name]; k != nil {
			k.Route, k.A, k.B = l.route, l.route.Start(), l.route.End()
			k.Path = l.route.Path()
		}
	case lineCall, lineResult:
		b := bounds[name]
		if b == nil {
			return
		}
		// The words sit beside the lines where they run down into the frame: "result" left of
		// the pair, "call" right of it.
		// Each word's order badge sits just past its end.
		at := Point{l.b, l.child.box.Y - 7}
		mid := l.child.box.Y - frameTop/2
		if l.kind == lineCall {
			b.Call, b.CallLabel, b.CallAnchor = l.route, at.add(Point{9, 0}), "start"
			b.CallBadge = Point{b.CallLabel.X + atLabelW(b.CallWord()) + 4 + AtBadgeR, mid}
		} else {
			b.Result, b.ResultLabel, b.ResultAnchor = l.route, at.add(Point{-6, 0}), "end"
			b.ResultBadge = Point{b.ResultLabel.X - atLabelW("result") - 4 - AtBadgeR, mid}
		}
	case lineUp, lineDown:
		e := &g.Transfers[l.edge]
		e.Route, e.Path, e.Label = l.route, l.route.Path(), l.badge
		// The oldest drawn lane is its bundle's outermost: its count of older transfers sits
		// outside it, beside where it meets the child, clear of the tracks.
		e.EarlierAt, e.EarlierAnchor = Point{l.b + 7, l.top - 4}, "start"
		if l.kind == lineUp {
			e.EarlierAt, e.EarlierAnchor = Point{l.b - 7, l.top - 4}, "end"
		}
	}
}

// atLabelW is a generous estimate of the width of an AgentTool arrow's 14px word.
func atLabelW(word string) float64 { return float64(len([]rune(word))) * charW }

// transferRoute routes the k-th newest drawn transfer from box a to box b when they are not
// parent and child, and returns where its badge sits. Between rows it bows to the left of
// travel, so a pair's two directions run side by side; within a row it dips below; a transfer
// to itself loops on the right.
func transferRoute(a, b Rect, k int) (Route, Point) {
	step := float64(min(k, 6)) * 18
	var r Route
	var label Point
	switch {
	case a == b:
		p, q := Point{a.Right(), a.Y + 20}, Point{a.Right(), a.Bottom() - 20}
		r = Route{quad(p, Point{a.Right() + 56 + step, a.Center().Y}, q)}
		label = Point{a.Right() + 28 + step/2, a.Center().Y}
	case b.Y >= a.Bottom():
		r, label = bow(onEdge(a, facing(a, b)), onEdge(b, b.topMid(0)), 10+step)
	case b.Bottom() <= a.Y:
		r, label = bow(onEdge(a, a.topMid(0)), onEdge(b, facing(b, a)), 10+step)
	default:
		p, q := a.bottomMid(0), b.bottomMid(0)
		depth := 44 + step
		c1, c2 := p.add(Point{0, depth}), q.add(Point{0, depth})
		r = Route{{p, c1, c2, q}}
		label = Point{(p.X + 3*c1.X + 3*c2.X + q.X) / 8, (p.Y + 3*c1.Y + 3*c2.Y + q.Y) / 8}
	}
	return r.headGap(), label
}

// bow returns a line from p to q bowed by bend to the left of travel, 13 to the left of the
// straight one so that the two directions between two boxes run side by side, and its
// middle.
func bow(p, q Point, bend float64) (Route, Point) {
	left := leftOf(p, q)
	p, q = p.add(left.scale(13)), q.add(left.scale(13))
	m := p.mid(q)
	return Route{quad(p, m.add(left.scale(2*bend)), q)}, m.add(left.scale(bend))
}

// onEdge moves p, a point of r's top or bottom edge, along it to r's straight part, far enough
// from the corners for the 13 units bow adds.
func onEdge(r Rect, p Point) Point {
	p.X = max(r.X+portInset+13, min(r.Right()-portInset-13, p.X))
	return p
}

// facing returns the point on upper's bottom edge that faces lower: toward lower's centre, but
// far enough from the corners for two lines to fit.
func facing(upper, lower Rect) Point {
	reach := upper.W/2 - 30
	dx := (lower.Center().X - upper.Center().X) / 2
	return upper.bottomMid(max(-reach, min(reach, dx)))
}
