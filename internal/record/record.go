// Package record is Baton's recording engine, not API: a Recorder turns one eino ADK run's
// callbacks into trace events, and a Destination delivers them to a Baton server or to trace
// files. Apps record through package attach, which is this package's public face; the demo
// runner (package agents) records through the same Recorder.
package record

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/cloudwego/eino/callbacks"
)

// Config says where a Destination delivers runs; attach.New resolves it from attach.Config and
// the environment.
type Config struct {
	URL, Token string // a Baton server, when Dir is empty
	Dir        string // a folder of trace files, one per run
	Logger     *slog.Logger
	Buffer     int // events of one run that may wait for the server
}

// Destination delivers recorded runs to one place. Its methods are safe for concurrent use.
type Destination struct {
	cfg    Config
	remote *client        // nil when writing files
	files  sync.WaitGroup // runs being written to files
}

// NewDestination returns a Destination for cfg, whose fields are all set.
func NewDestination(cfg Config) *Destination {
	d := &Destination{cfg: cfg}
	if cfg.Dir == "" {
		d.remote = newClient(cfg)
	}
	return d
}

// Sink returns where one run goes; conversation groups it with the other turns of a chat.
func (d *Destination) Sink(conversation string) Sink {
	if d.remote != nil {
		return d.remote.run(conversation)
	}
	return newFileRun(d.cfg.Dir, conversation, d.cfg.Logger, &d.files)
}

// Close waits until every run recorded so far has been delivered, or ctx is done, and then stops
// sending. It fails when a run was not delivered whole (see attach.Baton.Close).
func (d *Destination) Close(ctx context.Context) error {
	if d.remote != nil {
		return d.remote.close(ctx)
	}
	written := make(chan struct{})
	go func() {
		d.files.Wait()
		close(written)
	}()
	select {
	case <-written:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("baton: runs not written to %s: %w", d.cfg.Dir, ctx.Err())
	}
}

// SetPostTimeout sets how long d waits for each answer of Baton, for tests that fault Baton; call
// it before d records a run.
func (d *Destination) SetPostTimeout(t time.Duration) { d.remote.http.Timeout = t }

// EndingWaitsRunOut returns how many run ends recorded to d waited for their delivery in vain.
func (d *Destination) EndingWaitsRunOut() int64 { return d.remote.waitsRunOut.Load() }

// Handler returns a callback handler that records every run it sees, each with the Recorder
// newRun returns. Runs going on at once are kept apart.
func Handler(newRun func() *Recorder) callbacks.Handler { return runsHub(newRun) }
