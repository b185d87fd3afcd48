package golden_test

import (
	"context"
	"testing"

	"github.com/baton-dev/baton/batontest"
	"github.com/baton-dev/baton/examples/golden"
)

const request = "I was charged twice for order 1234."

// TestHelpdeskRoute keeps the helpdesk's route fixed, offline: its agents answer as the run
// recorded in testdata/helpdesk.trace.json did, and the story must stay testdata/helpdesk.story.
func TestHelpdeskRoute(t *testing.T) {
	replay := batontest.NewReplay(t, "testdata/helpdesk.trace.json")
	runner, err := golden.New(context.Background(), replay.Model)
	if err != nil {
		t.Fatal(err)
	}
	run := batontest.Record(t, runner, request)
	run.MatchGolden("testdata/helpdesk")
	run.NoFindings("warning")
	replay.Played()
}

// TestHelpdeskRouteLive runs the helpdesk on its live model (here, Instructed) against the same
// story: a change of instruction that re-routes the request fails it, and
// `go test -run Live -baton.update` records the new route, and the answers the test above replays.
func TestHelpdeskRouteLive(t *testing.T) {
	runner, err := golden.New(context.Background(), golden.Instructed)
	if err != nil {
		t.Fatal(err)
	}
	batontest.Record(t, runner, request).MatchGolden("testdata/helpdesk")
}
