package server_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/gorilla/websocket"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/agents/agentstest"
	"github.com/baton-dev/baton/server"
	"github.com/baton-dev/baton/traces"
)

// TestFastRunReachesEveryViewer: a real eino run with a model that answers at once records over
// 10,000 events faster than any socket takes them one by one. A viewer of the events socket that
// reads receives every one, in order, with no drop, and so does a second one; the run page's
// socket brings a page to the final state with one timeline row per event.
func TestFastRunReachesEveryViewer(t *testing.T) {
	// 300 tool calls per model reply keep the model inputs, recorded whole, from growing large.
	long := agentstest.LongTurns(3400, 300)
	ts := mustOpenServer(t, server.Config{Flows: []agents.Flow{long}})
	server.SetRunner(ts.Server, agents.RunFlow)
	id := ts.createRun(t, `{"flow": "long", "pace_ms": 0}`)

	type result struct {
		seqs   []int64
		closed *websocket.CloseError
		end    traces.Event // the last event
		last   liveMessage
	}
	var wg sync.WaitGroup
	results := make([]result, 3)
	for i := range 2 {
		conn := ts.mustDial(t, "/api/runs/"+id+"/events")
		wg.Go(func() {
			evs, closed := readEvents(t, conn)
			results[i] = result{seqs: seqs(evs), closed: closed, end: evs[len(evs)-1]}
		})
	}
	page := ts.mustDial(t, "/runs/"+id+"/live?after=0")
	wg.Go(func() {
		msgs := readLive(t, page, func(m liveMessage) bool { return m.Status == traces.StatusCompleted })
		var rows []int64
		for _, id := range rowIDs(t, msgs) {
			var seq int64
			fmt.Sscanf(id, "ev-%d", &seq)
			rows = append(rows, seq)
		}
		results[2] = result{seqs: rows, last: msgs[len(msgs)-1]}
	})
	wg.Wait()
	if t.Failed() { // a reader failed (it said why): its result is missing
		return
	}

	// The trace itself is too big to fetch quickly (each model call holds the whole history).
	end := results[0].end
	n := end.Seq
	if n < 10_000 || end.Kind != traces.KindRunFinished || end.Run.Status != traces.StatusCompleted {
		t.Fatalf("the run's last event is #%d %s %+v; want over 10,000 events ending in run.finished, completed", n, end.Kind, end.Run)
	}
	for i, r := range results[:2] {
		if !slices.Equal(r.seqs, span(1, n)) || r.closed.Code != websocket.CloseNormalClosure {
			t.Errorf("events viewer %d: %d events (first gap or disorder matters), closed %v; want all %d in order, then a normal close",
				i, len(r.seqs), r.closed, n)
		}
	}
	if page := results[2]; !slices.Equal(page.seqs, span(1, n)) || *page.last.Seq != n {
		t.Errorf("run page: %d rows, last message at seq %d; want one row per event, in order, up to %d", len(page.seqs), *page.last.Seq, n)
	}
}
