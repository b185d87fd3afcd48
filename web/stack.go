package web

import (
	"cmp"
	"math"
	"slices"
)

// How a parent with many leaf sub-agents lays them out: in columns under it, each read top to
// bottom like a file tree's entries, instead of a row of one column per leaf. Left of each
// column runs its trunk: the fan's lines come down it, the lines to the deepest leaf outermost,
// and turn right into their leaf's left side, so no line crosses another or a box; their badges
// take turns over three levels just above the columns (stripBadges). The number
// of columns is the one that brings the parent's subtree closest to the panel's shape.

// stack puts s's leaf sub-agents (no children, no AgentTool frame) in columns when it has
// stackMin or more of them. It counts the columns as if there were one round trip to each leaf,
// so that they stay put while a live run's transfers add up.
func (s *slot) stack() {
	var leaves []*slot
	for _, k := range s.kids {
		if len(k.kids) == 0 && !k.frame {
			leaves = append(leaves, k)
		}
	}
	if len(leaves) < stackMin {
		return
	}
	for _, k := range leaves {
		k.stacked = true
	}
	others := -siblingGap
	for _, k := range s.kids {
		if !k.stacked {
			others += k.footprint() + siblingGap
		}
	}
	s.cols = [][]*slot{leaves} // fanRoom only asks whether there are columns
	fan := fanRoom(s, func(string, string) int { return 1 })
	best := math.Inf(1)
	for n := 1; n <= len(leaves); n++ {
		cols := columns(leaves, n)
		w := others
		for _, c := range cols {
			// A link between two transfers to each leaf, and the boxes.
			w += siblingGap + trunkPad + float64(3*len(c)-1)*linkStep + namesWidth(c)
		}
		w = math.Max(nodeWidth(s.m.Name), w)
		rows := float64(len(cols[0]))
		h := NodeH + fan + rows*NodeH + (rows-1)*stackGap
		if miss := math.Abs(math.Log(w / h / stackAspect)); miss < best {
			best, s.cols = miss, cols
		}
	}
}

// columns splits leaves into at most n columns of equal height, the last perhaps shorter,
// filled top to bottom then left to right.
func columns(leaves []*slot, n int) [][]*slot {
	rows := (len(leaves) + n - 1) / n
	var cols [][]*slot
	for i := 0; i < len(leaves); i += rows {
		cols = append(cols, leaves[i:min(i+rows, len(leaves))])
	}
	return cols
}

// trunkWidth is the width of a column's trunk for its leaves' lines, up to the boxes.
func trunkWidth(col []*slot) float64 {
	return walkTrunk(col, 0, nil) + trunkPad
}

// walkTrunk calls at, if not nil, with each line of col's leaves (the leaf's index in col) and
// where it runs down the trunk from left on, the deepest leaf's outermost first, and returns
// the innermost line's x. Lines are trunkStep apart, linkStep beside a tree link.
func walkTrunk(col []*slot, left float64, at func(i int, x float64)) float64 {
	x, link, first := left, false, true // link: the line before was a tree link
	for i := len(col) - 1; i >= 0; i-- {
		k := col[i]
		for j := range k.lines {
			isLink := !k.m.missing && j == k.ups
			switch {
			case first:
				first = false
			case link || isLink:
				x += linkStep
			default:
				x += trunkStep
			}
			if at != nil {
				at(i, x)
			}
			link = isLink
		}
	}
	return x
}

// namesWidth is the width of the widest box of col.
func namesWidth(col []*slot) float64 {
	w := 0.0
	for _, k := range col {
		w = math.Max(w, nodeWidth(k.m.Name))
	}
	return w
}

// colWidth is the width of a column, its trunk included.
func colWidth(col []*slot) float64 {
	return trunkWidth(col) + namesWidth(col)
}

// colsWidth is the width of the columns side by side.
func colsWidth(cols [][]*slot) float64 {
	w := -siblingGap
	for _, c := range cols {
		w += colWidth(c) + siblingGap
	}
	return w
}

// kidsWidth is the width s's children take side by side, their columns included.
func (s *slot) kidsWidth() float64 {
	w := -siblingGap
	for _, k := range s.kids {
		if !k.stacked {
			w += k.footprint() + siblingGap
		}
	}
	if s.cols != nil {
		w += colsWidth(s.cols) + siblingGap
	}
	return w
}

// placeCols places s's columns from left, their first boxes at top, and returns their bounds.
func (s *slot) placeCols(left, top float64) Rect {
	bounds := Rect{left, top, 0, 0}
	for _, col := range s.cols {
		x := walkTrunk(col, left, func(i int, x float64) { col[i].ports = append(col[i].ports, x) }) + trunkPad
		for i, k := range col {
			k.box = Rect{x, top + float64(i)*(NodeH+stackGap), nodeWidth(k.m.Name), NodeH}
			bounds = bounds.union(k.box)
		}
		left += colWidth(col) + siblingGap
	}
	return bounds
}

// portX is where the lines to s start to arrive, from the left: its box, or its trunk when
// stacked.
func (s *slot) portX() float64 {
	if s.stacked && len(s.ports) > 0 {
		return s.ports[0]
	}
	return s.box.X
}

// sidePorts places the lines of bundle b, to the stacked leaf k, on k's trunk and on k's left
// side, from the bottom up: the outer line lower, so that none crosses another; arrowheads (the
// transfers down) minStep apart, other lines sideStep, squeezed if even that does not fit the
// side's straight part.
func sidePorts(b []fanLine, k *slot) {
	ys := make([]float64, len(b))
	for j := 1; j < len(b); j++ {
		ys[j] = ys[j-1] - sideStep
		if b[j].kind == lineDown && b[j-1].kind == lineDown {
			ys[j] = ys[j-1] - minStep
		}
	}
	span := -ys[len(b)-1]
	f := min(1, (NodeH-2*cornerR)/max(span, 1))
	for j := range b {
		b[j].b = k.ports[j]
		b[j].enter = k.box.Center().Y + (span/2+ys[j])*f
	}
}

// badgeStrip is the room a fan over stacked columns keeps above its children's row (or the
// frames' top), reserve at its bottom included: three levels of badges, and above them the
// tracks' last turn.
func badgeStrip(reserve float64) float64 {
	return max(reserve, headRoom) + 3*(2*BadgeR+2) + cornerR + 2
}

// stripBadges puts the badges of a fan over stacked columns on the lines' last runs down,
// where they are a trunk step apart or more, taking turns left to right over three levels of
// the strip above the row: two badges on a level are three steps apart, wider than a badge.
// So the tracks above, which carry no badges, can lie close together.
func stripBadges(lines []fanLine, open, reserve float64) {
	var badged []*fanLine
	for i := range lines {
		if lines[i].transfer() {
			badged = append(badged, &lines[i])
		}
	}
	slices.SortFunc(badged, func(p, q *fanLine) int { return cmp.Compare(p.b, q.b) })
	low := open - max(reserve, headRoom) - BadgeR - 1
	for i, l := range badged {
		l.badge = Point{l.b, low - float64(i%3)*(2*BadgeR+2)}
	}
}

// intoSide returns the turn from p, going down, right to x on a box's left side (headGap then
// stops it arrowGap short): p is cornerR above where it runs in.
func intoSide(p Point, x float64) Route {
	const k = 0.5523 // see elbow
	q := Point{p.X + cornerR, p.Y + cornerR}
	return Route{Curve{p, Point{p.X, p.Y + k*cornerR}, Point{q.X - k*cornerR, q.Y}, q}, line(q, Point{x, q.Y})}
}
