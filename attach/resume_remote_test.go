package attach_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/cloudwego/eino/adk"

	"github.com/baton-dev/baton/attach"
	"github.com/baton-dev/baton/internal/attachtest"
	"github.com/baton-dev/baton/traces"
)

// slowFirstRun serves base through a proxy that holds back the posts of the first run created
// until a second run is created, or hold has passed since the first: a Baton slow to take the
// interrupted part while the app resumes at once. Old recorders registered the resumed part then,
// before the interrupted part's end, and the server made it a run of its own.
func slowFirstRun(t *testing.T, base string, hold time.Duration) string {
	t.Helper()
	target, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	proxy := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(target) }}
	var (
		mu       sync.Mutex
		creates  int
		deadline time.Time
		second   = make(chan struct{})
	)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/ingest" {
			proxy.ServeHTTP(w, r) // answered before a post of the new run is let through
			mu.Lock()
			if creates++; creates == 1 {
				deadline = time.Now().Add(hold)
			} else if creates == 2 {
				close(second)
			}
			mu.Unlock()
			return
		}
		mu.Lock()
		wait := time.Until(deadline)
		mu.Unlock()
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-second:
		case <-t.C:
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	return front.URL
}

// TestQuickResumeJoinsItsRun resumes SupervisedRefunds the moment the app sees the interrupt,
// recorded to a Baton slow to take the interrupted part: the resumed part still joins its run, a
// single run told as one story, and the app is not slowed by the wait.
func TestQuickResumeJoinsItsRun(t *testing.T) {
	base := startBaton(t, listen(t))
	b := attach.New(attach.Config{URL: slowFirstRun(t, base, time.Second)})
	defer b.Close(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	runner, err := attachtest.SupervisedRefunds(ctx, attachtest.NewStore(), false)
	if err != nil {
		t.Fatal(err)
	}
	interrupt := attachtest.DrainInterrupted(t, runner.Query(ctx, attachtest.SupervisedRefundsInput, adk.WithCheckPointID("cp-1"), b.Option()))
	began := time.Now()
	resumed, err := runner.ResumeWithParams(ctx, "cp-1", &adk.ResumeParams{Targets: map[string]any{interrupt: "approved"}}, b.Option())
	if err != nil {
		t.Fatal(err)
	}
	attachtest.Drain(t, resumed)
	if took := time.Since(began); took > resumeWait {
		t.Errorf("the app's resume took %s, want well under %s", took, resumeWait)
	}
	closeCtx, stop := context.WithTimeout(ctx, 20*time.Second)
	defer stop()
	if err := b.Close(closeCtx); err != nil {
		t.Fatal(err)
	}
	var runs []traces.Run
	getJSON(t, base+"/api/runs", &runs)
	if len(runs) != 1 {
		t.Fatalf("%d runs on the server (%+v), want the one run", len(runs), runs)
	}
	checkSupervisedResume(t, trace(t, base, runs[0].ID), interrupt)
}
