package record

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/baton-dev/baton/traces"
)

// TestARunTakenOverIsSentOnFromWhatTheDatabaseHas: a server takes 10 of the run's events and
// stops having written 5 of them; the next post is told the session is over, and the continue is
// answered by a server that took the run over, which has the run up to event 5. The app sends
// events 6 on again, numbered from 1 in the new session: the server ends with each event once, in
// order, and the app reports the run delivered whole.
func TestARunTakenOverIsSentOnFromWhatTheDatabaseHas(t *testing.T) {
	var mu sync.Mutex
	var stored []traces.Event // the database: the run's events, by the run's seq
	after, session := int64(0), 1
	dec := traces.NewEventDecoder()
	took := make(chan struct{}) // closed once the first server has taken 10 events
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/api/ingest" {
			var req struct{ Continues string }
			json.Unmarshal(body, &req)
			if req.Continues == "" {
				fmt.Fprint(w, `{"id": "r", "secret": "s1", "next": 1, "after": 0}`)
				return
			}
			if r.Header.Get(runSecretHeader) != "s1" {
				http.Error(w, `{"error": "not the run's secret"}`, http.StatusForbidden)
				return
			}
			stored, after, session, dec = stored[:5], 5, 2, traces.NewEventDecoder()
			fmt.Fprint(w, `{"id": "r", "secret": "s2", "next": 1, "after": 5, "moved": true}`)
			return
		}
		var b struct{ Events json.RawMessage }
		json.Unmarshal(body, &b)
		if session == 1 && len(stored) >= 10 {
			w.WriteHeader(http.StatusConflict)
			fmt.Fprint(w, `{"error": "the run's server stopped: continue", "ended": true}`)
			return
		}
		if len(b.Events) > 0 {
			events, err := dec.DecodeEvents(b.Events, nil)
			if err != nil {
				t.Error(err)
			}
			for _, e := range events {
				if want := int64(len(stored)) - after + 1; e.Seq != want {
					t.Errorf("session %d: event seq %d, want %d", session, e.Seq, want)
				}
				e.Seq += after
				stored = append(stored, e)
			}
			if session == 1 && len(stored) == 10 {
				close(took)
			}
		}
		fmt.Fprintf(w, `{"next": %d}`, int64(len(stored))-after+1)
	}))
	defer srv.Close()

	c := newClient(Config{URL: srv.URL, Buffer: 100, Logger: slog.New(slog.DiscardHandler)})
	run := c.run("")
	msg := func(n int) traces.Event {
		return traces.Event{Kind: traces.KindMessage, Agent: "bot", Message: &traces.Message{Role: "assistant", Content: fmt.Sprint("message ", n)}}
	}
	run.Emit(traces.Event{Kind: traces.KindRunStarted, Run: &traces.RunMark{Flow: "f", Status: traces.StatusRunning}})
	for n := 2; n <= 10; n++ {
		run.Emit(msg(n))
	}
	select {
	case <-took:
	case <-time.After(10 * time.Second):
		t.Fatal("the first server has not taken the first 10 events within 10 s")
	}
	for n := 11; n <= 20; n++ {
		run.Emit(msg(n))
	}
	run.FinishAt(time.Now().UTC(), traces.StatusCompleted, "")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.close(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(stored) != 21 {
		t.Fatalf("the database has %d events; want 21", len(stored))
	}
	for i, e := range stored {
		want := fmt.Sprint("message ", i+1)
		got := string(e.Kind)
		if e.Message != nil {
			got = e.Message.Content
		}
		switch i {
		case 0:
			want = string(traces.KindRunStarted)
		case 20:
			want = string(traces.KindRunFinished)
		}
		if e.Seq != int64(i+1) || got != want {
			t.Errorf("event %d is %d %q; want %d %q", i+1, e.Seq, got, i+1, want)
		}
	}
}
