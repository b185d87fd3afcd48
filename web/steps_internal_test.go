package web

import (
	"reflect"
	"testing"

	"github.com/baton-dev/baton/internal/webtest"
	"github.com/baton-dev/baton/traces"
)

// TestStepsMatchOneByOne: a run taken in whole (steps: past concurrentSteps events, the search
// notes on a goroutine of their own) is the analysis of the same events taken in one at a time,
// every piece of it, whether from the start (Keep) or on top of events taken in already
// (takeUpTo, as Travel's copies are made).
func TestStepsMatchOneByOne(t *testing.T) {
	tr := webtest.Large(2*concurrentSteps + 500)
	for _, tc := range []struct {
		name string
		tr   traces.Trace
	}{{"large", tr}, {"agenttool", webtest.AgentTool()}, {"failed transfer", webtest.FailedTransfer()}} {
		one := oneByOne(tc.tr)
		whole := newAnalysis(tc.tr.Run, tc.tr.Agents, pricingOf(tc.tr.Run, nil))
		whole.takeUpTo(tc.tr, len(tc.tr.Events))
		if !reflect.DeepEqual(whole, one) {
			t.Errorf("%s: the analysis of the events taken in whole differs from that of the events one at a time", tc.name)
		}
		n := len(tc.tr.Events)
		split := newAnalysis(tc.tr.Run, tc.tr.Agents, pricingOf(tc.tr.Run, nil))
		split.takeUpTo(tc.tr, n/3)
		split.takeUpTo(tc.tr, n)
		if !reflect.DeepEqual(split, one) {
			t.Errorf("%s: taken in whole in two parts, the analysis differs from that of the events one at a time", tc.name)
		}
	}
	if a := oneByOne(tr); len(tr.Events) <= concurrentSteps || len(a.timeline.echoOf) == 0 || len(a.timeline.freshFrom) == 0 {
		t.Fatalf("the large run (%d events) does not exercise the notes taken in beside the other pieces", len(tr.Events))
	}
}

// oneByOne is the analysis of tr's events added one at a time.
func oneByOne(tr traces.Trace) *analysis {
	a := newAnalysis(tr.Run, tr.Agents, pricingOf(tr.Run, nil))
	for _, e := range tr.Events {
		a.add(e)
	}
	return a
}
