package server_test

import (
	"bytes"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/baton-dev/baton/server"
	"github.com/baton-dev/baton/traces"
)

// TestEventsResume: a viewer that leaves and comes back with after=N gets every event once.
func TestEventsResume(t *testing.T) {
	ts := mustOpenServer(t, server.Config{})
	rec := ts.addRecording(t, "r-resume")
	emitMessages(rec, 5, "before")

	first := ts.mustDial(t, "/api/runs/r-resume/events?after=2")
	got := readN(t, first, 3)
	first.Close()

	second := ts.mustDial(t, "/api/runs/r-resume/events?after=5")
	// Live events follow the backlog on the same socket.
	emitMessages(rec, 5, "live")
	rec.Finish(traces.StatusCompleted, "")
	rest, closed := readEvents(t, second)
	got = append(got, rest...)

	if want := span(3, 11); !slices.Equal(seqs(got), want) {
		t.Errorf("seqs = %v, want %v", seqs(got), want)
	}
	if closed.Code != websocket.CloseNormalClosure {
		t.Errorf("closed with %v, want a normal closure", closed)
	}
	if last := got[len(got)-1]; last.Kind != traces.KindRunFinished || last.Run.Status != traces.StatusCompleted {
		t.Errorf("last event = %+v, want run.finished completed", last)
	}
	if got[3].Message == nil || got[3].Message.Content != "live" {
		t.Errorf("event 6 = %+v, want the live message in the trace format's shape", got[3])
	}

	// A finished run replays from any point and closes.
	late := ts.mustDial(t, "/api/runs/r-resume/events?after=9")
	evs, closed := readEvents(t, late)
	if !slices.Equal(seqs(evs), []int64{10, 11}) || closed.Code != websocket.CloseNormalClosure {
		t.Errorf("after=9 on a finished run: %v, %v", seqs(evs), closed)
	}
}

func TestEventsBadRequests(t *testing.T) {
	ts := mustOpenServer(t, server.Config{})
	ts.addRecording(t, "r-known")
	tests := []struct {
		name, path string
		status     int
		want       string
	}{
		{"unknown run", "/api/runs/r-unknown/events", 404, `run "r-unknown" not found`},
		{"after not a number", "/api/runs/r-known/events?after=x", 400, `after must be an integer of at least 0, not "x"`},
		{"negative after", "/api/runs/r-known/events?after=-2", 400, "after must be an integer of at least 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, res, err := ts.dial(t, tt.path, nil)
			if err == nil {
				t.Fatal("dial succeeded")
			}
			if res.status != tt.status || !strings.Contains(res.apiError(t), tt.want) {
				t.Errorf("got %d %s, want %d with %q", res.status, res.body, tt.status, tt.want)
			}
		})
	}
}

// TestWebsocketRoutesAnswerJSON: a request that is no websocket handshake, on either websocket
// route, gets a JSON error that says what to do, like the API's.
func TestWebsocketRoutesAnswerJSON(t *testing.T) {
	ts := mustOpenServer(t, server.Config{})
	ts.addRecording(t, "r-plain")
	for _, path := range []string{"/api/runs/r-plain/events", "/runs/r-plain/live"} {
		for _, tt := range []struct {
			name   string
			header map[string]string
			want   string
		}{
			{"plain GET", nil, "this route is a websocket: connect with a websocket client"},
			{"bad handshake", map[string]string{"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "7"}, "websocket: unsupported version"},
		} {
			t.Run(tt.name+" "+path, func(t *testing.T) {
				res := ts.do(t, request{path: path, header: tt.header})
				if res.status != http.StatusBadRequest || !strings.HasPrefix(res.header.Get("Content-Type"), "application/json") ||
					!strings.Contains(res.apiError(t), tt.want) {
					t.Errorf("%d %s %s; want 400 JSON saying %q", res.status, res.header.Get("Content-Type"), res.body, tt.want)
				}
			})
		}
	}
}

// TestSlowViewerIsDropped: a viewer that stops reading is cut by the write timeout while the run
// and the other viewers go on unharmed; resuming after the last event it got loses nothing.
func TestSlowViewerIsDropped(t *testing.T) {
	logs := &lockedBuffer{}
	ts := mustOpenServer(t, server.Config{WriteTimeout: 2 * time.Second, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	rec := ts.addRecording(t, "r-slow")

	slow := ts.dialSmallBuffer(t, "/api/runs/r-slow/events")
	healthy := ts.mustDial(t, "/api/runs/r-slow/events")
	healthySeqs := make(chan int64, 1)
	healthyClose := make(chan *websocket.CloseError, 1)
	go func() {
		// Reads on its own goroutine and reports each event, so the test can pace the run by
		// the healthy viewer while the slow one falls behind.
		defer close(healthySeqs)
		for {
			batch, _, err := readBatch(healthy)
			if err != nil {
				ce, _ := err.(*websocket.CloseError)
				healthyClose <- ce
				return
			}
			for _, ev := range batch {
				healthySeqs <- ev.Seq
			}
		}
	}()

	// 12 MiB, in messages small enough for a reading viewer to take each well within the write
	// timeout on a loaded machine: more than the socket buffers hold for a viewer that reads
	// nothing (its receive buffer is fixed small; the server's send buffer grows to
	// net.ipv4.tcp_wmem's 4 MiB at most).
	const n = 48
	big := strings.Repeat("x", 256<<10)
	var healthyGot []int64
	for range n {
		emitMessages(rec, 1, big)
		healthyGot = append(healthyGot, receive(t, healthySeqs))
	}
	start := time.Now()
	rec.Finish(traces.StatusCompleted, "")
	if d := time.Since(start); d > time.Second {
		t.Errorf("finishing took %s: the run waited on a viewer", d)
	}
	for seq := range healthySeqs {
		healthyGot = append(healthyGot, seq)
	}
	if !slices.Equal(healthyGot, span(1, n+1)) {
		t.Errorf("healthy viewer got %d events, want %d in order", len(healthyGot), n+1)
	}
	if ce := receive(t, healthyClose); ce == nil || ce.Code != websocket.CloseNormalClosure {
		t.Errorf("healthy viewer closed with %v", ce)
	}

	// The server gives up on it within twice the write timeout, and says so.
	eventually(t, "the server cuts the slow viewer", func() bool { return strings.Contains(logs.String(), "websocket viewer cut") })
	// It reads nothing, so no close frame reaches it: the socket is cut (1006). A viewer that is
	// late but reads gets CloseTooSlow with where to resume (TestLateViewerGetsResumeHint).
	got, closed := readEvents(t, slow)
	last := int64(len(got))
	if closed.Code != websocket.CloseAbnormalClosure && closed.Code != server.CloseTooSlow {
		t.Fatalf("slow viewer got %d events and closed with %v, want it cut", len(got), closed)
	}
	if !slices.Equal(seqs(got), span(1, last)) || last >= n {
		t.Fatalf("slow viewer got seqs %v before being dropped", seqs(got))
	}

	// Resuming, as a client does, from each "too slow; resume with after=N" (a reader stalled
	// past the write timeout on a loaded machine is cut too), loses and repeats nothing.
	for range 10 {
		var rest []traces.Event
		rest, closed = readEvents(t, ts.mustDial(t, "/api/runs/r-slow/events?after="+itoa(int64(len(got)))))
		got = append(got, rest...)
		if closed.Code != server.CloseTooSlow || closed.Text != "too slow; resume with after="+itoa(int64(len(got))) {
			break
		}
	}
	if !slices.Equal(seqs(got), span(1, n+1)) || closed.Code != websocket.CloseNormalClosure {
		t.Errorf("after resuming from %d: %d events in all, closed %v; want all %d once, then a normal close", last, len(got), closed, n+1)
	}
}

// TestClientMessageOverLimit: the server reads nothing from viewers but still bounds what they
// send.
func TestClientMessageOverLimit(t *testing.T) {
	ts := mustOpenServer(t, server.Config{})
	ts.addRecording(t, "r-chatty")
	conn := ts.mustDial(t, "/api/runs/r-chatty/events")
	if err := conn.WriteMessage(websocket.TextMessage, []byte("small talk is ignored")); err != nil {
		t.Fatal(err)
	}
	if err := conn.WriteMessage(websocket.TextMessage, make([]byte, 8<<10)); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, _, err := conn.ReadMessage(); !websocket.IsCloseError(err, websocket.CloseMessageTooBig) {
		t.Errorf("after an 8 KiB message: %v, want close 1009 (message too big)", err)
	}
}

// dialSmallBuffer opens a websocket to path whose receive buffer is fixed at 64 KiB: Linux would
// otherwise grow it up to net.ipv4.tcp_rmem's maximum (32 MiB here), enough to swallow everything
// a test sends to a viewer that reads nothing.
func (ts *testServer) dialSmallBuffer(tb testing.TB, path string) *websocket.Conn {
	tb.Helper()
	nd := &net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		var soErr error
		err := c.Control(func(fd uintptr) {
			soErr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 64<<10)
		})
		return errors.Join(err, soErr)
	}}
	d := &websocket.Dialer{HandshakeTimeout: 10 * time.Second, NetDialContext: nd.DialContext}
	conn, res, err := dialWith(tb, d, "ws://"+ts.Host+path, nil)
	if err != nil {
		tb.Fatalf("dial %s: %v (status %d: %s)", path, err, res.status, res.body)
	}
	return conn
}

// lockedBuffer is a log destination that the test reads while the server writes.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
