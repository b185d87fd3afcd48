package server

import (
	"errors"
	"fmt"
	"sync"

	"github.com/baton-dev/baton/traces"
)

// An ended run's trace is exported without a snapshot of its events: they are read from the
// recording a batch at a time on one goroutine while the batches before are encoded and sent on
// another, so that a million-event run takes half the time on two cores and none of its events
// are in memory at once.

// exportBatch is how many events an export reads from the recording at a time.
const exportBatch = 4096

// endedRun returns rec's trace without its events and how many it has, when it has ended and
// stayed ended while they were counted (a resume in between makes ended false): nothing can be
// added to them then.
func endedRun(rec *traces.Recording) (tr traces.Trace, n int64, ended bool) {
	before := rec.Run()
	n = rec.Len()
	after := rec.Run()
	if !before.Status.Ended() || after.Status != before.Status || after.EndedAt == nil || before.EndedAt == nil ||
		!after.EndedAt.Equal(*before.EndedAt) {
		return traces.Trace{}, 0, false
	}
	return traces.Trace{Run: after, Agents: rec.Agents()}, n, true
}

// readAhead returns the source of rec's first n events for traces.EncodeEvents, which reads
// them a batch ahead, and stop, which ends the reading when the encoding ends first.
func readAhead(rec *traces.Recording, n int64) (next func() ([]traces.Event, error), stop func()) {
	batches := make(chan []traces.Event, 2)
	done := make(chan struct{})
	var readErr error
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(batches)
		sub := rec.SubscribeUncommitted(0)
		// Four buffers in turn: one being filled, two in the channel, one being encoded.
		var bufs [4][]traces.Event
		for k, read := 0, int64(0); read < n; k++ {
			buf := bufs[k%len(bufs)]
			if buf == nil {
				buf = make([]traces.Event, min(exportBatch, n))
				bufs[k%len(bufs)] = buf
			}
			got, err := sub.Poll(buf[:min(int64(len(buf)), n-read)])
			if err == nil && got == 0 {
				err = errors.New("it holds fewer events than it counted")
			}
			if err != nil {
				readErr = fmt.Errorf("read event %d of the recording: %w", read+1, err)
				return
			}
			read += int64(got)
			select {
			case batches <- buf[:got]:
			case <-done:
				return
			}
		}
	})
	next = func() ([]traces.Event, error) {
		if b, ok := <-batches; ok {
			return b, nil
		}
		return nil, readErr // set before batches was closed
	}
	return next, func() {
		close(done)
		wg.Wait()
	}
}
