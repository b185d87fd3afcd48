package live_test

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/baton-dev/baton/internal/live"
	"github.com/baton-dev/baton/traces"
)

// sharedStore is a MemoryStore that another server writes too: the test commits runs' events
// into it (commit), and it reads them back by seq as live.Tailer does, without encoding.
type sharedStore struct {
	*live.MemoryStore
	mu     sync.Mutex
	runs   map[string]*traces.Trace
	reads  int
	failed error // what Tail returns instead, when set
	// raced, when set, is committed right after the next read, its announcement lost: as when a
	// commit comes between a server's first read of a run and its following it
	raced *traces.Event
}

func newSharedStore() *sharedStore {
	return &sharedStore{MemoryStore: live.NewMemoryStore(0), runs: make(map[string]*traces.Trace)}
}

// commit appends events to run id (created with the first), its status as they say.
func (s *sharedStore) commit(id string, events ...traces.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	tr := s.runs[id]
	if tr == nil {
		tr = &traces.Trace{Run: traces.Run{ID: id, Flow: "f", StartedAt: t0, Status: traces.StatusRunning}}
		s.runs[id] = tr
	}
	for _, e := range events {
		e.Seq = int64(len(tr.Events) + 1)
		tr.Events = append(tr.Events, e)
		if e.Kind == traces.KindRunFinished {
			tr.Run.Status = e.Run.Status
		}
		if e.Kind == traces.KindResumed {
			tr.Run.Status = traces.StatusRunning
		}
	}
}

func (s *sharedStore) Tail(id string, _ *traces.EventDecoder, after int64) (traces.Trace, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reads++
	if s.failed != nil {
		return traces.Trace{}, s.failed
	}
	tr, ok := s.runs[id]
	if !ok {
		return traces.Trace{}, traces.Errorf(traces.CodeNotFound, "run %q not found", id)
	}
	out := *tr
	out.Events = append([]traces.Event(nil), tr.Events[after:]...)
	if e := s.raced; e != nil {
		s.raced = nil
		e.Seq = int64(len(tr.Events) + 1)
		tr.Events = append(tr.Events, *e)
	}
	return out, nil
}

func message(text string) traces.Event {
	return traces.Event{Time: t0, Kind: traces.KindMessage, Agent: "a", Message: &traces.Message{Role: "assistant", Content: text}}
}

func started() traces.Event {
	return traces.Event{Time: t0, Kind: traces.KindRunStarted, Run: &traces.RunMark{Status: traces.StatusRunning}}
}

func finished(st traces.Status) traces.Event {
	return traces.Event{Time: t0.Add(time.Second), Kind: traces.KindRunFinished, Run: &traces.RunMark{Status: st}}
}

// A followed run's recording gets every committed event once, in order, as commits are announced,
// also when announcements repeat, come late or name runs it does not follow, and ends with the
// run, which the broker holds; one that ended interrupted stays followed (another server may
// resume it), and its recording reopens with its resumed part.
func TestFollowFeedsCommittedEventsOnce(t *testing.T) {
	for _, end := range []traces.Status{traces.StatusCompleted, traces.StatusInterrupted} {
		t.Run(string(end), func(t *testing.T) {
			s := newSharedStore()
			b := live.NewStoredBroker(0, s, slog.New(slog.DiscardHandler))
			b.Follow(s, time.Hour) // announcements only
			defer b.Close(context.Background())
			s.commit("r", started(), message("one"))
			rec, err := b.Get("r")
			if err != nil {
				t.Fatal(err)
			}
			if again, _ := b.Get("r"); again != rec {
				t.Error("a second Get of a followed run made another recording")
			}
			sub := rec.Subscribe(0)
			for i := range 5 {
				s.commit("r", message("more"))
				b.Committed("r", int64(3+i))
				b.Committed("r", 1)       // late
				b.Committed("other", 100) // not followed
			}
			s.commit("r", finished(end))
			b.Committed("r", 8)
			got := readAll(t, sub, 4)
			if want := []int64{1, 2, 3, 4, 5, 6, 7, 8}; !slices.Equal(seqs(got), want) {
				t.Fatalf("followed events %v; want %v", seqs(got), want)
			}
			if st := rec.Run().Status; st != end {
				t.Errorf("the followed recording ended %s; want %s", st, end)
			}
			if !waitHeld(t, b, "r", true) {
				t.Errorf("the broker does not hold the run that ended %s", end)
			}
			if end != traces.StatusInterrupted {
				return
			}
			if !b.Follows("r") {
				t.Fatal("the broker does not follow the run that ended interrupted: another server may resume it")
			}
			s.commit("r", traces.Event{Time: t0, Kind: traces.KindResumed, Interrupt: &traces.Interrupt{ID: "i"}}, message("after"), finished(traces.StatusCompleted))
			b.Committed("r", 11)
			for deadline := time.Now().Add(10 * time.Second); rec.Run().Status == traces.StatusInterrupted; time.Sleep(time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("the recording of the run that ended interrupted did not reopen within 10 s of its resumed part")
				}
			}
			if got := readAll(t, rec.Subscribe(8), 4); !slices.Equal(seqs(got), []int64{9, 10, 11}) {
				t.Fatalf("the reopened recording's resumed part %v; want 9 10 11", seqs(got))
			}
			if again, _ := b.Get("r"); again != rec || rec.Run().Status != traces.StatusCompleted {
				t.Errorf("after its resumed part, Get returns another recording (%v), or the run is %s; want the same, completed", again != rec, rec.Run().Status)
			}
		})
	}
}

// waitHeld waits for up to 10 s until b holds run id as want says, and returns whether it does.
func waitHeld(t *testing.T, b *live.Broker, id string, want bool) bool {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); b.Holds(id) != want && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	return b.Holds(id)
}

// With no announcement at all, the periodic check feeds the run; a store that fails for a while
// (unavailable) delays it and loses nothing; Close stops following a run that goes on, leaving
// no goroutine behind (TestMain's leak check).
func TestFollowWithoutAnnouncements(t *testing.T) {
	s := newSharedStore()
	b := live.NewStoredBroker(0, s, slog.New(slog.DiscardHandler))
	b.Follow(s, 5*time.Millisecond)
	s.commit("r", started())
	rec, err := b.Get("r")
	if err != nil {
		t.Fatal(err)
	}
	sub := rec.Subscribe(0)
	s.mu.Lock()
	s.failed = traces.Errorf(traces.CodeUnavailable, "the database is down")
	s.mu.Unlock()
	s.commit("r", message("while down"))
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		s.mu.Lock()
		reads := s.reads
		s.mu.Unlock()
		if reads >= 4 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the follower did not try again while the store failed")
		}
	}
	s.mu.Lock()
	s.failed = nil
	s.mu.Unlock()
	s.commit("r", finished(traces.StatusCompleted))
	if got := readAll(t, sub, 4); !slices.Equal(seqs(got), []int64{1, 2, 3}) {
		t.Fatalf("followed events %v; want 1, 2, 3", seqs(got))
	}

	s.commit("going", started())
	if _, err := b.Get("going"); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// A commit that comes between a server's first read of a run and its following it, whose
// announcement no follower heard, is read at once, not at the next periodic check.
func TestFollowReadsWhatCameDuringItsStart(t *testing.T) {
	s := newSharedStore()
	b := live.NewStoredBroker(0, s, slog.New(slog.DiscardHandler))
	b.Follow(s, time.Hour)
	defer b.Close(context.Background())
	s.commit("r", started())
	end := finished(traces.StatusCompleted)
	s.raced = &end
	rec, err := b.Get("r")
	if err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, rec.Subscribe(0), 4); !slices.Equal(seqs(got), []int64{1, 2}) {
		t.Fatalf("followed events %v; want 1, 2", seqs(got))
	}
}
