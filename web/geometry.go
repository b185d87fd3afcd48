package web

import (
	"math"
	"strconv"
	"strings"
)

// Point is a position in the graph's viewBox.
type Point struct{ X, Y float64 }

// Rect is an axis-aligned box in the graph's viewBox: top-left corner, width and height.
type Rect struct{ X, Y, W, H float64 }

// Right and Bottom return the box's far edges.
func (r Rect) Right() float64  { return r.X + r.W }
func (r Rect) Bottom() float64 { return r.Y + r.H }

// Center returns the middle of the box.
func (r Rect) Center() Point { return Point{r.X + r.W/2, r.Y + r.H/2} }

// Overlaps reports whether r and o share any area (touching edges do not count).
func (r Rect) Overlaps(o Rect) bool {
	return r.X < o.Right() && o.X < r.Right() && r.Y < o.Bottom() && o.Y < r.Bottom()
}

// Contains reports whether o lies wholly inside r.
func (r Rect) Contains(o Rect) bool {
	return o.X >= r.X && o.Y >= r.Y && o.Right() <= r.Right() && o.Bottom() <= r.Bottom()
}

// union returns the smallest box holding r and o.
func (r Rect) union(o Rect) Rect {
	x, y := math.Min(r.X, o.X), math.Min(r.Y, o.Y)
	return Rect{x, y, math.Max(r.Right(), o.Right()) - x, math.Max(r.Bottom(), o.Bottom()) - y}
}

func (p Point) add(q Point) Point         { return Point{p.X + q.X, p.Y + q.Y} }
func (p Point) sub(q Point) Point         { return Point{p.X - q.X, p.Y - q.Y} }
func (p Point) scale(k float64) Point     { return Point{p.X * k, p.Y * k} }
func (p Point) mid(q Point) Point         { return Point{(p.X + q.X) / 2, (p.Y + q.Y) / 2} }
func (r Rect) topMid(dx float64) Point    { return Point{r.X + r.W/2 + dx, r.Y} }
func (r Rect) bottomMid(dx float64) Point { return Point{r.X + r.W/2 + dx, r.Bottom()} }

// leftOf returns the unit vector pointing left of the direction from p to q.
func leftOf(p, q Point) Point {
	dx, dy := q.X-p.X, q.Y-p.Y
	n := math.Hypot(dx, dy)
	if n == 0 {
		return Point{-1, 0}
	}
	return Point{dy / n, -dx / n}
}

// num formats a coordinate for SVG: at most one decimal, no trailing zeros.
func num(f float64) string {
	return strconv.FormatFloat(math.Round(f*10)/10, 'f', -1, 64)
}

// pathData writes SVG path data from commands and points: pathData("M", p, "Q", c, q).
func pathData(parts ...any) string {
	var b strings.Builder
	for _, p := range parts {
		switch v := p.(type) {
		case string:
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(v)
		case Point:
			b.WriteByte(' ')
			b.WriteString(num(v.X))
			b.WriteByte(' ')
			b.WriteString(num(v.Y))
		}
	}
	return b.String()
}

// curve returns a path from a to b bowed by bend to the left of travel, and the point where a
// label sits on it.
func curve(a, b Point, bend float64) (string, Point) {
	left := leftOf(a, b)
	m := a.mid(b)
	ctrl := m.add(left.scale(2 * bend))
	return pathData("M", a, "Q", ctrl, b), m.add(left.scale(bend))
}

// loopBelow returns a path from a to b (on one row) that dips depth below them, and its label
// point.
func loopBelow(a, b Point, depth float64) (string, Point) {
	c1, c2 := a.add(Point{0, depth}), b.add(Point{0, depth})
	label := Point{(a.X + 3*c1.X + 3*c2.X + b.X) / 8, (a.Y + 3*c1.Y + 3*c2.Y + b.Y) / 8}
	return pathData("M", a, "C", c1, c2, b), label
}
