package web

import (
	"math"
	"strings"

	"github.com/baton-dev/baton/traces"
)

// Layout sizes, in viewBox units (CSS pixels when the graph is drawn 1:1).
const (
	NodeW     = 184.0 // least width of an agent box
	MaxNodeW  = 320.0 // widest an agent box grows to show its whole name; longer names end in "…"
	NodeH     = 76.0  // height of an agent box
	NameX     = 36.0  // where an agent's name starts in its box, right of the state shape
	nameCharW = 9.4   // a generous average width of one character of the 15px bold name

	siblingGap = 28.0  // between neighbouring subtrees
	rowGap     = 120.0 // between a parent's bottom and the next row's boxes when sub-agents are on it: room for transfer lanes and their numbers
	toolGap    = 44.0  // between a caller's bottom and the top of its AgentTool frames, when only frames are on the row
	trackStep  = 14.0  // the least room a bent AgentTool arrow needs between the caller and the frames, per track
	margin     = 20.0  // around the whole drawing
	framePad   = 10.0  // between an AgentTool frame's sides and what it holds
	frameTop   = 24.0  // between a frame's top and its callee's box: where the call and result arrows are labelled
	frameLine  = 16.0  // one line of the frame's caption and note, drawn under what it holds
	frameText  = 24.0  // horizontal padding of the frame's text
	charW      = 8.0   // a generous average width of one character of the frame's 13.5px text

	// A parent with stackMin or more leaf sub-agents stacks them in columns, as a file tree
	// lists its entries, instead of giving each a column of its own (see stack).
	stackMin    = 4
	stackGap    = 16.0 // between the boxes of a column
	trunkStep   = 11.0 // between the lines running down a column's trunk, left of its boxes: three steps hold a badge
	linkStep    = 14.0 // beside a tree link in a fan over columns: a badge beside it does not cover it
	trunkPad    = 30.0 // between a trunk's innermost line and the boxes: its turn and its arrowhead
	stackTrack  = 7.0  // between the tracks of a fan over stacked columns: its badges are not on them
	stackAspect = 1.6  // the width over height a stacking parent's subtree aims for: the tree panel's shape
)

// nodeWidth is the width of the box of agent name: wide enough for the whole name, within
// NodeW and MaxNodeW.
func nodeWidth(name string) float64 {
	return min(MaxNodeW, max(NodeW, NameX+float64(len([]rune(name)))*nameCharW+12))
}

// nameLabel is name as a box of width w shows it: whole, or cut with "…" when even the widest
// box is too narrow (the node's title and accessible name then carry it whole).
func nameLabel(name string, w float64) string {
	return shorten(name, int((w-NameX-12)/nameCharW+1e-9)) // the box was sized by the same sum
}

// footer is how much a frame adds under what it holds for lines of caption and note.
func footer(lines int) float64 { return 6 + frameLine*float64(lines) + 6 }

// slot is a node of the layout tree.
type slot struct {
	m     *member
	kids  []*slot
	frame bool    // an AgentTool callee: drawn inside a frame
	width float64 // of the subtree's content, frames of descendants included
	box   Rect
	outer Rect // the frame, when frame is set
	// caption and note are the frame's text lines: "AgentTool of {caller}:" and "own history,
	// shared session values", each wrapped to fit, drawn in that order under what the frame
	// holds, so that nothing but the call and result arrows crosses the frame's top.
	caption, note []string
	text          Rect // where caption and note are drawn, by the charW estimate
	// lines is how many lines the parent's fan draws to this agent (see route.go), ups of them
	// transfers up before its link. A stacked leaf sits in its parent's cols, its lines running
	// down the trunk left of its column at x ports, and turning into its box's left side.
	lines, ups int
	stacked    bool
	ports      []float64
	cols       [][]*slot // the stacked leaves, column by column, when it stacks them
}

// frameNote is what every AgentTool frame says about the callee's run; callbacksNote is added
// when the caller's event stream did not carry the callee's events.
const (
	frameNote     = "own history, shared session values"
	callbacksNote = ", seen through callbacks only"
)

// noteOf is the note of m's frame.
func noteOf(m *member) string {
	if m.callbacksOnly {
		return frameNote + callbacksNote
	}
	return frameNote
}

// textWidth estimates how wide the frame's text lines are.
func textWidth(lines []string) float64 {
	w := 0.0
	for _, l := range lines {
		w = math.Max(w, float64(len([]rune(l)))*charW)
	}
	return w
}

// wrapTo splits text into lines of at most width: after commas first, then at spaces (a word
// longer than width stays whole).
func wrapTo(text string, width float64) []string {
	if textWidth([]string{text}) <= width {
		return []string{text}
	}
	if head, tail, ok := strings.Cut(text, ", "); ok {
		return append(wrapTo(head+",", width), wrapTo(tail, width)...)
	}
	var out []string
	for _, w := range strings.Fields(text) {
		if n := len(out); n > 0 && float64(len([]rune(out[n-1]+" "+w)))*charW <= width {
			out[n-1] += " " + w
			continue
		}
		out = append(out, w)
	}
	return out
}

// footprint is how much width the subtree takes among its siblings.
func (s *slot) footprint() float64 {
	if !s.frame {
		return s.width
	}
	return math.Max(s.width+2*framePad, math.Max(textWidth(s.caption), textWidth(s.note))+frameText)
}

// fitText fits the frame's caption and note to the subtree's width, wrapping at spaces.
func (s *slot) fitText(caller string) {
	room := s.width + 2*framePad - frameText
	s.caption = wrapTo("AgentTool of "+caller+":", room)
	s.note = wrapTo(noteOf(s.m), room)
}

// layoutTree places every member of r and returns the slots in preorder with the drawing's size.
// Each subtree gets a band of its own, so boxes and frames of different subtrees never overlap.
// transfers(from, to) is how many transfers went from one agent to the other: rows grow to give
// the lanes drawn between them room.
func layoutTree(r *roster, transfers func(from, to string) int) (order []*slot, w, h float64) {
	var build func(m *member, seen map[string]bool) *slot
	build = func(m *member, seen map[string]bool) *slot {
		seen[m.Name] = true
		s := &slot{m: m, frame: m.Parent != "" && m.Relation == traces.RelationAgentTool}
		for _, c := range r.children(m.Name) {
			if !seen[c.Name] {
				s.kids = append(s.kids, build(c, seen))
			}
		}
		for _, k := range s.kids {
			k.lines, k.ups = fanLines(s, k, transfers)
		}
		s.stack()
		s.width = math.Max(nodeWidth(m.Name), s.kidsWidth())
		if s.frame {
			s.fitText(m.Parent)
		}
		return s
	}
	seen := make(map[string]bool, len(r.list))
	var roots []*slot
	for _, m := range r.list {
		if m.Parent == "" && !seen[m.Name] {
			roots = append(roots, build(m, seen))
		}
	}
	rows := rowTops(roots, transfers)
	x := margin
	for _, s := range roots {
		place(s, x, 0, rows)
		x += s.footprint() + siblingGap
	}
	bottom := 0.0
	var walk func(s *slot)
	walk = func(s *slot) {
		order = append(order, s)
		bottom = math.Max(bottom, s.box.Bottom())
		if s.frame {
			bottom = math.Max(bottom, s.outer.Bottom())
		}
		for _, k := range s.kids {
			walk(k)
		}
	}
	for _, s := range roots {
		walk(s)
	}
	w = math.Max(x-siblingGap+margin, NodeW+2*margin)
	return order, w, bottom + margin
}

// rowTops returns the top of the boxes at each depth: below each row, room for the fans of lines
// from its agents to their children (see fanRoom), and frameTop more on a row that opens frames,
// for their arrows' labels.
func rowTops(roots []*slot, transfers func(from, to string) int) []float64 {
	var frames []bool
	var gap []float64
	var walk func(s *slot, d int)
	walk = func(s *slot, d int) {
		if len(frames) <= d {
			frames, gap = append(frames, false), append(gap, 0)
		}
		frames[d] = frames[d] || s.frame
		for _, k := range s.kids {
			walk(k, d+1)
		}
		if len(s.kids) > 0 {
			gap[d+1] = max(gap[d+1], fanRoom(s, transfers))
		}
	}
	for _, s := range roots {
		walk(s, 0)
	}
	tops := make([]float64, len(frames))
	for d := range tops {
		tops[d] = margin
		if d > 0 {
			tops[d] = tops[d-1] + NodeH + gap[d]
		}
		if frames[d] {
			tops[d] += frameTop
		}
	}
	return tops
}

// fanLines is how many lines the fan of parent p draws to its child k (its link or AgentTool
// pair, and the drawn transfers either way), and how many of them are transfers up, drawn first.
func fanLines(p, k *slot, transfers func(from, to string) int) (lines, ups int) {
	ups = min(transfers(k.m.Name, p.m.Name), Lanes)
	n := ups + min(transfers(p.m.Name, k.m.Name), Lanes)
	switch {
	case k.frame:
		return n + 2, ups
	case !k.m.missing:
		return n + 1, ups
	}
	return n, ups
}

// fanRoom is the height the fan of lines from s to its children needs (see route.go): toolGap
// or a little more when they are all AgentTool pairs, which bend over tracks of their own
// without badges; rowGap when sub-agents are among them, or more when many transfer lanes,
// about half of them on each side, need tracks far enough apart for their badges.
func fanRoom(s *slot, transfers func(from, to string) int) float64 {
	lines, callees, lanes, earlier := 0, 0, 0, false
	for _, k := range s.kids {
		for _, n := range []int{transfers(k.m.Name, s.m.Name), transfers(s.m.Name, k.m.Name)} {
			lanes += min(n, Lanes)
			earlier = earlier || n > Lanes
		}
		switch {
		case k.frame:
			callees++
		case !k.m.missing:
			lines++
		}
	}
	if lines == 0 && lanes == 0 {
		// The callees left and right of the caller's middle bend, two lines each.
		tracks := 2 * (callees / 2)
		return max(toolGap, trackStep*float64(tracks+1))
	}
	tracks := (lines + lanes + 2*callees + 1) / 2
	if s.cols != nil {
		reserve := 0.0
		if earlier {
			reserve = earlierH + BadgeR
		}
		return headRoom + float64(max(tracks-1, 0))*stackTrack + badgeStrip(reserve)
	}
	room := headRoom + float64(max(tracks-1, 0))*(2*BadgeR+2) + headRoom
	if earlier {
		room += earlierH + BadgeR
	}
	return max(rowGap, room)
}

// place lays out the subtree of s in the band starting at left, at depth d, and returns the
// bounds of everything it drew.
func place(s *slot, left float64, d int, rows []float64) Rect {
	inner := left + (s.footprint()-s.width)/2
	w := nodeWidth(s.m.Name)
	s.box = Rect{inner + (s.width-w)/2, rows[d], w, NodeH}
	bounds := s.box
	x, stacked := inner+(s.width-s.kidsWidth())/2, false
	for _, k := range s.kids {
		switch {
		case !k.stacked:
			bounds = bounds.union(place(k, x, d+1, rows))
			x += k.footprint() + siblingGap
		case !stacked: // the columns take the place of the first stacked leaf
			stacked = true
			bounds = bounds.union(s.placeCols(x, rows[d+1]))
			x += colsWidth(s.cols) + siblingGap
		}
	}
	if s.frame {
		top := s.box.Y - frameTop
		lines := len(s.caption) + len(s.note)
		s.text = Rect{left + frameText/2, bounds.Bottom() + 6, max(textWidth(s.caption), textWidth(s.note)), frameLine * float64(lines)}
		s.outer = Rect{left, top, s.footprint(), bounds.Bottom() + footer(lines) - top}
		return s.outer
	}
	return bounds
}
