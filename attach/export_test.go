package attach

import (
	"context"
	"maps"
	"time"

	"github.com/cloudwego/eino/adk"
)

// TestEnding is the ending a sink is handed, for tests that check what an app leaves behind.
type TestEnding = ending

// RecordEachRunTo is Option recording each run into a sink of its own, made by newSink.
func RecordEachRunTo(newSink func() Sink) adk.AgentRunOption {
	return adk.WithCallbacks(runsHub(func() *Recorder { return NewRecorder(newSink(), "", nil) }))
}

// SessionInPlace reports whether the recorder reads the session values of eino's run in ctx in
// place, under eino's lock, and returns a copy of them.
func SessionInPlace(ctx context.Context) (map[string]any, bool) {
	values, lock := sessionValues(ctx)
	if lock != nil {
		lock.Lock()
		defer lock.Unlock()
	}
	return maps.Clone(values), lock != nil
}

// SetPostTimeout sets how long b waits for each answer of Baton (postTimeout by default), for
// tests that fault Baton; call it before b records a run.
func SetPostTimeout(b *Baton, d time.Duration) { b.remote.http.Timeout = d }

// EndingWaitsRunOut returns how many run ends recorded by b waited for their delivery in vain.
func EndingWaitsRunOut(b *Baton) int64 { return b.remote.waitsRunOut.Load() }
