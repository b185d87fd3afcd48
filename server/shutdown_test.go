package server_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/baton-dev/baton/server"
	"github.com/baton-dev/baton/traces"
)

// emitFlood emits floodEvents events of 128 KiB each: 6 MiB, more than the system buffers for a
// viewer that does not read (Linux gives the sender at most 4 MiB, and a receiver that does not
// read keeps its first window), so that writing them blocks until the viewer reads. Many smaller
// events rather than one huge one: encoding and decoding them is slow under the race detector.
func emitFlood(rec *traces.Recording) {
	emitMessages(rec, floodEvents, strings.Repeat("x", 128<<10))
}

const floodEvents = 48

// startRuns starts n runs through the API with a runner the test drives, and records run.started
// in each.
func startRuns(t *testing.T, ts *servedServer, n int) ([]string, []started) {
	t.Helper()
	runs := make(chan started, n)
	server.SetRunner(ts.Server, handOver(runs))
	var ids []string
	var sts []started
	for range n {
		ids = append(ids, ts.createRun(t, `{"flow": "echo"}`))
		st := receive(t, runs)
		st.rec.Emit(traces.Event{Kind: traces.KindRunStarted, Run: &traces.RunMark{Flow: "echo", Status: traces.StatusRunning}})
		sts = append(sts, st)
	}
	return ids, sts
}

// checkCanceledEnd reads an events socket to its close and checks that the last event was the
// run's run.finished, canceled, followed by a normal close.
func checkCanceledEnd(t *testing.T, name string, conn *websocket.Conn) {
	t.Helper()
	evs, closed := readEvents(t, conn)
	if len(evs) == 0 {
		t.Fatalf("%s: no event before the close %v", name, closed)
	}
	last := evs[len(evs)-1]
	if last.Kind != traces.KindRunFinished || last.Run == nil || last.Run.Status != traces.StatusCanceled || closed.Code != websocket.CloseNormalClosure {
		t.Errorf("%s: last event %s %+v, then close %v; want run.finished canceled, then a normal close", name, last.Kind, last.Run, closed)
	}
}

// TestShutdownDeliversRunFinished: when Serve's context ends during runs, the runs are canceled
// first and every open viewer, on either websocket, gets its run's canceled end before its socket
// closes; Serve returns nil and the server stops answering.
func TestShutdownDeliversRunFinished(t *testing.T) {
	t.Parallel()
	ts := mustServe(t, server.Config{})
	ids, sts := startRuns(t, ts, 2)
	eventsA := ts.mustDial(t, "/api/runs/"+ids[0]+"/events")
	eventsB := ts.mustDial(t, "/api/runs/"+ids[1]+"/events")
	readN(t, eventsA, 1)
	readN(t, eventsB, 1)
	live := ts.mustDial(t, "/runs/"+ids[0]+"/live")
	readLive(t, live, func(m server.LiveMessage) bool { return m.Seq == 1 })

	stopped := make(chan error, 1)
	go func() { stopped <- ts.stop() }()
	checkCanceledEnd(t, "events of run A", eventsA)
	checkCanceledEnd(t, "events of run B", eventsB)
	final := readLive(t, live, func(m server.LiveMessage) bool { return m.Status != traces.StatusRunning })
	if m := final[len(final)-1]; m.Status != traces.StatusCanceled || m.Seq != 2 {
		t.Errorf("the live page's last update: seq %d status %q, want 2 canceled", m.Seq, m.Status)
	}
	_ = live.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, _, err := live.ReadMessage(); !websocket.IsCloseError(err, websocket.CloseNormalClosure) {
		t.Errorf("the live page after its run's end: %v, want a normal close", err)
	}

	if err := receive(t, stopped); err != nil {
		t.Errorf("Serve: %v", err)
	}
	for i, st := range sts {
		if run := st.rec.Run(); run.Status != traces.StatusCanceled {
			t.Errorf("run %d after shutdown: %s, want canceled", i, run.Status)
		}
	}
	if _, err := quickClient.Get(ts.base + "/api/flows"); err == nil {
		t.Errorf("the server still answers after shutdown")
	}
}

// TestShutdownCutsViewerThatNeverReads: a viewer that reads nothing while a large event is
// written to it cannot hold the shutdown past its grace: it is cut, the other viewers still get
// their run's end, and Serve returns nil.
func TestShutdownCutsViewerThatNeverReads(t *testing.T) {
	t.Parallel()
	const grace = time.Second
	ts := mustServe(t, server.Config{ShutdownGrace: grace})
	ids, sts := startRuns(t, ts, 1)
	path := "/api/runs/" + ids[0] + "/events"
	stuck := ts.mustDial(t, path)
	readN(t, stuck, 1)
	healthy := ts.mustDial(t, path)
	readN(t, healthy, 1)
	emitFlood(sts[0].rec)
	readN(t, healthy, floodEvents) // while the stuck viewer takes a few MiB at most

	start := time.Now()
	stopped := make(chan error, 1)
	go func() { stopped <- ts.stop() }()
	checkCanceledEnd(t, "the viewer that reads", healthy)
	if err := receive(t, stopped); err != nil {
		t.Errorf("Serve: %v", err)
	}
	if d := time.Since(start); d > grace+2*time.Second {
		t.Errorf("shutdown took %s with a grace of %s", d, grace)
	}
}

// TestLateViewerGetsResumeHint: a viewer that takes longer than the write timeout to accept a
// message, but does take it, is closed with CloseTooSlow and where to resume, not cut mid-message
// (1006); resuming from there loses and repeats nothing.
func TestLateViewerGetsResumeHint(t *testing.T) {
	t.Parallel()
	const wait = 4 * time.Second
	ts := mustServe(t, server.Config{WriteTimeout: wait})
	rec := ts.addRecording(t, "r-late")
	emitMessages(rec, 1, "small")
	conn := ts.mustDial(t, "/api/runs/r-late/events")
	readN(t, conn, 1)

	emitFlood(rec)
	// The stimulus, not a wait for a condition: the viewer reads nothing for longer than the
	// write timeout, and comes back well before the server would cut it (twice the timeout): 2 s
	// past the one, 2 s before the other, so that a loaded machine's stalls (in filling the
	// connection's buffers before a send blocks, or in the viewer's return) do not decide it.
	time.Sleep(wait * 3 / 2)
	evs, closed := readEvents(t, conn)
	last := int64(len(evs) + 1)
	if !slices.Equal(seqs(evs), span(2, last)) || last > floodEvents || closed.Code != server.CloseTooSlow ||
		closed.Text != "too slow; resume with after="+itoa(last) {
		t.Fatalf("late viewer got %v, then %v; want events from 2 on, then %d \"too slow; resume with after=<the last>\"",
			seqs(evs), closed, server.CloseTooSlow)
	}

	rec.Finish(traces.StatusCompleted, "")
	rest, closed := readEvents(t, ts.mustDial(t, "/api/runs/r-late/events?after="+itoa(last)))
	if !slices.Equal(seqs(rest), span(last+1, floodEvents+2)) || closed.Code != websocket.CloseNormalClosure {
		t.Errorf("after resuming from %d: %v, closed %v; want the rest to run.finished and a normal close", last, seqs(rest), closed)
	}
}

// TestListenAdoptsPort: with port 0, the port the system chose is the one in URL and the only one
// the Host check lets through.
func TestListenAdoptsPort(t *testing.T) {
	srv, err := server.New(server.Config{Addr: "127.0.0.1:0", Token: strongToken, Flows: testFlows()})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown(context.Background())
	ln, err := srv.Listen(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if want := "http://" + ln.Addr().String() + "/?token=" + strongToken; srv.URL() != want {
		t.Errorf("URL() = %q, want %q", srv.URL(), want)
	}
	for host, status := range map[string]int{ln.Addr().String(): 200, "127.0.0.1:0": 403} {
		r := httptest.NewRequest(http.MethodGet, "/api/flows?token="+strongToken, nil)
		r.Host = host
		w := httptest.NewRecorder()
		srv.Handler().ServeHTTP(w, r)
		if w.Code != status {
			t.Errorf("Host %s: %d, want %d", host, w.Code, status)
		}
	}
}
