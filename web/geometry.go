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

// appendPoint appends " x y" to SVG path data, each coordinate with at most one decimal and no
// trailing zeros.
func appendPoint(b []byte, p Point) []byte {
	b = strconv.AppendFloat(append(b, ' '), math.Round(p.X*10)/10, 'f', -1, 64)
	return strconv.AppendFloat(append(b, ' '), math.Round(p.Y*10)/10, 'f', -1, 64)
}

// Curve is a cubic Bézier segment from A to B with control points C1 and C2.
type Curve struct{ A, C1, C2, B Point }

// At returns the point of c at parameter t, from A at 0 to B at 1.
func (c Curve) At(t float64) Point {
	u := 1 - t
	return c.A.scale(u * u * u).add(c.C1.scale(3 * u * u * t)).add(c.C2.scale(3 * u * t * t)).add(c.B.scale(t * t * t))
}

// reverse returns c travelled from B to A.
func (c Curve) reverse() Curve { return Curve{c.B, c.C2, c.C1, c.A} }

// straight reports whether c was made by line: its control points at its thirds.
func (c Curve) straight() bool {
	near := func(p, q Point) bool { return math.Abs(p.X-q.X) < 1e-6 && math.Abs(p.Y-q.Y) < 1e-6 }
	d := c.B.sub(c.A).scale(1.0 / 3)
	return near(c.C1, c.A.add(d)) && near(c.C2, c.B.sub(d))
}

// line returns the straight segment from a to b.
func line(a, b Point) Curve {
	d := b.sub(a).scale(1.0 / 3)
	return Curve{a, a.add(d), b.sub(d), b}
}

// quad returns the quadratic Bézier from a to b with control point c, as a cubic.
func quad(a, c, b Point) Curve {
	return Curve{a, a.add(c.sub(a).scale(2.0 / 3)), b.add(c.sub(b).scale(2.0 / 3)), b}
}

// Route is a chain of curves, each starting where the one before ends: how the graph draws a
// transfer, a tree link or an AgentTool arrow, from its tail to its head. A drawn route has at
// least one curve.
type Route []Curve

// Start and End return where r begins and where it ends (its arrowhead, when it has one).
func (r Route) Start() Point { return r[0].A }
func (r Route) End() Point   { return r[len(r)-1].B }

// Path returns r as SVG path data, "" for an empty route. A live page's tree draws every route
// again whenever a transfer arrives: the data is written in one buffer.
func (r Route) Path() string {
	if len(r) == 0 {
		return ""
	}
	var b strings.Builder
	b.Grow(8 + len(r)*56)
	var buf [64]byte
	point := func(cmd string, p Point) { b.Write(appendPoint(append(buf[:0], cmd...), p)) }
	point("M", r[0].A)
	for _, c := range r {
		if c.straight() {
			point(" L", c.B)
		} else {
			point(" C", c.C1)
			point("", c.C2)
			point("", c.B)
		}
	}
	return b.String()
}

// Points returns r sampled at n+1 points per curve, both ends included: a polyline that stays
// within a fraction of a unit of r for the curves the graph draws, with n of 16 or more.
func (r Route) Points(n int) []Point {
	var out []Point
	for i, c := range r {
		for k := 0; k <= n; k++ {
			if k == 0 && i > 0 {
				continue
			}
			out = append(out, c.At(float64(k)/float64(n)))
		}
	}
	return out
}

// reverse returns r travelled from its end to its start.
func (r Route) reverse() Route {
	out := make(Route, len(r))
	for i, c := range r {
		out[len(r)-1-i] = c.reverse()
	}
	return out
}
