package web

import (
	"math"
	"strings"

	"github.com/baton-dev/baton/traces"
)

// Layout sizes, in viewBox units (CSS pixels when the graph is drawn 1:1).
const (
	NodeW = 184.0 // width of an agent box
	NodeH = 76.0  // height of an agent box

	siblingGap = 28.0  // between neighbouring subtrees
	rowGap     = 120.0 // between a parent's bottom and its children's top, plus any frame caption
	margin     = 28.0  // around the whole drawing
	framePad   = 10.0  // between an AgentTool frame and what it holds
	frameLine  = 17.0  // one line of the frame's caption (above the callee) or note (below)
	frameText  = 24.0  // horizontal padding of the frame's text
	charW      = 8.0   // a generous average width of one character of the frame's 13px text
)

// slot is a node of the layout tree.
type slot struct {
	m     *member
	kids  []*slot
	frame bool    // an AgentTool callee: drawn inside a frame
	width float64 // of the subtree's content, frames of descendants included
	box   Rect
	outer Rect // the frame, when frame is set
	// caption and note are the frame's text lines: "AgentTool of {caller}:" and "own history,
	// shared session values", each wrapped to fit.
	caption, note []string
}

// frameNote is what every AgentTool frame says about the callee's run.
const frameNote = "own history, shared session values"

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

// frameText fits the frame's caption and note to the subtree's width, wrapping at spaces.
func (s *slot) fitText(caller string) {
	room := s.width + 2*framePad - frameText
	s.caption = wrapTo("AgentTool of "+caller+":", room)
	s.note = wrapTo(frameNote, room)
}

// layoutTree places every member of r and returns the slots in preorder with the drawing's size.
// Each subtree gets a band of its own, so boxes and frames of different subtrees never overlap.
func layoutTree(r *roster) (order []*slot, w, h float64) {
	var build func(m *member, seen map[string]bool) *slot
	build = func(m *member, seen map[string]bool) *slot {
		seen[m.Name] = true
		s := &slot{m: m, frame: m.Parent != "" && m.Relation == traces.RelationAgentTool}
		kidsW := -siblingGap
		for _, c := range r.children(m.Name) {
			if seen[c.Name] {
				continue
			}
			k := build(c, seen)
			s.kids = append(s.kids, k)
			kidsW += k.footprint() + siblingGap
		}
		s.width = math.Max(NodeW, kidsW)
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
	rows := rowTops(roots)
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

// rowTops returns the top of the boxes at each depth: rows are rowGap apart, plus room for the
// captions of the AgentTool frames that open on a row.
func rowTops(roots []*slot) []float64 {
	var caption []float64
	var walk func(s *slot, d int)
	walk = func(s *slot, d int) {
		if len(caption) <= d {
			caption = append(caption, 0)
		}
		if s.frame {
			caption[d] = max(caption[d], framePad+6+float64(len(s.caption))*frameLine)
		}
		for _, k := range s.kids {
			walk(k, d+1)
		}
	}
	for _, s := range roots {
		walk(s, 0)
	}
	tops := make([]float64, len(caption))
	for d := range tops {
		tops[d] = margin + caption[d]
		if d > 0 {
			tops[d] += tops[d-1] + NodeH + rowGap - margin
		}
	}
	return tops
}

// place lays out the subtree of s in the band starting at left, at depth d, and returns the
// bounds of everything it drew.
func place(s *slot, left float64, d int, rows []float64) Rect {
	inner := left + (s.footprint()-s.width)/2
	s.box = Rect{inner + (s.width-NodeW)/2, rows[d], NodeW, NodeH}
	bounds := s.box
	kidsW := -siblingGap
	for _, k := range s.kids {
		kidsW += k.footprint() + siblingGap
	}
	x := inner + (s.width-kidsW)/2
	for _, k := range s.kids {
		bounds = bounds.union(place(k, x, d+1, rows))
		x += k.footprint() + siblingGap
	}
	if s.frame {
		top := s.box.Y - framePad - 6 - float64(len(s.caption))*frameLine
		bottom := bounds.Bottom() + framePad + 6 + float64(len(s.note))*frameLine
		s.outer = Rect{left, top, s.footprint(), bottom - top}
		return s.outer
	}
	return bounds
}
