package server_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/baton-dev/baton/server"
)

// TestCanceledRequestIsNotLogged: a render that failed because the page aborted its request
// (stepping through a run aborts the inspector it no longer wants) is not logged as Baton's
// error; the same failure with the client still there is.
func TestCanceledRequestIsNotLogged(t *testing.T) {
	logs := &lockedBuffer{}
	ts := mustOpenServer(t, server.Config{Logger: slog.New(slog.NewTextHandler(logs, nil))})
	err := fmt.Errorf("render /runs/r/inspector: %w", context.Canceled)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	server.Describe(ts.Server, err, httptest.NewRequest("GET", "/runs/r/inspector", nil).WithContext(ctx))
	if got := logs.String(); got != "" {
		t.Errorf("a request its client canceled was logged: %s", got)
	}
	status, msg := server.Describe(ts.Server, err, httptest.NewRequest("GET", "/runs/r/inspector", nil))
	if status != 500 || msg != "internal error" || !strings.Contains(logs.String(), "request failed") {
		t.Errorf("with the client there: %d %q, logs %q; want a logged internal error", status, msg, logs.String())
	}
}

// TestClosedConnectionIsNotLogged: an answer written to a connection its client closed (a page
// that stopped wanting the rows it asked for) fails with a broken pipe, which is not Baton's error.
func TestClosedConnectionIsNotLogged(t *testing.T) {
	logs := &lockedBuffer{}
	ts := mustOpenServer(t, server.Config{Logger: slog.New(slog.NewTextHandler(logs, nil))})
	for _, errno := range []syscall.Errno{syscall.EPIPE, syscall.ECONNRESET} {
		err := fmt.Errorf("write tcp 127.0.0.1:1->127.0.0.1:2: %w", &os.SyscallError{Syscall: "write", Err: errno})
		server.Describe(ts.Server, err, httptest.NewRequest("GET", "/runs/r/rows", nil))
	}
	if got := logs.String(); got != "" {
		t.Errorf("a write to a closed connection was logged: %s", got)
	}
}

// TestLeftPageIsNotLogged: the error page of a request whose client left (a tab navigating away
// while its page loads) fails to render for want of a reader; that is not Baton's error either.
func TestLeftPageIsNotLogged(t *testing.T) {
	logs := &lockedBuffer{}
	ts := mustOpenServer(t, server.Config{Logger: slog.New(slog.NewTextHandler(logs, nil))})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req := httptest.NewRequest("GET", "/runs/r-nowhere", nil).WithContext(ctx)
	req.Host = ts.Host
	ts.Handler().ServeHTTP(httptest.NewRecorder(), req)
	if got := logs.String(); strings.Contains(got, "level=ERROR") {
		t.Errorf("a page its client left was logged as an error: %s", got)
	}
}
