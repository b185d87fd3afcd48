package attach_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/cloudwego/eino/adk"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/attach"
	"github.com/baton-dev/baton/internal/attachtest"
	"github.com/baton-dev/baton/server"
	"github.com/baton-dev/baton/traces"
)

// startLog records the answers to POST /api/ingest: when each came, its status, and its
// Retry-After.
type startLog struct {
	mu      sync.Mutex
	answers []startAnswer
}

type startAnswer struct {
	asked, answered time.Time
	status          int
	retryAfter      int
}

func (l *startLog) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/api/ingest" {
			next.ServeHTTP(w, r)
			return
		}
		rec := &statusWriter{ResponseWriter: w}
		asked := time.Now()
		next.ServeHTTP(rec, r)
		after, _ := strconv.Atoi(w.Header().Get("Retry-After"))
		l.mu.Lock()
		defer l.mu.Unlock()
		l.answers = append(l.answers, startAnswer{asked: asked, answered: time.Now(), status: rec.status, retryAfter: after})
	})
}

func (l *startLog) snapshot() []startAnswer {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]startAnswer(nil), l.answers...)
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

// TestBusyBatonTakesTheRunLater: a Baton whose places for streamed runs are all taken answers the
// app's start 429 with a Retry-After; the app runs on, its recorder keeps the run queued, asks
// again no sooner than Baton said, and delivers the run whole once a place frees.
func TestBusyBatonTakesTheRunLater(t *testing.T) {
	ln := listen(t)
	base := "http://" + ln.Addr().String()
	s, err := server.New(server.Config{Addr: ln.Addr().String(), Flows: []agents.Flow{}, Logger: slog.New(slog.DiscardHandler),
		MaxIngestRuns: 1, IngestTimeout: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var starts startLog
	hs := &http.Server{Handler: starts.wrap(s.Handler())}
	go hs.Serve(ln) //nolint:errcheck // ends with Close below
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		hs.Close()
	})

	// Another app holds the one place.
	var occupant struct{ ID, Secret string }
	post(t, base+"/api/ingest", "", `{}`, http.StatusCreated, &occupant)

	b := attach.New(attach.Config{URL: base, Logger: slog.New(slog.DiscardHandler)})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	runner, err := attachtest.Helpdesk(ctx, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, transfers := attachtest.Drain(t, runner.Query(ctx, attachtest.HelpdeskInput, b.Option()))

	for deadline := time.Now().Add(10 * time.Second); len(starts.snapshot()) < 2; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the app's start never came")
		}
	}
	// The occupant's run ends: its place frees at once.
	finished := traces.Event{Seq: 1, Time: time.Now().UTC(), Kind: traces.KindRunFinished, Run: &traces.RunMark{Status: traces.StatusCompleted}}
	body, _ := json.Marshal(map[string]any{"events": []traces.Event{finished}})
	post(t, base+"/api/ingest/"+occupant.ID, occupant.Secret, string(body), http.StatusOK, nil)

	closeCtx, stop := context.WithTimeout(context.Background(), 20*time.Second)
	defer stop()
	if err := b.Close(closeCtx); err != nil {
		t.Fatalf("Close: %v, want the run delivered whole", err)
	}
	answers := starts.snapshot()[1:] // the app's
	if len(answers) < 2 || answers[0].status != http.StatusTooManyRequests || answers[len(answers)-1].status != http.StatusCreated {
		t.Fatalf("the app's starts were answered %+v, want 429 first, 201 last", answers)
	}
	for i, a := range answers[:len(answers)-1] {
		if a.retryAfter < 1 {
			t.Errorf("429 %d has no Retry-After", i)
		}
		if gap := answers[i+1].asked.Sub(a.answered); gap < time.Duration(a.retryAfter)*time.Second-50*time.Millisecond {
			t.Errorf("start %d came %s after a 429 that said Retry-After: %d", i+1, gap, a.retryAfter)
		}
	}
	var runs []traces.Run
	getJSON(t, base+"/api/runs", &runs)
	var id string
	for _, r := range runs {
		if r.ID != occupant.ID {
			id = r.ID
		}
	}
	tr := trace(t, base, id)
	attachtest.CheckHelpdesk(t, tr, transfers)
}

// post sends body to url with the run's secret when not "", requires status want, and decodes the
// answer into out when not nil.
func post(t *testing.T, url, secret, body string, want int, out any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader([]byte(body)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if secret != "" {
		req.Header.Set("Baton-Run-Secret", secret)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var answer bytes.Buffer
	answer.ReadFrom(res.Body) //nolint:errcheck // the status says what matters
	if res.StatusCode != want {
		t.Fatalf("POST %s: %d %s, want %d", url, res.StatusCode, answer.String(), want)
	}
	if out != nil {
		if err := json.Unmarshal(answer.Bytes(), out); err != nil {
			t.Fatal(err)
		}
	}
}

// TestResumeAlreadyTakenIsARunOfItsOwn: when another client resumed the interrupt first, Baton
// refuses to join the app's resume to the run (a run goes on from an interrupt once), and the
// recorder records the resumed part as a run of its own, in the interrupt's conversation, whole.
func TestResumeAlreadyTakenIsARunOfItsOwn(t *testing.T) {
	base := startBaton(t, listen(t))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	runner, err := attachtest.SupervisedRefunds(ctx, attachtest.NewStore(), false)
	if err != nil {
		t.Fatal(err)
	}
	first := attach.New(attach.Config{URL: base})
	interrupt := attachtest.DrainInterrupted(t, runner.Query(ctx, attachtest.SupervisedRefundsInput, adk.WithCheckPointID("cp-1"), first.Option()))
	if err := first.Close(ctx); err != nil {
		t.Fatal(err)
	}
	var taken struct{ ID string }
	post(t, base+"/api/ingest", "", fmt.Sprintf(`{"resumes":%q}`, interrupt), http.StatusOK, &taken)

	b := attach.New(attach.Config{URL: base, Logger: slog.New(slog.DiscardHandler)})
	resumed, err := runner.ResumeWithParams(ctx, "cp-1", &adk.ResumeParams{Targets: map[string]any{interrupt: "approved"}}, b.Option())
	if err != nil {
		t.Fatal(err)
	}
	attachtest.Drain(t, resumed)
	closeCtx, stop := context.WithTimeout(ctx, 20*time.Second)
	defer stop()
	if err := b.Close(closeCtx); err != nil {
		t.Fatalf("Close: %v, want the resumed part delivered as a run of its own", err)
	}
	var runs []traces.Run
	getJSON(t, base+"/api/runs", &runs)
	if len(runs) != 2 || runs[0].ID == taken.ID {
		t.Fatalf("runs %+v, want the interrupted run and the resumed part's own", runs)
	}
	tr := trace(t, base, runs[0].ID)
	if tr.Run.Status != traces.StatusCompleted || tr.Run.Conversation != interrupt || tr.Events[0].Kind != traces.KindResumed {
		t.Errorf("the resumed part's run: %+v, first event %s; want completed, in conversation %s, from resumed", tr.Run, tr.Events[0].Kind, interrupt)
	}
}
