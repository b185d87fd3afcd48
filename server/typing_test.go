package server_test

import (
	"errors"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/baton-dev/baton/server"
	"github.com/baton-dev/baton/traces"
)

// readText reads the next message of conn as text, failing on anything else.
func readText(t *testing.T, conn *websocket.Conn) string {
	t.Helper()
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, data, err := conn.ReadMessage()
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	return string(data)
}

// readClose reads conn until it closes and returns the close code.
func readClose(t *testing.T, conn *websocket.Conn) int {
	t.Helper()
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		_, data, err := conn.ReadMessage()
		var closed *websocket.CloseError
		if errors.As(err, &closed) {
			return closed.Code
		}
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		t.Logf("message before the close: %s", data)
	}
}

func TestTypingSocket(t *testing.T) {
	runs := make(chan started, 1)
	ts := mustOpenServer(t, server.Config{})
	server.SetRunner(ts.Server, handOver(runs))
	id := ts.createRun(t, `{"flow": "echo"}`)
	st := receive(t, runs)
	conn := ts.mustDial(t, "/runs/"+id+"/typing")
	if got := readText(t, conn); got != "[]" {
		t.Fatalf("first message = %s, want [] (nothing streamed yet)", got)
	}
	st.opts.Typing("writer", "Once upon", false)
	if got := readText(t, conn); got != `[{"agent":"writer","text":"Once upon"}]` {
		t.Fatalf("after a chunk: %s", got)
	}
	st.opts.Typing("writer", "Once upon a time.", true)
	if got := readText(t, conn); got != "[]" {
		t.Fatalf("after the reply ended: %s", got)
	}
	st.rec.Finish(traces.StatusCompleted, "")
	if code := readClose(t, conn); code != websocket.CloseNormalClosure {
		t.Errorf("close code %d when the run ended", code)
	}

	// A run that is over has nothing being typed: the socket closes at once.
	again := ts.mustDial(t, "/runs/"+id+"/typing")
	if code := readClose(t, again); code != websocket.CloseNormalClosure {
		t.Errorf("close code %d for an ended run", code)
	}
	if res := ts.do(t, request{path: "/runs/r-00000000/typing"}); res.status != 404 {
		t.Errorf("unknown run: %d %s", res.status, res.body)
	}
}
