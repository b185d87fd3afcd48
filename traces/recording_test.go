package traces_test

import (
	"context"
	"errors"
	"fmt"
	"io"
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

// newRecording returns a recording of run r1.
func newRecording(tb testing.TB) *traces.Recording {
	tb.Helper()
	agents := []traces.Agent{{Name: "root", Kind: traces.AgentSupervisor, Tools: []string{"transfer_to_agent"}}}
	return traces.NewRecording(traces.Run{ID: "r1", Flow: "f", StartedAt: t0}, agents)
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

// readN reads exactly n events from sub, in reads of at most batch, failing if it ends or stalls
// first.
func readN(tb testing.TB, sub *traces.Subscription, n, batch int) []traces.Event {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	events := make([]traces.Event, 0, n)
	buf := make([]traces.Event, batch)
	for len(events) < n {
		k, err := sub.Read(ctx, buf[:min(batch, n-len(events))])
		if err != nil {
			tb.Fatalf("Read after %d of %d events: %v", len(events), n, err)
		}
		events = append(events, buf[:k]...)
	}
	return events
}

// readAll reads sub, in reads of at most batch, until it ends.
func readAll(tb testing.TB, sub *traces.Subscription, batch int) []traces.Event {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	var events []traces.Event
	buf := make([]traces.Event, batch)
	for {
		k, err := sub.Read(ctx, buf)
		if errors.Is(err, io.EOF) {
			return events
		}
		if err != nil {
			tb.Fatalf("Read after %d events: %v", len(events), err)
		}
		events = append(events, buf[:k]...)
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
	// Readers of one, a few, a chunk and more at a time, reading while events are emitted from
	// several goroutines, and waiting when they catch up.
	const writers, each = 4, 1500
	rec := newRecording(t)
	batches := []int{1, 7, 256, 1000}
	got := make([][]traces.Event, len(batches))
	var readers, emitters sync.WaitGroup
	for i, batch := range batches {
		sub := rec.Subscribe(0)
		readers.Go(func() { got[i] = readAll(t, sub, batch) })
	}
	for range writers {
		emitters.Go(func() { emit(t, rec, each) })
	}
	emitters.Wait()
	rec.Finish(traces.StatusCompleted, "")
	readers.Wait()
	n := writers * each
	for i := range batches {
		assertSeqs(t, got[i], 1, int64(n+1))
		if last := got[i][n]; last.Kind != traces.KindRunFinished || last.Run.Status != traces.StatusCompleted {
			t.Errorf("subscriber %d: last event = %s %+v, want run.finished completed", i, last.Kind, last.Run)
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
			rec := newRecording(t)
			emit(t, rec, 10)
			sub := rec.Subscribe(tc.after)
			emit(t, rec, 10)
			rec.Finish(traces.StatusCompleted, "")
			assertSeqs(t, readAll(t, sub, 4), tc.first, tc.last)
		})
	}
}

// TestSkip: a subscription skips on to any later event, never back, and the events it reads
// then have their inputs whole, those they extend having been skipped.
func TestSkip(t *testing.T) {
	rec := newRecording(t)
	var input []traces.Message
	for i := range 30 { // each model call's input extends the one before
		input = append(input, traces.Message{Role: "user", Content: fmt.Sprint("say ", i)})
		rec.Emit(traces.Event{Kind: traces.KindModelStarted, Agent: "root", Model: &traces.ModelCall{Input: slices.Clone(input)}})
	}
	rec.Finish(traces.StatusCompleted, "")
	sub := rec.Subscribe(0)
	assertSeqs(t, readN(t, sub, 2, 2), 1, 2)
	sub.Skip(20)
	got := readN(t, sub, 3, 3)
	assertSeqs(t, got, 21, 23)
	for _, e := range got {
		if n := len(e.Model.Input); n != int(e.Seq) || e.Model.Input[n-1].Content != fmt.Sprint("say ", n-1) {
			t.Fatalf("event %d read after a skip has an input of %d messages, the last %q; want %d, the last \"say %d\"",
				e.Seq, n, e.Model.Input[n-1].Content, e.Seq, e.Seq-1)
		}
	}
	sub.Skip(10) // behind: no step back
	assertSeqs(t, readN(t, sub, 1, 1), 24, 24)
}

func TestSubscribeMidRunGetsBacklogThenLive(t *testing.T) {
	rec := newRecording(t)
	emit(t, rec, 10)
	sub := rec.Subscribe(4)
	assertSeqs(t, readN(t, sub, 6, 64), 5, 10)
	if n, err := sub.Poll(make([]traces.Event, 8)); n != 0 || err != nil {
		t.Fatalf("a poll with nothing new = %d, %v; want 0, nil", n, err)
	}
	for want := int64(11); want <= 13; want++ {
		emit(t, rec, 1)
		assertSeqs(t, readN(t, sub, 1, 64), want, want)
	}
}

func TestReadWaitsForTheNextEvent(t *testing.T) {
	rec := newRecording(t)
	sub := rec.Subscribe(0)
	got := make(chan []traces.Event)
	go func() { got <- readN(t, sub, 1, 8) }()
	// The reader may or may not be waiting yet: either way the event wakes or awaits it.
	rec.Emit(traces.Event{Kind: traces.KindExit, Exit: &traces.Exit{}})
	select {
	case events := <-got:
		assertSeqs(t, events, 1, 1)
	case <-time.After(wait):
		t.Fatal("a waiting Read was not woken by Emit")
	}
}

func TestReadEndsWithItsContextAndLosesNothing(t *testing.T) {
	rec := newRecording(t)
	emit(t, rec, 3)
	sub := rec.Subscribe(0)
	assertSeqs(t, readN(t, sub, 3, 8), 1, 3)
	ctx, cancel := context.WithCancel(context.Background())
	ended := make(chan error)
	go func() {
		_, err := sub.Read(ctx, make([]traces.Event, 8))
		ended <- err
	}()
	cancel()
	select {
	case err := <-ended:
		if err != context.Canceled {
			t.Fatalf("Read = %v, want context.Canceled", err)
		}
	case <-time.After(wait):
		t.Fatal("a waiting Read did not end with its context")
	}
	emit(t, rec, 2)
	rec.Finish(traces.StatusCompleted, "")
	assertSeqs(t, readAll(t, sub, 8), 4, 6)
	if n, err := sub.Read(context.Background(), make([]traces.Event, 8)); n != 0 || err != io.EOF {
		t.Errorf("Read after the end = %d, %v; want 0, io.EOF again", n, err)
	}
}

func TestSubscribeAfterFinish(t *testing.T) {
	rec := newRecording(t)
	emit(t, rec, 5)
	rec.Finish(traces.StatusFailed, "boom")
	for _, after := range []int64{0, 3, 6} {
		t.Run(fmt.Sprint("after ", after), func(t *testing.T) {
			assertSeqs(t, readAll(t, rec.Subscribe(after), 2), after+1, 6)
		})
	}
}

func TestSubscriberThatStopsReadingLosesNothing(t *testing.T) {
	// A subscriber that reads a little, then nothing while 100,000 events are recorded, neither
	// holds up the run nor misses any of them.
	const n = 100_000
	rec := newRecording(t)
	stuck := rec.Subscribe(0)
	emit(t, rec, 3)
	assertSeqs(t, readN(t, stuck, 3, 8), 1, 3)
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
	assertSeqs(t, readAll(t, stuck, 500), 4, n+4)
}

func TestFinishTakesEffectOnce(t *testing.T) {
	rec := newRecording(t)
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
	assertSeqs(t, readAll(t, sub, 8), 1, 3)
	if err := traces.Validate(tr); err != nil {
		t.Errorf("the finished recording is not a valid trace: %v", err)
	}
}

func TestConcurrentFinishAndEmit(t *testing.T) {
	// Racing Finishes must record one run.finished, as the last event, and close once.
	for range 200 {
		rec := newRecording(t)
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
	rec := traces.NewRecording(traces.Run{ID: "r1", StartedAt: t0}, agents)
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
	rec := newRecording(t)
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
	rec := newRecording(t)
	read := make(chan []traces.Event)
	sub := rec.Subscribe(0)
	go func() { read <- readAll(t, sub, 32) }()
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
	assertSeqs(t, <-read, 1, writers*each+1)
}

func TestNewRecording(t *testing.T) {
	rec := traces.NewRecording(traces.Run{ID: "r7", Status: traces.StatusCompleted}, nil)
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

func TestBacklogAcrossChunks(t *testing.T) {
	// The recording keeps its events in chunks of a few hundred: backlogs and snapshots that
	// start and end on either side of a chunk's edge get every event once, in order.
	const n = 1000
	rec := newRecording(t)
	emit(t, rec, n)
	for _, after := range []int64{0, 1, 255, 256, 257, 511, 512, 999, 1000} {
		for _, batch := range []int{1, 100, 256, 2000} { // reads within, across and beyond chunks
			got := readN(t, rec.Subscribe(after), int(n-after), batch)
			if n > after {
				assertSeqs(t, got, after+1, n)
			}
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
