package traces_test

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/baton-dev/baton/traces"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// wait bounds every wait on a channel; reaching it is a failure, never the expected path.
const wait = 10 * time.Second

// newRecording returns a recording of run r1 whose subscribers may fall queue events behind.
func newRecording(tb testing.TB, queue int) *traces.Recording {
	tb.Helper()
	agents := []traces.Agent{{Name: "root", Kind: traces.AgentSupervisor, Tools: []string{"transfer_to_agent"}}}
	return traces.NewRecording(traces.Run{ID: "r1", Flow: "f", StartedAt: t0}, agents, queue)
}

// emit records n message events and returns the seq of the last one.
func emit(tb testing.TB, rec *traces.Recording, n int) int64 {
	tb.Helper()
	var last int64
	for i := range n {
		last = rec.Emit(traces.Event{Kind: traces.KindMessage, Agent: "root", Message: &traces.Message{Role: "assistant", Content: fmt.Sprint(i)}}).Seq
	}
	return last
}

// readN reads exactly n events from sub, failing if C closes or stalls first.
func readN(tb testing.TB, sub *traces.Subscription, n int) []traces.Event {
	tb.Helper()
	deadline := time.After(wait)
	events := make([]traces.Event, 0, n)
	for len(events) < n {
		select {
		case e, ok := <-sub.C():
			if !ok {
				tb.Fatalf("C closed after %d of %d events (Err: %v)", len(events), n, sub.Err())
			}
			events = append(events, e)
		case <-deadline:
			tb.Fatalf("got %d of %d events before the deadline", len(events), n)
		}
	}
	return events
}

// readAll reads sub until C closes.
func readAll(tb testing.TB, sub *traces.Subscription) []traces.Event {
	tb.Helper()
	deadline := time.After(wait)
	var events []traces.Event
	for {
		select {
		case e, ok := <-sub.C():
			if !ok {
				return events
			}
			events = append(events, e)
		case <-deadline:
			tb.Fatalf("C still open after %d events", len(events))
		}
	}
}

// seqs returns the events' sequence numbers.
func seqs(events []traces.Event) []int64 {
	out := make([]int64, len(events))
	for i, e := range events {
		out[i] = e.Seq
	}
	return out
}

// assertSeqs fails unless events are numbered first, first+1, ..., last (none when last < first).
func assertSeqs(tb testing.TB, events []traces.Event, first, last int64) {
	tb.Helper()
	var want []int64
	for s := first; s <= last; s++ {
		want = append(want, s)
	}
	if got := seqs(events); !slices.Equal(got, want) {
		tb.Fatalf("seqs = %v, want %d..%d", abbreviate(got), first, last)
	}
}

// abbreviate keeps a failure message short when a list is long.
func abbreviate(s []int64) string {
	if len(s) <= 12 {
		return fmt.Sprint(s)
	}
	return fmt.Sprintf("%v ... %v (%d in all)", s[:6], s[len(s)-6:], len(s))
}

func TestRecordingDeliversInOrderToEverySubscriber(t *testing.T) {
	const n = 3000
	rec := newRecording(t, n+10)
	subs := make([]*traces.Subscription, 4)
	got := make([][]traces.Event, len(subs))
	var wg sync.WaitGroup
	for i := range subs {
		subs[i] = rec.Subscribe(0)
		wg.Go(func() {
			for e := range subs[i].C() {
				got[i] = append(got[i], e)
			}
		})
	}
	emit(t, rec, n)
	rec.Finish(traces.StatusCompleted, "")
	wg.Wait()
	for i, sub := range subs {
		assertSeqs(t, got[i], 1, n+1)
		if last := got[i][n]; last.Kind != traces.KindRunFinished || last.Run.Status != traces.StatusCompleted {
			t.Errorf("subscriber %d: last event = %s %+v, want run.finished completed", i, last.Kind, last.Run)
		}
		if err := sub.Err(); err != nil {
			t.Errorf("subscriber %d: Err = %v after the run finished, want nil", i, err)
		}
	}
}

func TestSubscribeAfter(t *testing.T) {
	// 10 events before Subscribe, 10 live, then run.finished as 21.
	for _, tc := range []struct {
		name        string
		after       int64
		first, last int64
	}{
		{"from the start", 0, 1, 21},
		{"negative is the start", -3, 1, 21},
		{"mid backlog", 4, 5, 21},
		{"whole backlog seen", 10, 11, 21},
		{"ahead of the run", 15, 16, 21},
		{"beyond the run", 30, 31, 21},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := newRecording(t, 0)
			emit(t, rec, 10)
			sub := rec.Subscribe(tc.after)
			emit(t, rec, 10)
			rec.Finish(traces.StatusCompleted, "")
			assertSeqs(t, readAll(t, sub), tc.first, tc.last)
			if err := sub.Err(); err != nil {
				t.Errorf("Err = %v, want nil", err)
			}
		})
	}
}

func TestSubscribeMidRunGetsBacklogThenLive(t *testing.T) {
	rec := newRecording(t, 0)
	emit(t, rec, 10)
	sub := rec.Subscribe(4)
	defer sub.Cancel()
	assertSeqs(t, readN(t, sub, 6), 5, 10)
	select {
	case e := <-sub.C():
		t.Fatalf("got event %d before it was emitted", e.Seq)
	default:
	}
	for want := int64(11); want <= 13; want++ {
		emit(t, rec, 1)
		assertSeqs(t, readN(t, sub, 1), want, want)
	}
}

func TestSubscribeAfterFinish(t *testing.T) {
	rec := newRecording(t, 0)
	emit(t, rec, 5)
	rec.Finish(traces.StatusFailed, "boom")
	for _, after := range []int64{0, 3, 6} {
		t.Run(fmt.Sprint("after ", after), func(t *testing.T) {
			sub := rec.Subscribe(after)
			assertSeqs(t, readAll(t, sub), after+1, 6)
			if err := sub.Err(); err != nil {
				t.Errorf("Err = %v, want nil", err)
			}
			sub.Cancel() // after the end: a no-op, not a double close
		})
	}
}

func TestSlowSubscriberIsDroppedAndResumes(t *testing.T) {
	const queue = 8
	for _, tc := range []struct {
		name      string
		readFirst int // events read before the subscriber stops reading
		resumeAt  int64
	}{
		{"never reads", 0, queue},
		{"reads a little then stalls", 3, queue + 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := newRecording(t, queue)
			sub := rec.Subscribe(0)
			emit(t, rec, tc.readFirst)
			received := readN(t, sub, tc.readFirst)
			emit(t, rec, 100) // far more than the queue holds
			received = append(received, readAll(t, sub)...)

			var slow *traces.SlowError
			if !errors.As(sub.Err(), &slow) {
				t.Fatalf("Err = %v, want a *SlowError", sub.Err())
			}
			if slow.Resume != tc.resumeAt || slow.Resume != received[len(received)-1].Seq {
				t.Fatalf("Resume = %d, want %d, the last seq received (%d)", slow.Resume, tc.resumeAt, received[len(received)-1].Seq)
			}

			// Resume while the run is live, then let it finish.
			again := rec.Subscribe(slow.Resume)
			emit(t, rec, 5)
			rec.Finish(traces.StatusCompleted, "")
			received = append(received, readAll(t, again)...)
			assertSeqs(t, received, 1, int64(tc.readFirst)+100+5+1)
			if err := again.Err(); err != nil {
				t.Errorf("resumed subscription: Err = %v, want nil", err)
			}
		})
	}
}

func TestEmitNeverBlocks(t *testing.T) {
	const n = 100_000
	rec := newRecording(t, 16)
	stuck := rec.Subscribe(0) // never read until the end
	done := make(chan struct{})
	go func() {
		defer close(done)
		emit(t, rec, n)
		rec.Finish(traces.StatusCompleted, "")
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("Emit blocked on a subscriber that does not read")
	}
	if got := len(rec.Snapshot().Events); got != n+1 {
		t.Errorf("recorded %d events, want %d", got, n+1)
	}
	assertSeqs(t, readAll(t, stuck), 1, 16)
	var slow *traces.SlowError
	if !errors.As(stuck.Err(), &slow) {
		t.Errorf("stuck subscriber: Err = %v, want a *SlowError", stuck.Err())
	}
}

func TestCancelIsIdempotent(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, rec *traces.Recording)
		slow  bool // Err should stay a *SlowError
	}{
		{"live", func(*testing.T, *traces.Recording) {}, false},
		{"after the run finished", func(_ *testing.T, rec *traces.Recording) { rec.Finish(traces.StatusCompleted, "") }, false},
		{"after being dropped", func(t *testing.T, rec *traces.Recording) { emit(t, rec, 10) }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := newRecording(t, 4)
			sub := rec.Subscribe(0)
			tc.setup(t, rec)
			sub.Cancel()
			sub.Cancel()
			readAll(t, sub) // C is closed, so this returns
			// Emitting after Cancel must not send on, or close, the closed channel.
			emit(t, rec, 10)
			rec.Finish(traces.StatusCompleted, "")
			sub.Cancel()
			var slow *traces.SlowError
			if got := errors.As(sub.Err(), &slow); got != tc.slow {
				t.Errorf("Err = %v, want a *SlowError: %v", sub.Err(), tc.slow)
			}
		})
	}
}

func TestFinishTakesEffectOnce(t *testing.T) {
	rec := newRecording(t, 0)
	sub := rec.Subscribe(0)
	emit(t, rec, 2)
	select {
	case <-rec.Done():
		t.Fatal("Done closed before Finish")
	default:
	}
	rec.Finish(traces.StatusCompleted, "")
	rec.Finish(traces.StatusFailed, "late")
	<-rec.Done()
	if e := rec.Emit(traces.Event{Kind: traces.KindError, Error: &traces.ErrorDetail{Message: "late"}}); e.Seq != 0 {
		t.Errorf("Emit after Finish returned seq %d, want 0", e.Seq)
	}
	tr := rec.Snapshot()
	assertSeqs(t, tr.Events, 1, 3)
	if tr.Run.Status != traces.StatusCompleted || tr.Run.Error != "" || tr.Run.EndedAt == nil {
		t.Errorf("run = %+v, want the first Finish's status and an end time", tr.Run)
	}
	if last := tr.Events[2]; last.Kind != traces.KindRunFinished || *last.Run != (traces.RunMark{Status: traces.StatusCompleted}) {
		t.Errorf("last event = %s %+v", last.Kind, last.Run)
	}
	assertSeqs(t, readAll(t, sub), 1, 3)
	if err := traces.Validate(tr); err != nil {
		t.Errorf("the finished recording is not a valid trace: %v", err)
	}
}

func TestConcurrentFinishAndEmit(t *testing.T) {
	// Racing Finishes must record one run.finished, as the last event, and close once.
	for range 200 {
		rec := newRecording(t, 0)
		var wg sync.WaitGroup
		for i := range 4 {
			wg.Go(func() { rec.Finish(traces.StatusCompleted, fmt.Sprint(i)) })
			wg.Go(func() { emit(t, rec, 3) })
		}
		wg.Wait()
		events := rec.Snapshot().Events
		for i, e := range events {
			if (e.Kind == traces.KindRunFinished) != (i == len(events)-1) {
				t.Fatalf("event %d of %d is %s: run.finished must be last and once", i+1, len(events), e.Kind)
			}
		}
	}
}

func TestSnapshotIsACopy(t *testing.T) {
	agents := []traces.Agent{{Name: "root", Kind: traces.AgentSupervisor, Tools: []string{"transfer_to_agent"}}}
	rec := traces.NewRecording(traces.Run{ID: "r1", StartedAt: t0}, agents, 0)
	agents[0].Name, agents[0].Tools[0] = "changed by the caller", "changed" // NewRecording copied them
	rec.Emit(traces.Event{Kind: traces.KindMessage, Agent: "root", Message: &traces.Message{Role: "user"}})
	rec.Emit(traces.Event{Kind: traces.KindMessage, Agent: "root", Message: &traces.Message{Role: "assistant"}})
	rec.Finish(traces.StatusCompleted, "")
	before := mustMarshal(t, rec.Snapshot()) // bytes: shares nothing with the recording

	snap := rec.Snapshot()
	snap.Run.ID, snap.Run.Status = "other", traces.StatusFailed
	*snap.Run.EndedAt = time.Time{}
	snap.Agents[0].Name, snap.Agents[0].Tools[0] = "x", "y"
	snap.Events[0].Kind, snap.Events[0].Agent = traces.KindError, "x"
	snap.Events = append(snap.Events[:1], traces.Event{Seq: 99})
	*rec.Run().EndedAt = time.Time{}

	after := rec.Snapshot()
	if got := mustMarshal(t, after); string(got) != string(before) {
		t.Errorf("changing a snapshot changed the recording: %s", firstDifference(string(got), string(before)))
	}
	if after.Agents[0].Name != "root" || after.Agents[0].Tools[0] != "transfer_to_agent" {
		t.Errorf("agents = %+v: changes to the slice given to NewRecording leaked in", after.Agents)
	}
}

func TestSnapshotDoesNotShareTheEventList(t *testing.T) {
	rec := newRecording(t, 0)
	emit(t, rec, 3)
	snap := rec.Snapshot()
	snap.Events = append(snap.Events, traces.Event{Seq: 4, Kind: traces.KindError}) // into spare capacity, if any
	rec.Emit(traces.Event{Kind: traces.KindExit, Exit: &traces.Exit{}})
	if got := rec.Snapshot().Events[3].Kind; got != traces.KindExit {
		t.Errorf("recorded event 4 is %s, want exit", got)
	}
	if got := snap.Events[3].Kind; got != traces.KindError {
		t.Errorf("snapshot event 4 is %s, want the caller's own", got)
	}
}

func TestConcurrentEmitGivesGaplessUniqueSeqs(t *testing.T) {
	const writers, each = 8, 500
	rec := newRecording(t, writers*each+10)
	sub := rec.Subscribe(0)
	got := make([][]int64, writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for range each {
				got[w] = append(got[w], rec.Emit(traces.Event{Kind: traces.KindExit, Exit: &traces.Exit{}}).Seq)
			}
		})
	}
	wg.Wait()
	rec.Finish(traces.StatusCompleted, "")

	var all []int64
	for w := range writers {
		if !slices.IsSorted(got[w]) {
			t.Errorf("writer %d saw its seqs out of order", w)
		}
		all = append(all, got[w]...)
	}
	slices.Sort(all)
	for i, s := range all {
		if s != int64(i+1) {
			t.Fatalf("the writers got seqs %s, want each of 1..%d once", abbreviate(all), writers*each)
		}
	}
	assertSeqs(t, rec.Snapshot().Events, 1, writers*each+1)
	assertSeqs(t, readAll(t, sub), 1, writers*each+1)
}

func TestNewRecording(t *testing.T) {
	rec := traces.NewRecording(traces.Run{ID: "r7", Status: traces.StatusCompleted}, nil, 0)
	run := rec.Run()
	if rec.ID() != "r7" || run.Status != traces.StatusRunning || run.StartedAt.IsZero() || run.EndedAt != nil {
		t.Errorf("new recording's run = %+v, want r7, running, with a start time", run)
	}
	stamped := rec.Emit(traces.Event{Kind: traces.KindExit, Exit: &traces.Exit{}})
	kept := rec.Emit(traces.Event{Time: t0, Kind: traces.KindExit, Exit: &traces.Exit{}})
	if stamped.Seq != 1 || stamped.Time.IsZero() || kept.Seq != 2 || !kept.Time.Equal(t0) {
		t.Errorf("Emit returned %d@%v and %d@%v, want 1 stamped now and 2 at its own time", stamped.Seq, stamped.Time, kept.Seq, kept.Time)
	}
}

func TestSlowErrorSaysWhereToResume(t *testing.T) {
	err := &traces.SlowError{Resume: 42}
	if got := err.Error(); got != "subscriber fell too far behind the run and was dropped; resume after event 42" {
		t.Errorf("Error() = %q", got)
	}
}

func TestBacklogAcrossChunks(t *testing.T) {
	// The recording keeps its events in chunks of a few hundred: backlogs and snapshots that
	// start and end on either side of a chunk's edge get every event once, in order.
	const n = 1000
	rec := newRecording(t, 0)
	emit(t, rec, n)
	for _, after := range []int64{0, 1, 255, 256, 257, 511, 512, 999, 1000} {
		sub := rec.Subscribe(after)
		got := readN(t, sub, int(n-after))
		sub.Cancel()
		if n > after {
			assertSeqs(t, got, after+1, n)
		}
	}
	snap := rec.Snapshot()
	assertSeqs(t, snap.Events, 1, n)
	if snap.Events[300].Message.Content != "300" {
		t.Errorf("event 301 holds %q, want the 301st message", snap.Events[300].Message.Content)
	}
	// NewRecordingOf keeps a trace's events as they are, across chunks too.
	imported := traces.NewRecordingOf(snap).Snapshot()
	assertEqualTraces(t, traces.Trace{Events: imported.Events}, traces.Trace{Events: snap.Events})
}
