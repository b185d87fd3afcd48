package live

import "github.com/baton-dev/baton/traces"

// Taker is a Tailer whose running runs may move from a server that stopped to another
// (internal/postgres): an app whose server died carries its run on at another one.
type Taker interface {
	Tailer
	// OwnerStopped reports whether run id is running and the server recording it has stopped
	// (its lease expired or was released). It changes nothing.
	OwnerStopped(id string) (bool, error)
	// TakeOver makes running run id this store's server's when the server recording it has
	// stopped, or is this one, in one step: of two servers taking it at once, one does. It
	// reports whether it did.
	TakeOver(id string) (bool, error)
}

// OwnerStopped reports whether run id is recorded by another server sharing b's store that has
// stopped, so that an app may carry the run on here (TakeOver). False when b follows no other
// server's runs (see Follow) or its store moves none.
func (b *Broker) OwnerStopped(id string) (bool, error) {
	t, ok := b.store.(Taker)
	if !ok || b.follow == nil {
		return false, nil
	}
	return t.OwnerStopped(id)
}

// TakeOver makes run id, which another server sharing the store was recording until it stopped,
// b's: from the last event the store has committed, b records the run on and writes it, as a run
// it added. Its viewers here keep following it: the recording they read is the one that goes on.
// It returns nil when the run cannot be taken: its server is alive, or it has ended. The caller
// (an app's new session on the run) emits the rest.
func (b *Broker) TakeOver(id string) (*traces.Recording, error) {
	t, ok := b.store.(Taker)
	if !ok || b.follow == nil {
		return nil, nil
	}
	b.mu.RLock()
	_, held := b.runs[id]
	f := b.follow.followed[id]
	b.mu.RUnlock()
	if held && f == nil {
		return nil, traces.Errorf(traces.CodeConflict, "run %s is recorded by this server already", id)
	}
	taken, err := t.TakeOver(id)
	if err != nil || !taken {
		return nil, err
	}
	b.mu.Lock()
	f = b.follow.followed[id]
	delete(b.follow.followed, id)
	b.mu.Unlock()
	fresh := f == nil
	if !fresh {
		close(f.quit)
		<-f.done // nothing feeds the recording but this from now on
	} else {
		f = newFollowing(traces.Run{ID: id}, traces.NewEventDecoder())
	}
	// What the store holds now is all there will be of the stopped server: its writes are refused.
	tr, err := t.Tail(id, f.dec, f.last.Load())
	if err == nil && fresh {
		f.rec = traces.NewRecording(tr.Run, nil)
	}
	if err == nil {
		var ended bool
		if ended, err = f.feed(tr); err == nil && ended {
			err = traces.Errorf(traces.CodeConflict, "run %s ended while it was being taken over", id)
		}
	}
	if err != nil {
		// Taken in the store but not held here: a later TakeOver (this server's own) takes it again.
		b.mu.Lock()
		if b.runs[id] == f.rec {
			b.unholdLocked(id)
		}
		b.mu.Unlock()
		return nil, err
	}
	var tally Tally
	for _, e := range f.rec.Snapshot().Events {
		tally.Add(e)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.runs[id]; !ok {
		b.runs[id] = f.rec
		b.added = append(b.added, id)
	}
	b.persist(f.rec, tally)
	return f.rec, nil
}

// Locator is a Store whose runs other servers sharing it record (internal/postgres), and that
// knows where each of them serves: a request to act on a run (continue it at a breakpoint, cancel
// it, resume it) reaches the server holding it, whichever one it was sent to.
type Locator interface {
	// Owner returns the address (a base URL) of the other live server that runs run id: the run
	// is running there, or ended interrupted there and waits for a decision; "" when no other
	// live server does (this one does, or a stopped one did, or the run has ended otherwise or
	// does not exist).
	Owner(id string) (string, error)
}

// Owner returns the address of the other live server sharing b's store that runs run id (see
// Locator), or "" when there is none, or b shares its store with no other server.
func (b *Broker) Owner(id string) (string, error) {
	l, ok := b.store.(Locator)
	if !ok || b.follow == nil {
		return "", nil
	}
	return l.Owner(id)
}
