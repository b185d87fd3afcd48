package record

import (
	"testing"
)

// TestVisitsOfALoop: each iteration of a loop starts its steps once more, and a step knows which
// iteration it is; inside and openInside see only the visits directly inside.
func TestVisitsOfALoop(t *testing.T) {
	var vs visits
	loop := &visit{agent: "loop", kind: "Loop", path: []string{"loop"}}
	vs.add(loop)
	step := func(agent string) *visit {
		v := &visit{agent: agent, parent: loop, path: []string{"loop", agent}}
		vs.add(v)
		v.iteration = vs.iteration(v)
		return v
	}
	w1, c1, w2 := step("writer"), step("critic"), step("writer")
	if w1.iteration != 1 || c1.iteration != 1 || w2.iteration != 2 {
		t.Errorf("iterations = %d %d %d, want 1 1 2", w1.iteration, c1.iteration, w2.iteration)
	}
	inner := &visit{agent: "tool", parent: w2, path: []string{"loop", "writer", "tool"}}
	vs.add(inner)
	if in := vs.inside(loop); len(in) != 3 || in[2] != w2 {
		t.Errorf("inside(loop) = %d visits, want the 3 steps in order", len(in))
	}
	if vs.root != loop || vs.iteration(loop) != 0 {
		t.Error("the loop is not the root, or counted as an iteration of a loop")
	}
	w1.closed, c1.closed = true, true
	if !vs.openInside(loop) {
		t.Error("openInside(loop) = false with writer's second visit open")
	}
	w2.closed = true
	if vs.openInside(loop) {
		t.Error("openInside(loop) = true with its steps all closed (a visit deeper down does not count)")
	}
	if vs.latest("writer") != w2 || vs.latest("nobody") != nil {
		t.Error("latest(writer) is not its second visit, or latest found an agent that never ran")
	}
}

// TestVisitsUnderAPath: the visits under a run path are those on it or below it, not a sibling
// whose name merely starts the same.
func TestVisitsUnderAPath(t *testing.T) {
	var vs visits
	for _, p := range [][]string{{"main"}, {"main", "helper"}, {"main", "helper", "sub"}, {"main", "helperx"}} {
		vs.add(&visit{agent: p[len(p)-1], path: p})
	}
	got := vs.under([]string{"main", "helper"})
	if len(got) != 2 || got[0].agent != "helper" || got[1].agent != "sub" {
		var names []string
		for _, v := range got {
			names = append(names, v.agent)
		}
		t.Errorf("under(main>helper) = %v, want [helper sub]", names)
	}
}

// TestVisitsAtWork: whether another agent's work goes on, and whether the run's root has drained.
func TestVisitsAtWork(t *testing.T) {
	var vs visits
	if !vs.rootDrained() {
		t.Error("a run without visits is not drained: it would never finish")
	}
	a, b := &visit{agent: "a", runnable: true}, &visit{agent: "b", runnable: true}
	vs.add(a)
	vs.add(b)
	if !vs.workingBesides(a) {
		t.Error("workingBesides(a) = false while b works")
	}
	b.runnableEnded = true
	if vs.workingBesides(a) {
		t.Error("workingBesides(a) = true with b's work over (a's own does not count)")
	}
	if vs.rootDrained() {
		t.Error("rootDrained() = true before the root's copy of events is read")
	}
	a.drained = true
	if !vs.rootDrained() {
		t.Error("rootDrained() = false once the root's copy is read")
	}
}

// TestLatestAnsweringVisit: the value eino stores under an OutputKey is credited to the latest
// visit whose reply it is.
func TestLatestAnsweringVisit(t *testing.T) {
	var vs visits
	first, other, second := &visit{agent: "a", lastReply: "yes"}, &visit{agent: "b", lastReply: "no"}, &visit{agent: "c", lastReply: "yes"}
	for _, v := range []*visit{first, other, second} {
		vs.add(v)
	}
	if got := vs.latestAnswering(jsonValue("yes")); got != second {
		t.Errorf("latestAnswering(yes) = %v, want c's visit", got)
	}
	if got := vs.latestAnswering(jsonValue("maybe")); got != nil {
		t.Errorf("latestAnswering(maybe) = %v, want none", got)
	}
}
