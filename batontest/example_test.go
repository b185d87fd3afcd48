package batontest_test

import (
	"context"
	"testing"

	"github.com/baton-dev/baton/batontest"
	"github.com/baton-dev/baton/examples/golden"
)

// A test of the app's own package keeps its route in a golden story, offline: the agents answer
// as the run recorded in testdata/helpdesk.trace.json did (`go test -baton.update` on a run with
// the live model records it). examples/golden runs this very test.
func Example() {
	_ = func(t *testing.T) { // func TestHelpdeskRoute(t *testing.T)
		replay := batontest.NewReplay(t, "testdata/helpdesk.trace.json")
		runner, err := golden.New(context.Background(), replay.Model)
		if err != nil {
			t.Fatal(err)
		}
		run := batontest.Record(t, runner, "I was charged twice for order 1234.")
		run.MatchGolden("testdata/helpdesk") // the route, what each agent was fed, the answer
		run.NoFindings("warning")            // no ping-pong, lost request, swallowed exit…
		replay.Played()                      // and every recorded answer was asked for
	}
}

// Assertions can also be made one by one.
func ExampleRun_Route() {
	_ = func(t *testing.T) {
		runner, err := golden.New(context.Background(), golden.Instructed)
		if err != nil {
			t.Fatal(err)
		}
		run := batontest.Record(t, runner, "I forgot my password.")
		if got := run.Route(); got != "triage>tech_agent" {
			t.Errorf("route = %s, want triage>tech_agent", got)
		}
		if author, _ := run.Answer(); author != "tech_agent" {
			t.Errorf("answered by %s, want tech_agent", author)
		}
	}
}
