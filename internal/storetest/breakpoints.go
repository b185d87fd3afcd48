package storetest

import (
	"slices"
	"testing"
)

// testNextBreakpoints: the breakpoints kept for a flow's next runs read back as kept, the last
// kept standing, each flow's its own; none forgets them; runs coming and going leave them be.
func testNextBreakpoints(t *testing.T, open Open) {
	s := open(t, 1)
	read := func(flow string) []string {
		t.Helper()
		points, err := s.NextBreakpoints(flow)
		if err != nil {
			t.Fatal(err)
		}
		return points
	}
	set := func(flow string, points ...string) {
		t.Helper()
		if err := s.SetNextBreakpoints(flow, points); err != nil {
			t.Fatal(err)
		}
	}
	if got := read("helpdesk"); got != nil {
		t.Errorf("NextBreakpoints of a flow with none kept = %q, want nil", got)
	}
	set("helpdesk", "transfer:billing", "model@tech")
	set("helpdesk", "transfer:tech", "tool:refund@billing", "session:plan")
	set("café \u2014 app", "error")
	createEnded(t, s, "r-1", "helpdesk", "completed", "in", "out", 0)
	createEnded(t, s, "r-2", "helpdesk", "completed", "in", "out", 1) // r-1 is not kept
	if got, want := read("helpdesk"), []string{"transfer:tech", "tool:refund@billing", "session:plan"}; !slices.Equal(got, want) {
		t.Errorf("NextBreakpoints(helpdesk) = %q, want the last kept, %q", got, want)
	}
	if got := read("café \u2014 app"); !slices.Equal(got, []string{"error"}) {
		t.Errorf("NextBreakpoints of another flow = %q, want its own", got)
	}
	set("helpdesk")
	if got := read("helpdesk"); got != nil {
		t.Errorf("NextBreakpoints once forgotten = %q, want nil", got)
	}
	set("nobody") // forgetting what was never kept is no mistake
	if got := read("café \u2014 app"); !slices.Equal(got, []string{"error"}) {
		t.Errorf("forgetting one flow's breakpoints touched another's: %q", got)
	}
}
