package postgres_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/baton-dev/baton/internal/live"
	"github.com/baton-dev/baton/internal/postgres"
	"github.com/baton-dev/baton/traces"
)

// An app's run (one with a session hash) whose server released its lease: OwnerStopped says
// so, Recover leaves it to its app for postgres.AppWait, and of servers (each with its lease)
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
