package server_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/internal/agentstest"
	"github.com/baton-dev/baton/server"
	"github.com/baton-dev/baton/traces"
)

// TestFastRunReachesEveryViewer: a real eino run with a model that answers at once records over
// 10,000 events faster than any socket takes them one by one. Two viewers of the events socket
// that read receive every one, in order, with no drop; the run page's socket brings a page to the
// final state with one timeline row per event.
func TestFastRunReachesEveryViewer(t *testing.T) {
	if n := fastRunToViewers(t, 3400, 2, 1); n < 10_000 {
		t.Fatalf("the run recorded %d events, want over 10,000", n)
	}
}

// fastRunToViewers runs the long flow of the given turns (agentstest.LongTurns, 300 tool calls a
// model reply) with a model that answers at once, followed from its start by events viewers of
// the events socket and pages run pages, and fails tb unless every events viewer receives every
// event in order and then a normal close, and every page one timeline row per event, in order,
// up to run.finished. It returns the number of events.
func fastRunToViewers(tb testing.TB, turns, events, pages int) int64 {
	tb.Helper()
	// 300 tool calls per model reply keep the model inputs, recorded whole, from growing large.
	long := agentstest.LongTurns(turns, 300)
	ts := mustOpenServer(tb, server.Config{Flows: []agents.Flow{long}})
	server.SetRunner(ts.Server, agents.RunFlow)
	id := ts.createRun(tb, `{"flow": "long", "pace_ms": 0}`)

	type result struct {
		seqs   []int64
		closed *websocket.CloseError
		end    traces.Event // the last event
		last   server.LiveMessage
	}
	var wg sync.WaitGroup
	results := make([]result, events+pages)
	for i := range events {
		conn := ts.mustDial(tb, "/api/runs/"+id+"/events")
		wg.Go(func() {
			evs, closed := readEvents(tb, conn)
			results[i] = result{seqs: seqs(evs), closed: closed, end: evs[len(evs)-1]}
		})
	}
	for i := events; i < events+pages; i++ {
		page := ts.mustDial(tb, "/runs/"+id+"/live?after=0")
		wg.Go(func() {
			msgs := readLive(tb, page, func(m server.LiveMessage) bool { return m.Status == traces.StatusCompleted })
			var rows []int64
			for _, id := range rowIDs(tb, msgs) {
				var seq int64
				fmt.Sscanf(id, "ev-%d", &seq)
				rows = append(rows, seq)
			}
			results[i] = result{seqs: rows, last: msgs[len(msgs)-1]}
		})
	}
	wg.Wait()
	if tb.Failed() { // a reader failed (it said why): its result is missing
		tb.FailNow()
	}

	// The trace itself is too big to fetch quickly (each model call holds the whole history).
	end := results[0].end
	n := end.Seq
	if end.Kind != traces.KindRunFinished || end.Run.Status != traces.StatusCompleted {
		tb.Fatalf("the run's last event is #%d %s %+v; want run.finished, completed", n, end.Kind, end.Run)
	}
	for i, r := range results[:events] {
		if !slices.Equal(r.seqs, span(1, n)) || r.closed.Code != websocket.CloseNormalClosure {
			tb.Errorf("events viewer %d: %d events (first gap or disorder matters), closed %v; want all %d in order, then a normal close",
				i, len(r.seqs), r.closed, n)
		}
	}
	for i, page := range results[events:] {
		if !slices.Equal(page.seqs, span(1, n)) || page.last.Seq != n {
			tb.Errorf("run page %d: %d rows, last message at seq %d; want one row per event, in order, up to %d", i, len(page.seqs), page.last.Seq, n)
		}
	}
	return n
}

// TestFeedKeepsNewestEvents: a run's feed keeps only its newest events encoded and rendered, however
// long the run, while a viewer at the head and one joining from the start (far behind what is
// kept) on each socket still receive every event, in order.
func TestFeedKeepsNewestEvents(t *testing.T) {
	const keep, n = 64, 1000
	ts := mustOpenServer(t, server.Config{})
	server.SetFeedKeep(ts.Server, keep)
	rec := ts.addRecording(t, "r-long")
	head := ts.mustDial(t, "/api/runs/r-long/events")
	page := ts.mustDial(t, "/runs/r-long/live?after=0")
	emitMessages(rec, n, "a message of a long run")
	if got := seqs(readN(t, head, n)); !slices.Equal(got, span(1, n)) {
		t.Fatalf("the viewer at the head got %d events, not 1..%d in order", len(got), n)
	}
	if got := liveRows(t, page, n); !slices.Equal(got, span(1, n)) {
		t.Fatalf("the page at the head got %d rows, not 1..%d in order", len(got), n)
	}
	// Viewers from the start: every event of theirs but the newest is made again, not kept.
	behind := ts.mustDial(t, "/api/runs/r-long/events?after=0")
	late := ts.mustDial(t, "/runs/r-long/live?after=0")
	if got := seqs(readN(t, behind, n)); !slices.Equal(got, span(1, n)) {
		t.Errorf("the viewer from the start got %d events, not 1..%d in order", len(got), n)
	}
	if got := liveRows(t, late, n); !slices.Equal(got, span(1, n)) {
		t.Errorf("the page from the start got %d rows, not 1..%d in order", len(got), n)
	}
	encoded, rows, ok := server.FeedCached(ts.Server, rec)
	if !ok || encoded == 0 || encoded > keep || rows == 0 || rows > keep {
		t.Errorf("the feed of a %d-event run keeps %d events and %d rows (followed: %v), want 1..%d of each", n, encoded, rows, ok, keep)
	}
}

// liveRows reads a run page's messages until they bring it event n, and returns the seqs of the
// timeline rows they append.
func liveRows(t *testing.T, conn *websocket.Conn, n int64) []int64 {
	t.Helper()
	msgs := readLive(t, conn, func(m server.LiveMessage) bool { return m.Seq >= n })
	var out []int64
	for _, id := range rowIDs(t, msgs) {
		seq, _ := strconv.ParseInt(strings.TrimPrefix(id, "ev-"), 10, 64)
		out = append(out, seq)
	}
	return out
}

// TestFeedTakesInOutsideTheFeedsLock: a viewer waiting for a run's feed to take in its events
// (seconds, for a million) holds up no viewer of another run.
func TestFeedTakesInOutsideTheFeedsLock(t *testing.T) {
	ts := mustOpenServer(t, server.Config{})
	a, b := ts.addRecording(t, "r-a"), ts.addRecording(t, "r-b")
	let := server.HoldFeed(ts.Server, a)
	joined := make(chan func(), 1)
	go func() { joined <- server.AcquireFeed(ts.Server, a) }()
	// within runs f in a goroutine, failing the test when it does not return in time: the
	// feeds are locked while the second viewer of a waits.
	within := func(what string, f func()) {
		done := make(chan struct{})
		go func() { f(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			let() // so that the test ends
			t.Fatalf("%s waited for another run's feed to take in its events", what)
		}
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		var users int
		within("counting a's viewers", func() { users = server.FeedUsers(ts.Server, a) })
		if users == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the second viewer of a never joined (%d viewers)", users)
		}
	}
	within("b's viewer", func() { server.AcquireFeed(ts.Server, b)() })
	let()
	(<-joined)()
}
