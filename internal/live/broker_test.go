package live_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/baton-dev/baton/internal/live"
	"github.com/baton-dev/baton/traces"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var t0 = time.Date(2026, 3, 14, 9, 30, 0, 0, time.UTC)

// seqs returns the events' seq numbers, in order.
func seqs(events []traces.Event) []int64 {
	out := make([]int64, len(events))
	for i, e := range events {
		out[i] = e.Seq
	}
	return out
}

// newBroker returns NewBroker(keep); cleanup ends the runs it holds that are still going on and
// waits until its store has them, so that no writer of the broker's outlives the test.
func newBroker(t *testing.T, keep int) *live.Broker {
	t.Helper()
	b := live.NewBroker(keep)
	t.Cleanup(func() {
		for _, run := range b.Runs() {
			if rec, err := b.Get(run.ID); err == nil {
				rec.Finish(traces.StatusCanceled, "the test ended")
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := b.Close(ctx); err != nil {
			t.Error(err)
		}
	})
	return b
}

// recordingStartedAt returns a recording of run id started at start.
func recordingStartedAt(id string, start time.Time) *traces.Recording {
	return traces.NewRecording(traces.Run{ID: id, Flow: "f", StartedAt: start}, nil)
}

func TestBrokerAddAndGet(t *testing.T) {
	b := newBroker(t, 0)
	first := recordingStartedAt("r1", t0)
	if err := b.Add(first); err != nil {
		t.Fatalf("Add(r1): %v", err)
	}
	for _, tc := range []struct {
		name     string
		do       func() error
		wantCode traces.Code
		wantMsg  string
	}{
		{"get an added run", func() error {
			got, err := b.Get("r1")
			if err == nil && got != first {
				return fmt.Errorf("Get returned another recording")
			}
			return err
		}, "", ""},
		{"add a taken id", func() error { return b.Add(recordingStartedAt("r1", t0)) }, traces.CodeConflict, `run "r1" already exists`},
		{"get an unknown id", func() error { _, err := b.Get("nope"); return err }, traces.CodeNotFound, `run "nope" not found`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.do()
			if code := traces.ErrorCode(err); code != tc.wantCode {
				t.Fatalf("error %v has code %q, want %q", err, code, tc.wantCode)
			}
			if msg := traces.ErrorMessage(err); err != nil && msg != tc.wantMsg {
				t.Errorf("message = %q, want %q", msg, tc.wantMsg)
			}
		})
	}
	// The conflict left the first recording in place.
	if got, _ := b.Get("r1"); got != first {
		t.Errorf("a conflicting Add replaced the recording")
	}
}

func TestBrokerRunsNewestFirst(t *testing.T) {
	b := newBroker(t, 0)
	if got := b.Runs(); len(got) != 0 {
		t.Fatalf("empty broker lists %d runs", len(got))
	}
	for _, r := range []struct {
		id    string
		start time.Duration
	}{{"old", 0}, {"newest", 3 * time.Second}, {"mid-a", time.Second}, {"mid-b", time.Second}} {
		if err := b.Add(recordingStartedAt(r.id, t0.Add(r.start))); err != nil {
			t.Fatal(err)
		}
	}
	rec, _ := b.Get("old")
	rec.Finish(traces.StatusCanceled, "")

	runs := b.Runs()
	var ids []string
	for _, r := range runs {
		ids = append(ids, r.ID)
	}
	// Ties on start time go by id, descending, so the order never depends on map iteration.
	if got, want := strings.Join(ids, ","), "newest,mid-b,mid-a,old"; got != want {
		t.Errorf("Runs = %s, want %s", got, want)
	}
	if last := runs[len(runs)-1]; last.Status != traces.StatusCanceled || last.EndedAt == nil {
		t.Errorf("Runs shows %+v for the finished run, want its current status", last)
	}
}

func TestBrokerIsSafeForConcurrentUse(t *testing.T) {
	b := newBroker(t, 0)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			id := fmt.Sprint("run-", i)
			rec := recordingStartedAt(id, t0.Add(time.Duration(i)*time.Second))
			if err := b.Add(rec); err != nil {
				t.Errorf("Add(%s): %v", id, err)
			}
			rec.Emit(traces.Event{Kind: traces.KindExit, Exit: &traces.Exit{}})
			if _, err := b.Get(id); err != nil {
				t.Errorf("Get(%s): %v", id, err)
			}
			b.Runs()
			rec.Finish(traces.StatusCompleted, "")
		})
	}
	wg.Wait()
	if got := b.Runs(); len(got) != 8 || got[0].ID != "run-7" {
		t.Errorf("Runs after concurrent adds: %d runs, first %+v", len(got), got[0])
	}
}

func TestErrorCodeAndMessage(t *testing.T) {
	for _, tc := range []struct {
		name     string
		err      error
		wantCode traces.Code
		wantMsg  string
	}{
		{"nil", nil, "", "internal error"},
		{"domain error", traces.Errorf(traces.CodeNotFound, "run %q not found", "x"), traces.CodeNotFound, `run "x" not found`},
		{"wrapped domain error", fmt.Errorf("load: %w", traces.Errorf(traces.CodeConflict, "taken")), traces.CodeConflict, "taken"},
		{"internal domain error", traces.Errorf(traces.CodeInternal, "disk on fire"), traces.CodeInternal, "internal error"},
		{"plain Go error", errors.New("open /var/lib/x: permission denied"), traces.CodeInternal, "internal error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := traces.ErrorCode(tc.err); got != tc.wantCode {
				t.Errorf("ErrorCode = %q, want %q", got, tc.wantCode)
			}
			if got := traces.ErrorMessage(tc.err); got != tc.wantMsg {
				t.Errorf("ErrorMessage = %q, want %q", got, tc.wantMsg)
			}
		})
	}
}

// TestBrokerForgetsOldestEndedRuns: past its limit a broker drops from memory the oldest runs
// that ended, and never one that is still running; its store, which keeps what it keeps, still
// has them.
func TestBrokerForgetsOldestEndedRuns(t *testing.T) {
	b := newBroker(t, 3)
	add := func(id string, ended bool) {
		t.Helper()
		rec := recordingStartedAt(id, t0)
		if ended {
			rec.Finish(traces.StatusCompleted, "")
		}
		if err := b.Add(rec); err != nil {
			t.Fatal(err)
		}
	}
	add("r1", false) // running: kept however old
	add("r2", true)
	add("r3", true)
	add("r4", true) // one over the limit: r2, the oldest ended run, goes
	add("r5", false)
	for id, want := range map[string]bool{"r1": true, "r2": false, "r3": false, "r4": true, "r5": true} {
		if got := b.Holds(id); got != want {
			t.Errorf("Holds(%s) = %v, want %v", id, got, want)
		}
	}
	if n := len(b.Runs()); n != 3 {
		t.Errorf("broker holds %d runs, want 3", n)
	}
	// The store's retention is its own (the newest 3 added, and r1, still running): r2 went.
	for id, want := range map[string]bool{"r2": false, "r3": true} {
		if _, err := b.Get(id); (err == nil) != want {
			t.Errorf("Get(%s): %v, want found=%v", id, err, want)
		}
	}
}
