package web

import "math"

// How a parent with many leaf sub-agents lays them out: in columns under it, each read top to
// bottom like a file tree's entries, instead of a row of one column per leaf. Left of each
// column runs its trunk: the fan's lines come down it, the lines to the deepest leaf outermost,
// and turn right into their leaf's left side, so no line crosses another or a box. The number
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
