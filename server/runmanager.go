package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/traces"
)

// runFunc runs a flow into a recording and returns its final status; agents.RunFlow, replaced in
// tests.
type runFunc func(ctx context.Context, flow agents.Flow, input string, opts agents.Options, rec *traces.Recording) traces.Status

type runManagerConfig struct {
	broker     *traces.Broker
	queue      int
	maxRunning int
	model      string
	options    agents.Options // Models and Streaming; Pace is per run
	log        *slog.Logger
}

// runManager starts flows in the background, one goroutine per run, and keeps what is needed to
// change a running run's pace, to tell its pages the pace, and to cancel every run on shutdown.
type runManager struct {
	cfg runManagerConfig
	ctx context.Context // the server's: canceling it cancels every run

	wg  sync.WaitGroup // one per run goroutine
	mu  sync.Mutex
	run runFunc
	// live holds the runs still going, by id; guarded by mu.
	live map[string]*liveRun
	// ended holds the last pace of the runs that ended here, by id, for as long as the broker
	// holds them in memory; guarded by mu.
	ended  map[string]time.Duration
	closed bool // set once ctx is done: no more runs; guarded by mu
}

// liveRun is what the manager keeps of a run while it goes on.
type liveRun struct {
	pace    *agents.Pace
	changed chan struct{} // closed, and replaced, when the pace changes; guarded by runManager.mu
}

func newRunManager(ctx context.Context, cfg runManagerConfig) *runManager {
	return &runManager{cfg: cfg, ctx: ctx, run: agents.RunFlow,
		live: make(map[string]*liveRun), ended: make(map[string]time.Duration)}
}

// start registers a new run of flow in the broker and starts it in the background; the run is
// visible to every reader of the broker when start returns. It fails with CodeUnavailable when
// too many runs go on or the server is shutting down.
func (m *runManager) start(flow agents.Flow, input string, pace time.Duration) (traces.Run, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case m.closed || m.ctx.Err() != nil:
		return traces.Run{}, errShuttingDown
	case len(m.live) >= m.cfg.maxRunning:
		return traces.Run{}, traces.Errorf(traces.CodeUnavailable,
			"%d runs are already going on, the most this server allows; try again when one has finished", len(m.live))
	}
	rec, err := m.register(flow, input)
	if err != nil {
		return traces.Run{}, err
	}
	lr := &liveRun{pace: agents.NewPace(pace), changed: make(chan struct{})}
	m.live[rec.ID()] = lr
	ctx, cancel := context.WithCancel(m.ctx)
	opts := m.cfg.options
	opts.Pace = lr.pace
	m.wg.Add(1)
	go m.execute(ctx, cancel, m.run, flow, input, opts, rec)
	return rec.Run(), nil
}

// register adds a recording of a run of flow under a fresh id.
func (m *runManager) register(flow agents.Flow, input string) (*traces.Recording, error) {
	return addFresh(m.cfg.broker, func(id string) *traces.Recording {
		return traces.NewRecording(traces.Run{ID: id, Flow: flow.Name, Input: input, Model: m.cfg.model}, flow.Agents, m.cfg.queue)
	})
}

// addFresh adds to broker the recording newRec makes for a fresh run id, trying again on the rare
// id collision.
func addFresh(broker *traces.Broker, newRec func(id string) *traces.Recording) (*traces.Recording, error) {
	for range 5 {
		rec := newRec(traces.NewRunID())
		err := broker.Add(rec)
		if err == nil {
			return rec, nil
		}
		if traces.ErrorCode(err) != traces.CodeConflict {
			return nil, fmt.Errorf("register run %s: %w", rec.ID(), err)
		}
	}
	return nil, errors.New("register run: no free run id after 5 tries")
}

// execute is a run's goroutine. It ends when the run does, which canceling ctx hastens; a panic
// in the flow fails the run instead of the server.
func (m *runManager) execute(ctx context.Context, cancel context.CancelFunc, run runFunc,
	flow agents.Flow, input string, opts agents.Options, rec *traces.Recording) {
	id := rec.ID()
	defer m.wg.Done()
	defer cancel()
	defer m.forget(id)
	defer func() {
		if p := recover(); p != nil {
			m.cfg.log.Error("run panicked", "run", id, "flow", flow.Name, "panic", p, "stack", string(debug.Stack()))
			rec.Finish(traces.StatusFailed, "internal error: the flow panicked")
		}
	}()
	status := run(ctx, flow, input, opts, rec)
	// RunFlow finishes the recording itself; this only covers a runner that did not, so that
	// viewers never wait on a run nobody runs.
	if !status.Ended() {
		status = traces.StatusFailed
	}
	rec.Finish(status, "")
}

// forget moves run id from the running runs to the ended ones, and drops the ended runs the
// broker no longer holds.
func (m *runManager) forget(id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if lr, ok := m.live[id]; ok {
		m.ended[id] = lr.pace.Get()
		close(lr.changed) // the pace is final: watchers read it once more
		delete(m.live, id)
	}
	for old := range m.ended {
		if !m.cfg.broker.Holds(old) {
			delete(m.ended, old)
		}
	}
}

// setPace changes the pace of a running run. It fails with CodeConflict when the run is not
// going on (it ended, or was not started by this server).
func (m *runManager) setPace(id string, d time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	lr, ok := m.live[id]
	if !ok {
		return traces.Errorf(traces.CodeConflict, "run %s is not running; only a running run's pace can change", id)
	}
	if lr.pace.Get() != d {
		lr.pace.Set(d)
		close(lr.changed) // wakes the run's pages, which read the new pace
		lr.changed = make(chan struct{})
	}
	return nil
}

// runPace is a run's pace as its pages show it.
type runPace struct {
	d       time.Duration
	known   bool // the run was started here: false for a run recorded elsewhere
	running bool // it can still change
}

// pace returns run id's pace, and a channel closed when that changes: at the next pace change or
// when the run ends. The channel is nil once the pace cannot change any more.
func (m *runManager) pace(id string) (runPace, <-chan struct{}) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if lr, ok := m.live[id]; ok {
		return runPace{d: lr.pace.Get(), known: true, running: true}, lr.changed
	}
	d, ok := m.ended[id]
	return runPace{d: d, known: ok}, nil
}

// wait refuses new runs and waits for the running ones to end; cancel the manager's context
// first to make them end soon.
func (m *runManager) wait() {
	m.mu.Lock()
	m.closed = true
	m.mu.Unlock()
	m.wg.Wait()
}

// setRunner replaces agents.RunFlow for the runs started from now on (tests).
func (m *runManager) setRunner(run runFunc) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.run = run
}
