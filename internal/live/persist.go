package live

import (
	"context"
	"errors"
	"github.com/baton-dev/baton/traces"
	"io"
	"slices"
	"time"
)

// maxBatch bounds how many events one Store.Save writes, and batchWindow how long a batch of a
// broker without the commit gate waits for more events after its first: a commit costs far more
// than an event, so a fast run is written in few large transactions, and a slow one's events
// reach the disk within the window. With the gate, viewers wait for the commit: a batch is what
// has come by then, and a fast run's events pile up into large batches during each commit.
const (
	maxBatch    = 512
	batchWindow = 10 * time.Millisecond
)

// persist starts the goroutine that writes rec's events after tally.Events to the store, as they
// are recorded, in batches (see nextBatch). It ends once the run has finished and everything is
// written. The caller holds b.mu.
func (b *Broker) persist(rec *traces.Recording, tally Tally) {
	if b.gate {
		rec.Gate(tally.Events)
	}
	id, done := rec.ID(), make(chan struct{})
	b.writing[id] = done
	b.writers.Add(1)
	go func() {
		defer b.writers.Done()
		if err := b.write(rec, tally); err != nil {
			b.log.Error("store: the run goes on in memory only", "run", id, "err", err)
		}
		rec.Ungate()
		b.mu.Lock()
		if b.writing[id] == done {
			delete(b.writing, id)
		}
		b.mu.Unlock()
		close(done)
	}()
}

// write copies rec's events after tally.Events to the store until the run finishes.
func (b *Broker) write(rec *traces.Recording, tally Tally) error {
	var saved []traces.Agent
	sub := rec.SubscribeUncommitted(tally.Events)
	buf := make([]traces.Event, maxBatch)
	for {
		batch, err := nextBatch(sub, buf, b.window())
		if len(batch) > 0 {
			for _, e := range batch {
				tally.Add(e)
			}
			if b.countFindings != nil && tally.Status.Ended() {
				tally.Findings = b.countFindings(rec.Snapshot())
			}
			agents := rec.Agents()
			if slices.EqualFunc(agents, saved, agentEqual) {
				agents = nil // unchanged: not written again
			} else {
				saved = agents
			}
			if err := b.save(rec.ID(), tally.Apply(rec.Run()), tally, agents, batch); err != nil {
				return err
			}
			rec.Commit(tally.Events)
		}
		if err != nil { // io.EOF: the run has ended and every event is written
			return nil
		}
	}
}

// maxStoreWait is how long a run's writer tries a batch again while the store says its fault may
// pass (a database restarting or unreachable, a full disk): the run's viewers wait meanwhile
// (they see only what is committed), its app and recording do not. Past it, the run goes on in
// memory only.
const maxStoreWait = 2 * time.Minute

// save is Store.Save, tried again while the store fails with CodeUnavailable and a Retry that
// says waiting may help, for up to maxStoreWait, or until Close gives up. A failed Save keeps
// nothing, so the batch is written whole again. It logs the fault once, and its end.
func (b *Broker) save(id string, run traces.Run, tally Tally, agents []traces.Agent, batch []traces.Event) error {
	var since time.Time
	wait := 100 * time.Millisecond
	for {
		err := b.store.Save(run, tally, agents, batch)
		var te *traces.Error
		if err == nil || !errors.As(err, &te) || te.Code != traces.CodeUnavailable || te.Retry == traces.NoRetry {
			if err == nil && !since.IsZero() {
				b.log.Info("store: writing the run again", "run", id, "after", time.Since(since).Round(time.Millisecond))
			}
			return err
		}
		if since.IsZero() {
			since = time.Now()
			b.log.Warn("store: cannot write the run; trying again, its viewers wait for what is written", "run", id,
				"cause", te.Message, "gives_up_after", maxStoreWait)
		}
		if time.Since(since) > maxStoreWait {
			return err
		}
		select {
		case <-time.After(wait):
		case <-b.quit:
			return err
		}
		wait = min(2*wait, 2*time.Second)
	}
}

// nextBatch waits for an event of sub, then reads into buf what else arrives within window, as
// long as buf has room. Its error is io.EOF once sub has ended (the batch may hold its last
// events).
func nextBatch(sub *traces.Subscription, buf []traces.Event, window time.Duration) ([]traces.Event, error) {
	n, err := sub.Read(context.Background(), buf)
	if err != nil || n == len(buf) {
		return buf[:n], err
	}
	if window == 0 {
		k, err := sub.Poll(buf[n:])
		return buf[:n+k], err
	}
	ctx, cancel := context.WithTimeout(context.Background(), window)
	defer cancel()
	for n < len(buf) {
		k, err := sub.Read(ctx, buf[n:])
		n += k
		if err == io.EOF {
			return buf[:n], err
		}
		if err != nil { // the window is over
			break
		}
	}
	return buf[:n], nil
}

// window is how long a batch waits for more events: none while viewers wait for the commit
// (events that come during a commit make the next batch), else batchWindow.
func (b *Broker) window() time.Duration {
	if b.gate {
		return 0
	}
	return batchWindow
}

func agentEqual(a, b traces.Agent) bool {
	return a.Name == b.Name && a.Description == b.Description && a.Kind == b.Kind && a.Parent == b.Parent &&
		a.Relation == b.Relation && a.OutputKey == b.OutputKey && slices.Equal(a.Tools, b.Tools)
}

// Resume reopens rec, a run of this broker that ended interrupted (see traces.Recording.Resume), and
// writes the resumed part to the store too. A run that has not ended interrupted is refused at
// once: waiting for its writer would wait for the run's end.
func (b *Broker) Resume(rec *traces.Recording) error {
	if run := rec.Run(); run.Status != traces.StatusInterrupted {
		return traces.Errorf(traces.CodeConflict, "run %s is %s: only a run that ended interrupted can be resumed", run.ID, run.Status)
	}
	// Another server's run that b followed: b records it from here on (its follower might
	// otherwise feed it another server's resumption meanwhile, which Resume then refuses).
	b.unfollowRun(rec.ID(), rec)
	b.mu.RLock()
	done := b.writing[rec.ID()]
	b.mu.RUnlock()
	if done != nil {
		<-done // the writer of the first part ends promptly: its run has ended
	}
	var tally Tally
	for _, e := range rec.Snapshot().Events {
		tally.Add(e)
	}
	if b.gate { // before the resumed part's first event
		rec.Gate(tally.Events)
	}
	if err := rec.Resume(); err != nil {
		rec.Ungate()
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.persist(rec, tally)
	return nil
}

// Interrupted returns the newest run that ended interrupted at interruptID (its last interrupted
// event has that id), or nil.
func (b *Broker) Interrupted(interruptID string) (*traces.Recording, error) {
	for _, run := range b.Runs() {
		if run.Status != traces.StatusInterrupted {
			continue
		}
		if rec, err := b.Get(run.ID); err == nil && lastInterrupt(rec.Snapshot()) == interruptID {
			return rec, nil
		}
	}
	id, err := b.store.Interrupted(interruptID)
	if err != nil || id == "" {
		return nil, err
	}
	return b.Get(id)
}

// lastInterrupt returns the id of tr's last interrupted event, or "".
func lastInterrupt(tr traces.Trace) string {
	for i := len(tr.Events) - 1; i >= 0; i-- {
		if e := tr.Events[i]; e.Kind == traces.KindInterrupted && e.Interrupt != nil {
			return e.Interrupt.ID
		}
	}
	return ""
}

// Delete forgets run id, in memory and in the store. It fails with CodeNotFound for an unknown
// run and CodeConflict for one still going on.
func (b *Broker) Delete(id string) error {
	rec, err := b.Get(id)
	if err != nil {
		return err
	}
	if !rec.Run().Status.Ended() {
		return traces.Errorf(traces.CodeConflict, "run %s is still going on: delete it once it has ended", id)
	}
	b.mu.Lock()
	done := b.writing[id]
	b.unholdLocked(id)
	b.mu.Unlock()
	if done != nil {
		<-done // its last events are being written: delete them too
	}
	return b.store.Delete(id)
}

// SetSessionHash records in the store what proves who may go on writing run id (see
// Store.SetSessionHash): it outlives the process, as the run does.
func (b *Broker) SetSessionHash(id string, hash []byte) error {
	return b.store.SetSessionHash(id, hash)
}

// SessionHash returns what SetSessionHash recorded for run id last, or nil.
func (b *Broker) SessionHash(id string) ([]byte, error) {
	return b.store.SessionHash(id)
}

// SetNextBreakpoints keeps points for the next runs of flow that apps stream (see
// Store.SetNextBreakpoints).
func (b *Broker) SetNextBreakpoints(flow string, points []string) error {
	return b.store.SetNextBreakpoints(flow, points)
}

// NextBreakpoints returns the breakpoints kept for the next runs of flow, nil for none.
func (b *Broker) NextBreakpoints(flow string) ([]string, error) {
	return b.store.NextBreakpoints(flow)
}

// List returns one page of run summaries, the most recently added first: the store's (see
// Store.List).
func (b *Broker) List(q RunQuery) (RunPage, error) {
	return b.store.List(q)
}

// Close stops following other servers' runs (see Follow) and waits until every run's events are
// written to the store, or ctx ends. End the runs first; the store is the caller's to close after.
func (b *Broker) Close(ctx context.Context) error {
	done := make(chan struct{})
	go func() {
		b.unfollow()
		b.writers.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		b.quitOnce.Do(func() { close(b.quit) })
		return errors.New("close broker: runs still being written: " + ctx.Err().Error())
	}
}

// Import adds tr, a trace read from a file, as an ended run (see traces.NewRecordingOf): under its own
// id, or under a fresh one when that is taken here or in the store. A trace whose run had not
// ended is ended interrupted first (see traces.EndImported).
func (b *Broker) Import(tr traces.Trace) (*traces.Recording, error) {
	tr, _ = traces.EndImported(tr)
	rec := traces.NewRecordingOf(tr)
	held := func() traces.Trace { t := tr; t.Run = rec.Run(); return t } // the recording's own
	err := b.add(rec, held)
	for try := 0; traces.ErrorCode(err) == traces.CodeConflict && try < 5; try++ {
		tr.Run.ID = traces.NewRunID()
		rec = traces.NewRecordingOf(tr)
		err = b.add(rec, held)
	}
	if err != nil {
		return nil, err
	}
	return rec, nil
}
