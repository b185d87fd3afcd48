package postgres_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/baton-dev/baton/internal/live"
	"github.com/baton-dev/baton/internal/postgres"
	"github.com/baton-dev/baton/traces"
)

// A broker on B follows a run A's broker records on the same database: a subscription to B's
// recording reads every event of A's, once and in order, through its end, and B's trace then
// reads back byte for byte as A's. Either the announcements of A's commits drive it (B listens,
// and would otherwise not look again for an hour), or, with no announcement heard, B's periodic
// check does; announcements of what B has already, or out of order, change nothing.
func TestBrokerFollowsAnotherServersRun(t *testing.T) {
	for _, tc := range []struct {
		name   string
		listen bool
		every  time.Duration
	}{
		{"announced", true, time.Hour},
		{"checked", false, 20 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			quiet := slog.New(slog.DiscardHandler)
			a, url := mustOpen(t, 0)
			b, err := postgres.Open(url, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			recorder := live.NewStoredBroker(0, a, quiet)
			follower := live.NewStoredBroker(0, b, quiet)
			follower.Follow(b, tc.every)
			if tc.listen {
				b.Listen(follower.Committed, quiet)
			}
			defer closeBroker(t, follower)
			defer closeBroker(t, recorder)

			rec := traces.NewRecording(traces.Run{ID: "r-followed", Flow: "f", Input: "hello"}, []traces.Agent{{Name: "a"}})
			if err := recorder.Add(rec); err != nil {
				t.Fatal(err)
			}
			rec.Emit(traces.Event{Kind: traces.KindRunStarted, Run: &traces.RunMark{Status: traces.StatusRunning}})
			rec.Emit(traces.Event{Kind: traces.KindAgentStarted, Agent: "a", AgentRun: &traces.AgentRun{Via: "run"}})
			waitCommitted(t, a, "r-followed", 2)

			got, err := follower.Get("r-followed")
			if err != nil {
				t.Fatal(err)
			}
			if st := got.Run().Status; st != traces.StatusRunning {
				t.Fatalf("B's recording of A's run is %s; want running", st)
			}
			sub := got.Subscribe(0)
			rec.PutAgent(traces.Agent{Name: "b", Parent: "a"})
			for i := range 40 {
				rec.Emit(traces.Event{Kind: traces.KindMessage, Agent: "a", Message: &traces.Message{Role: "assistant", Content: "m" + string(rune('a'+i%26))}})
				if i%7 == 0 {
					follower.Committed("r-followed", 1) // stale
					follower.Committed("r-other", 99)   // not followed
				}
			}
			rec.Finish(traces.StatusCompleted, "")

			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			var seqs []int64
			buf := make([]traces.Event, 8)
			for {
				n, err := sub.Read(ctx, buf)
				for _, e := range buf[:n] {
					seqs = append(seqs, e.Seq)
				}
				if err != nil {
					if err != io.EOF {
						t.Fatalf("reading B's recording after %v: %v", seqs, err)
					}
					break
				}
			}
			want := rec.Snapshot()
			for i, s := range seqs {
				if s != int64(i+1) {
					t.Fatalf("B's subscriber read seqs %v; want 1..%d once each", seqs, len(want.Events))
				}
			}
			if len(seqs) != len(want.Events) {
				t.Fatalf("B's subscriber read %d events; A recorded %d", len(seqs), len(want.Events))
			}
			if !bytes.Equal(marshal(t, got.Snapshot()), marshal(t, want)) {
				t.Errorf("B's trace of the run differs from A's:\n%s\n%s", marshal(t, got.Snapshot()), marshal(t, want))
			}
		})
	}
}

// waitCommitted waits until s has committed run id's events through seq.
func waitCommitted(t *testing.T, s *postgres.Store, id string, seq int) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if tr, err := s.Load(id); err == nil && len(tr.Events) >= seq {
			return
		}
		if time.Now().After(deadline) {
			tr, err := s.Load(id)
			t.Fatalf("run %s: event %d not committed within 30s: %d events, %v", id, seq, len(tr.Events), err)
		}
	}
}

// closeBroker closes b, failing the test when its runs are not written within 10 s.
func closeBroker(t *testing.T, b *live.Broker) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := b.Close(ctx); err != nil {
		t.Error(err)
	}
}

// A run B follows ends interrupted on A, then A resumes it: B's recording, the one B's viewers
// hold, reopens and goes on with the resumed part (announced; B would otherwise not look again
// for an hour), its model calls numbered as A joined them; a subscription made after the
// interruption reads the resumed part through the run's end, and B's trace reads back as A's.
// Then B resumes a run it followed to its interruption (an app carrying it on at B): B records
// the resumed part itself, in the same recording, and A's store has it.
func TestBrokerFollowsARunResumed(t *testing.T) {
	quiet := slog.New(slog.DiscardHandler)
	a, url := mustOpen(t, 0)
	b, err := postgres.Open(url, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	recorder := live.NewStoredBroker(0, a, quiet)
	follower := live.NewStoredBroker(0, b, quiet)
	follower.Follow(b, time.Hour)
	b.Listen(follower.Committed, quiet)
	defer closeBroker(t, follower)
	defer closeBroker(t, recorder)

	interrupted := func(id string) *traces.Recording {
		rec := traces.NewRecording(traces.Run{ID: id, Flow: "f", Input: "hello"}, []traces.Agent{{Name: "a"}})
		if err := recorder.Add(rec); err != nil {
			t.Fatal(err)
		}
		rec.Emit(traces.Event{Kind: traces.KindRunStarted, Run: &traces.RunMark{Status: traces.StatusRunning}})
		rec.Emit(traces.Event{Kind: traces.KindModelStarted, Agent: "a", Model: &traces.ModelCall{ID: "m1"}})
		rec.Emit(traces.Event{Kind: traces.KindInterrupted, Agent: "a", Interrupt: &traces.Interrupt{ID: "i1", Info: "approve?"}})
		rec.Finish(traces.StatusInterrupted, "")
		waitCommitted(t, a, id, 4)
		return rec
	}
	resumePart := func(rec *traces.Recording) {
		rec.Emit(traces.Event{Kind: traces.KindResumed, Agent: "a", Interrupt: &traces.Interrupt{ID: "i1"}})
		rec.Emit(traces.Event{Kind: traces.KindModelStarted, Agent: "a", Model: &traces.ModelCall{ID: "m1"}})
		rec.Emit(traces.Event{Kind: traces.KindMessage, Agent: "a", Message: &traces.Message{Role: "assistant", Content: "done"}})
		rec.Finish(traces.StatusCompleted, "")
	}
	readAll := func(sub *traces.Subscription) []int64 {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		var seqs []int64
		buf := make([]traces.Event, 8)
		for {
			n, err := sub.Read(ctx, buf)
			for _, e := range buf[:n] {
				seqs = append(seqs, e.Seq)
			}
			if err == io.EOF {
				return seqs
			}
			if err != nil {
				t.Fatalf("reading B's recording after %v: %v", seqs, err)
			}
		}
	}

	rec := interrupted("r-resumed")
	got, err := follower.Get("r-resumed")
	if err != nil {
		t.Fatal(err)
	}
	if seqs := readAll(got.Subscribe(0)); len(seqs) != 4 || got.Run().Status != traces.StatusInterrupted {
		t.Fatalf("B read %v of the interrupted run, %s; want 1..4, interrupted", seqs, got.Run().Status)
	}
	if err := recorder.Resume(rec); err != nil {
		t.Fatal(err)
	}
	resumePart(rec)
	for deadline := time.Now().Add(30 * time.Second); got.Run().Status == traces.StatusInterrupted; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("B's recording of the run is still interrupted 30 s after A resumed it")
		}
	}
	sub := got.Subscribe(4)
	if seqs := readAll(sub); len(seqs) != 4 || seqs[0] != 5 || seqs[3] != 8 {
		t.Fatalf("a subscription to B's recording after the interruption read %v; want 5..8, the resumed part", seqs)
	}
	if again, err := follower.Get("r-resumed"); err != nil || again != got {
		t.Errorf("B's Get after the resume = %p, %v; want the recording its viewers hold, %p", again, err, got)
	}
	if !bytes.Equal(marshal(t, got.Snapshot()), marshal(t, rec.Snapshot())) {
		t.Errorf("B's trace of the resumed run differs from A's:\n%s\n%s", marshal(t, got.Snapshot()), marshal(t, rec.Snapshot()))
	}

	interrupted("r-carried")
	got, err = follower.Get("r-carried")
	if err != nil {
		t.Fatal(err)
	}
	readAll(got.Subscribe(0))
	if err := follower.Resume(got); err != nil {
		t.Fatalf("B resumes the run it followed: %v", err)
	}
	sub = got.Subscribe(4)
	resumePart(got)
	if seqs := readAll(sub); len(seqs) != 4 || seqs[3] != 8 {
		t.Fatalf("B's own resumed part read %v; want 5..8", seqs)
	}
	waitCommitted(t, a, "r-carried", 8)
	if tr, err := a.Load("r-carried"); err != nil || tr.Run.Status != traces.StatusCompleted || tr.Events[5].Model.ID != "m2" {
		t.Errorf("the store has r-carried %v, %v; want it completed, its resumed model call m2", tr.Run.Status, err)
	}
}
