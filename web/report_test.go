package web_test

import (
	"os"
	"reflect"
	"testing"

	"github.com/baton-dev/baton/traces"
	"github.com/baton-dev/baton/web"
	"github.com/baton-dev/baton/web/webtest"
)

// NewReport inspects every event as NewInspection does, keeping only the latest steps of a run
// path that grows with every transfer.
func TestReportInspectsEveryEvent(t *testing.T) {
	tr := webtest.Big(300)
	r := web.NewReport(tr)
	if len(r.Inspections) != len(tr.Events) {
		t.Fatalf("%d inspections, want one per event (%d)", len(r.Inspections), len(tr.Events))
	}
	if len(r.Agents) != len(r.View.Agents) {
		t.Errorf("%d agent summaries, want %d", len(r.Agents), len(r.View.Agents))
	}
	capped := 0
	for i, in := range r.Inspections {
		one, err := web.NewInspection(tr, tr.Events[i].Seq)
		if err != nil {
			t.Fatal(err)
		}
		if in.Seq != one.Seq || in.Title != one.Title || len(in.Facts) != len(one.Facts) {
			t.Errorf("inspection %d differs from NewInspection's: %+v", i, in)
		}
		if len(in.RunPath) > web.ReportRunPath+1 {
			t.Errorf("event %d: a run path of %d steps", in.Seq, len(in.RunPath))
		}
		if len(one.RunPath) > web.ReportRunPath {
			capped++
			if in.RunPath[0] != "…" || in.RunPath[len(in.RunPath)-1] != one.RunPath[len(one.RunPath)-1] {
				t.Errorf("event %d: run path %q, want … and the latest steps of %q", in.Seq, in.RunPath, one.RunPath)
			}
		}
	}
	if capped == 0 {
		t.Errorf("no run path was long enough to be capped: the test checks nothing")
	}
}

// The report's inspections share one index of message sources, read ahead of the event when a
// transfer shows what its target then received: each is still exactly what NewInspection, on a
// fresh analysis, says of its event.
func TestReportInspectionsMatchOneByOne(t *testing.T) {
	data, err := os.ReadFile("../agents/testdata/supervisor.trace.json")
	if err != nil {
		t.Fatal(err)
	}
	recorded, err := traces.Unmarshal(data)
	if err != nil {
		t.Fatal(err)
	}
	for name, tr := range map[string]traces.Trace{"recorded supervisor": recorded, "agenttool": webtest.AgentTool()} {
		r := web.NewReport(tr)
		fed := 0
		for i, in := range r.Inspections {
			one, err := web.NewInspection(tr, tr.Events[i].Seq)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(in, one) {
				t.Errorf("%s: the report's inspection of #%d differs from NewInspection's:\n%+v\n%+v", name, one.Seq, in, one)
			}
			fed += len(in.Messages)
		}
		if fed == 0 {
			t.Errorf("%s: no inspection shows fed messages: the test checks nothing", name)
		}
	}
}
