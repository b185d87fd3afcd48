package server_test

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/internal/agentstest"
	"github.com/baton-dev/baton/server"
	"github.com/baton-dev/baton/traces"
)

func TestNewRejectsBadConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  server.Config
		want string
	}{
		{"no port", server.Config{Addr: "localhost"}, `address "localhost" is not host:port`},
		{"port not a number", server.Config{Addr: "localhost:http"}, `port "http" is not a number`},
		{"negative body limit", server.Config{MaxBody: -1}, "max body -1 is negative"},
		{"negative connection cap", server.Config{MaxConns: -1}, "max conns -1 is negative"},
		{"negative body timeout", server.Config{BodyTimeout: -time.Second}, "body timeout -1s is negative"},
		{"negative shutdown grace", server.Config{ShutdownGrace: -time.Second}, "shutdown grace -1s is negative"},
		{"pace too long", server.Config{DefaultPace: time.Minute}, "default pace 1m0s is not between 0 and 10000ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := server.New(tt.cfg)
			if traces.ErrorCode(err) != traces.CodeInvalid || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New: %v, want an invalid error with %q", err, tt.want)
			}
		})
	}
}

func TestURL(t *testing.T) {
	tests := []struct {
		name  string
		cfg   server.Config
		want  string
		token bool
	}{
		{"default", server.Config{}, "http://127.0.0.1:7070/", false},
		{"localhost", server.Config{Addr: "localhost:8080"}, "http://localhost:8080/", false},
		{"ipv6 loopback", server.Config{Addr: "[::1]:8080"}, "http://[::1]:8080/", false},
		{"chosen token", server.Config{Token: strongToken}, "http://127.0.0.1:7070/?token=" + strongToken, true},
		{"all interfaces", server.Config{Addr: ":7070"}, "http://127.0.0.1:7070/?token=", true},
		{"lan address", server.Config{Addr: "192.168.1.5:7070"}, "http://192.168.1.5:7070/?token=", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, err := server.New(tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Shutdown(context.Background())
			if !strings.HasPrefix(srv.URL(), tt.want) || (srv.Token() != "") != tt.token {
				t.Errorf("URL() = %q, Token() = %q; want %q..., token %v", srv.URL(), srv.Token(), tt.want, tt.token)
			}
		})
	}
}

func TestStartFailsOnBusyAddress(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	srv, err := server.New(server.Config{Addr: ln.Addr().String(), Flows: testFlows(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown(context.Background())
	if err := srv.Start(context.Background()); err == nil || !strings.Contains(err.Error(), "listen on") {
		t.Errorf("Start on a busy address: %v", err)
	}
}

// TestCatalogueFlowsRun runs every built-in flow through the real agents.RunFlow and watches it
// TestRealFlowsRun runs real eino flows through the server: every catalogue flow completes, and
// a flow whose tool errors and panics ends as a failed run with an error event while the server
// goes on serving.
func TestRealFlowsRun(t *testing.T) {
	failing := agentstest.FailingTool()
	ts := mustOpenServer(t, server.Config{Flows: append(agents.Catalogue(), failing)})
	server.SetRunner(ts.Server, agents.RunFlow)
	tests := []struct {
		flow string
		want traces.Status
	}{
		{"agenttool", traces.StatusCompleted},
		{"supervisor", traces.StatusCompleted},
		{"transfer", traces.StatusCompleted},
		{failing.Name, traces.StatusFailed},
	}
	for _, tt := range tests {
		t.Run(tt.flow, func(t *testing.T) {
			id := ts.createRun(t, `{"flow": "`+tt.flow+`", "pace_ms": 0}`)
			evs, closed := readEvents(t, ts.mustDial(t, "/api/runs/"+id+"/events"))
			if closed.Code != websocket.CloseNormalClosure || len(evs) == 0 || evs[len(evs)-1].Kind != traces.KindRunFinished {
				t.Fatalf("%d events, closed %v", len(evs), closed)
			}
			tr := ts.trace(t, id)
			if tr.Run.Status != tt.want {
				t.Errorf("status %s (%s), want %s", tr.Run.Status, tr.Run.Error, tt.want)
			}
			errs := 0
			for _, e := range tr.Events {
				if e.Kind == traces.KindError {
					errs++
				}
			}
			if (errs > 0) != (tt.want == traces.StatusFailed) {
				t.Errorf("%d error events in a %s run", errs, tr.Run.Status)
			}
			if res := ts.do(t, request{path: "/api/flows"}); res.status != http.StatusOK {
				t.Errorf("after the run, GET /api/flows: %d", res.status)
			}
		})
	}
}
