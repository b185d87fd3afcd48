package inprocess_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/baton-dev/baton/attach/inprocess"
	"github.com/baton-dev/baton/internal/attachtest"
	"github.com/baton-dev/baton/traces"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestStartServesTheAppsRuns starts the page inside the test, records the helpdesk app into it,
// and finds the run on the page's list and page.
func TestStartServesTheAppsRuns(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out bytes.Buffer
	b, err := inprocess.Start(ctx, inprocess.Options{Out: &out})
	if err != nil {
		t.Fatal(err)
	}
	url := strings.TrimSpace(out.String()[strings.Index(out.String(), "http://"):])
	runner, err := attachtest.Helpdesk(ctx, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	attachtest.Drain(t, runner.Query(ctx, attachtest.HelpdeskInput, b.Option()))
	if err := b.Close(ctx); err != nil {
		t.Fatal(err)
	}
	// The list shows a run's end once its store has committed it (the durability promise): a
	// moment after Close, which waits for Baton to have it.
	var runs []traces.Run
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		resp, err := http.Get(url + "/api/runs")
		if err != nil {
			t.Fatal(err)
		}
		err = json.NewDecoder(resp.Body).Decode(&runs)
		resp.Body.Close()
		if err == nil && len(runs) == 1 && runs[0].Status == traces.StatusCompleted && runs[0].Flow == "triage" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("runs = %+v (%v), want the app's one completed run", runs, err)
		}
	}
	page, err := http.Get(url + "/runs/" + runs[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	page.Body.Close()
	if page.StatusCode != http.StatusOK {
		t.Errorf("run page: %s", page.Status)
	}
	cancel()
	// The page stops with its context: wait for the server's goroutines before goleak looks.
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		resp, err := http.Get(url + "/api/runs")
		if err != nil {
			return
		}
		resp.Body.Close()
	}
	t.Error("the page still answers after its context ended")
}

func TestStartRefusesAnAddressInUse(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out bytes.Buffer
	if _, err := inprocess.Start(ctx, inprocess.Options{Out: &out}); err != nil {
		t.Fatal(err)
	}
	addr := strings.TrimPrefix(strings.TrimSpace(out.String()[strings.Index(out.String(), "http://"):]), "http://")
	if _, err := inprocess.Start(ctx, inprocess.Options{Addr: addr, Out: &out}); err == nil || !strings.Contains(err.Error(), "serve baton in process") {
		t.Errorf("a second page on %s: err = %v, want a clear failure", addr, err)
	}
}
