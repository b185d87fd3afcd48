package postgres_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/baton-dev/baton/internal/live"
	"github.com/baton-dev/baton/internal/postgres"
	"github.com/baton-dev/baton/traces"
)

// An app's run (one with a session hash) whose server released its lease: OwnerStopped says
// so, Recover leaves it to its app for postgres.DefaultAppWait, and of servers (each with its lease)
// taking it over at once, exactly one does; while A held its lease, none could.
func TestAStoppedServersAppRunIsTakenOverOnce(t *testing.T) {
	a, url := mustOpen(t, 0)
	la, err := a.Claim("", postgres.DefaultLeaseTimes, nil)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now().UTC()
	events := runningEvents(start, 1, 2)
	var tally live.Tally
	for _, e := range events {
		tally.Add(e)
	}
	if err := a.Create(tally.Apply(traces.Run{ID: "r-app", Flow: "f", StartedAt: start}), tally, nil, events); err != nil {
		t.Fatal(err)
	}
	if err := a.SetSessionHash("r-app", []byte("hash")); err != nil {
		t.Fatal(err)
	}
	others := make([]*postgres.Store, 4)
	for i := range others {
		s, err := postgres.Open(url, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		l, err := s.Claim("", postgres.DefaultLeaseTimes, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Release()
		others[i] = s
	}
	if stopped, err := others[0].OwnerStopped("r-app"); err != nil || stopped {
		t.Fatalf("OwnerStopped while A holds its lease = %v, %v; want false", stopped, err)
	}
	if ok, err := others[0].TakeOver("r-app"); err != nil || ok {
		t.Fatalf("TakeOver while A holds its lease = %v, %v; want refused", ok, err)
	}
	if err := la.Release(); err != nil {
		t.Fatal(err)
	}
	if stopped, err := others[0].OwnerStopped("r-app"); err != nil || !stopped {
		t.Fatalf("OwnerStopped once A released its lease = %v, %v; want true", stopped, err)
	}
	if n, err := others[0].Recover(context.Background()); err != nil || n != 0 {
		t.Fatalf("Recover of an app's run written just now = %d, %v; want it left to its app", n, err)
	}
	var wg sync.WaitGroup
	took := make([]bool, len(others))
	for i, s := range others {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, err := s.TakeOver("r-app")
			if err != nil {
				t.Error(err)
			}
			took[i] = ok
		}()
	}
	wg.Wait()
	n := 0
	for _, ok := range took {
		if ok {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d servers took the run over at once; want exactly one", n)
	}
}

// A server whose lease times wait 1 s for an app (serve --app-wait 1s) ends a stopped server's
// app run interrupted once nothing was written to it for that long, not for DefaultAppWait; a
// server with the default leaves it to its app meanwhile.
func TestAppWaitIsTheServersOwn(t *testing.T) {
	a, url := mustOpen(t, 0)
	start := time.Now().UTC()
	events := runningEvents(start, 1, 2)
	var tally live.Tally
	for _, e := range events {
		tally.Add(e)
	}
	if err := a.Create(tally.Apply(traces.Run{ID: "r-app", Flow: "f", StartedAt: start}), tally, nil, events); err != nil {
		t.Fatal(err)
	}
	if err := a.SetSessionHash("r-app", []byte("hash")); err != nil {
		t.Fatal(err)
	}
	claim := func(wait time.Duration) *postgres.Store {
		s, err := postgres.Open(url, 0)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		l, err := s.Claim("", postgres.LeaseTimes{Heartbeat: time.Hour, Expiry: 3 * time.Hour, AppWait: wait}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Release() })
		return s
	}
	patient, quick := claim(0), claim(time.Second)
	if n, err := patient.Recover(context.Background()); err != nil || n != 0 {
		t.Fatalf("Recover with the default wait = %d, %v; want the app's run left to its app", n, err)
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		n, err := quick.Recover(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a server waiting 1 s for an app has not ended its run within 20 s")
		}
	}
	if time.Since(start) < time.Second {
		t.Errorf("the app's run was ended %s after its last write; want 1 s at least", time.Since(start))
	}
	if tr, err := a.Load("r-app"); err != nil || tr.Run.Status != traces.StatusInterrupted {
		t.Errorf("the app's run is %s, %v; want interrupted", tr.Run.Status, err)
	}
	if _, err := quick.Claim("", postgres.LeaseTimes{Heartbeat: time.Second, Expiry: 3 * time.Second, AppWait: time.Millisecond}, nil); err == nil ||
		!strings.Contains(err.Error(), "the wait for an app (1ms) is not between 1s") {
		t.Errorf("a claim waiting 1ms for an app: %v; want it refused", err)
	}
}
