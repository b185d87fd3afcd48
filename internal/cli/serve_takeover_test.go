package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/baton-dev/baton/internal/postgres/pgtest"
	"github.com/baton-dev/baton/internal/record"
	"github.com/baton-dev/baton/traces"
)

// switchProxy is the address an app posts to: a proxy to one server, then to another.
type switchProxy struct {
	target atomic.Pointer[url.URL]
	srv    *httptest.Server
}

func newSwitchProxy(t *testing.T, to string) *switchProxy {
	p := &switchProxy{}
	p.to(t, to)
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(p.target.Load()) },
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			http.Error(w, err.Error(), http.StatusBadGateway) // the server is down: the app retries
		},
	}
	p.srv = httptest.NewServer(proxy)
	t.Cleanup(p.srv.Close)
	return p
}

func (p *switchProxy) to(t *testing.T, base string) {
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	p.target.Store(u)
}

// TestAppCarriesItsRunOnAtAnotherServer: an app streams a run through a proxy to server A (a
// process of its own) on PostgreSQL; A is killed mid-run and the proxy sends the app's posts to
// server B. B answers them "another server records the run, retry" until A's lease expires, then
// takes the run over; the app sends again what A took but had not written, and goes on. The run
// ends completed, with each of the app's events once, in order, and nothing between them: no
// interrupted end, no resumed event.
func TestAppCarriesItsRunOnAtAnotherServer(t *testing.T) {
	db := pgtest.Database(t)
	lease := []string{"--lease-heartbeat", "200ms", "--lease-expiry", "1s"}
	a := startServe(t, db, lease...)
	b := serveHere(t, append([]string{"--db", db}, lease...)...)
	proxy := newSwitchProxy(t, a.base)

	var logs lockedBuffer
	dest := record.NewDestination(record.Config{URL: proxy.srv.URL, Buffer: 10000, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the app's log:\n%s", logs.String())
		}
	})
	sink := dest.Sink("")
	sink.PutAgent(traces.Agent{Name: "bot", Kind: "chat_model"})
	const before, after = 300, 300 // about as many before A is killed as after
	at := time.Now().UTC()
	msg := func(n int) traces.Event {
		return traces.Event{Time: at.Add(time.Duration(n) * time.Millisecond), Kind: traces.KindMessage, Agent: "bot",
			Message: &traces.Message{Role: "assistant", Content: fmt.Sprintf("message %d", n)}}
	}
	sink.Emit(traces.Event{Time: at, Kind: traces.KindRunStarted, Run: &traces.RunMark{Flow: "support", Input: "carry on", Status: traces.StatusRunning}})
	emitted := make(chan struct{})
	go func() { // the app goes on while A is killed, its posts in flight
		defer close(emitted)
		for n := 1; n <= before+after; n++ {
			sink.Emit(msg(n))
			if n%10 == 0 {
				time.Sleep(2 * time.Millisecond)
			}
		}
	}()
	id := appRunOn(t, b.url)
	waitFor(t, "B to see A's first events", func() bool { return len(traceOn(t, b.url, id).Events) > 100 })
	a.kill()
	proxy.to(t, b.url)
	<-emitted
	sink.FinishAt(time.Now().UTC(), traces.StatusCompleted, "")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := dest.Close(ctx); err != nil {
		t.Fatalf("the app's runs were not delivered whole: %v", err)
	}

	tr := traceOn(t, b.url, id)
	if tr.Run.Status != traces.StatusCompleted {
		t.Errorf("the run is %s; want completed", tr.Run.Status)
	}
	if len(tr.Events) != before+after+2 {
		t.Errorf("the run has %d events; want run.started, %d messages and run.finished", len(tr.Events), before+after)
	}
	for i, e := range tr.Events {
		var want string
		switch {
		case i == 0:
			want = string(traces.KindRunStarted)
		case i == len(tr.Events)-1:
			want = string(traces.KindRunFinished)
		default:
			want = fmt.Sprintf("message %d", i)
		}
		got := string(e.Kind)
		if e.Message != nil {
			got = e.Message.Content
		}
		if got != want || e.Seq != int64(i+1) {
			t.Fatalf("event %d is %d %q; want %d %q (every event of the app once, in order)", i+1, e.Seq, got, i+1, want)
		}
	}
}

// appRunOn returns the id of the one run that base lists, waiting for it.
func appRunOn(t *testing.T, base string) string {
	t.Helper()
	var id string
	waitFor(t, "the app's run to be listed", func() bool {
		res, err := http.Get(base + "api/runs")
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var runs []traces.Run
		if json.NewDecoder(res.Body).Decode(&runs) == nil && len(runs) == 1 {
			id = runs[0].ID
		}
		return id != ""
	})
	return id
}
