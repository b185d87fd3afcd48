package server_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/baton-dev/baton/server"
)

// FuzzCreateRun: whatever the body, POST /api/runs answers 201 or a 4xx with a JSON message,
// never a 500 or a panic.
func FuzzCreateRun(f *testing.F) {
	for _, seed := range []string{
		`{"flow": "echo"}`, `{"flow": "echo", "input": "x", "pace_ms": 5}`, `{"flow": "echo",`, `[]`, `null`, ``,
		`{"flow": 1}`, `{"flow": "echo", "input": " "}`, `{"pace_ms": 1e400}`, `{"flow":"echo"}{}`, "\xff",
		`{"flow": "echo", "flow": "pair"}`, `{"input": "\ud800"}`,
	} {
		f.Add(seed)
	}
	srv, err := server.New(server.Config{Flows: testFlows(), Logger: slog.New(slog.DiscardHandler), MaxRunning: 1 << 20})
	if err != nil {
		f.Fatal(err)
	}
	server.SetRunner(srv, quickRunner)
	f.Cleanup(func() { srv.Shutdown(context.Background()) })
	h := srv.Handler()
	f.Fuzz(func(t *testing.T, body string) {
		r := httptest.NewRequest(http.MethodPost, "/api/runs", strings.NewReader(body))
		r.Host = server.DefaultAddr
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		switch {
		case w.Code == http.StatusCreated:
		case w.Code >= 400 && w.Code < 500:
			var e struct{ Error string }
			if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || e.Error == "" {
				t.Errorf("%d with body %q", w.Code, w.Body)
			}
		default:
			t.Errorf("status %d for %q: %s", w.Code, body, w.Body)
		}
	})
}
