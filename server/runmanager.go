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
	"github.com/baton-dev/baton/internal/live"
	"github.com/baton-dev/baton/traces"
)

// runFunc runs a flow into a recording and returns its final status; agents.RunFlow, replaced in
// tests.
type runFunc func(ctx context.Context, flow agents.Flow, input string, opts agents.Options, rec *traces.Recording) traces.Status

type runManagerConfig struct {
	broker     *live.Broker
	maxRunning int
	streaming  bool
	log        *slog.Logger

	export func(*traces.Recording) // Config.Export; nil for none
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
	ended map[string]time.Duration
	// paused holds the runs that ended interrupted here, by id, until they are resumed or the
	// broker drops them; guarded by mu.
	paused map[string]pausedRun
	closed bool // set once ctx is done: no more runs; guarded by mu
}

// liveRun is what the manager keeps of a run while it goes on.
type liveRun struct {
	pace    *agents.Pace
	typing  *typing       // its replies being streamed
	changed chan struct{} // closed, and replaced, when the pace changes; guarded by runManager.mu
	// paused is what resumes the run once it has ended interrupted; guarded by runManager.mu.
	paused *agents.Pause
	// debug holds the run at its breakpoints; nil for a run started without any.
	debug *agents.Debugger
}

// pausedRun is a run that ended interrupted, waiting for a decision: what resumes it, and the
// pace and typing its agents were built with.
type pausedRun struct {
	pause  *agents.Pause
	pace   *agents.Pace
	typing *typing
	debug  *agents.Debugger // its breakpoints hold the resumed part too
}

func newRunManager(ctx context.Context, cfg runManagerConfig) *runManager {
	return &runManager{cfg: cfg, ctx: ctx, run: agents.RunFlow,
		live: make(map[string]*liveRun), ended: make(map[string]time.Duration), paused: make(map[string]pausedRun)}
}

// start registers a new run of flow on model in the broker and starts it in the background; the
// run is visible to every reader of the broker when start returns. turn is the conversation it
// joins, with what it is fed before input; debug, when set, holds it at breakpoints. It fails
// with CodeUnavailable when too many runs go on or the server is shutting down.
func (m *runManager) start(flow agents.Flow, input string, turn conversationTurn, model *agents.Model, pace time.Duration, debug *agents.Debugger) (traces.Run, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.canStartLocked(); err != nil {
		return traces.Run{}, err
	}
	rec, err := m.register(flow, input, turn.id, model.Name())
	if err != nil {
		return traces.Run{}, err
	}
	if turn.forkOf != nil {
		rec.ForkOf(*turn.forkOf)
	}
	if m.cfg.export != nil {
		m.cfg.export(rec)
	}
	lr := &liveRun{pace: agents.NewPace(pace), typing: newTyping(), changed: make(chan struct{}), debug: debug}
	opts := agents.Options{Pace: lr.pace, Streaming: m.cfg.streaming, Model: model, Typing: lr.typing.set,
		Paused: m.keepPaused(lr), History: turn.history, Debugger: debug}
	run := m.run
	m.launchLocked(rec, lr, flow.Name, func(ctx context.Context) traces.Status { return run(ctx, flow, input, opts, rec) })
	return rec.Run(), nil
}

// canStartLocked refuses a new or resumed run when too many go on or the server is shutting
// down (CodeUnavailable). Callers hold m.mu.
func (m *runManager) canStartLocked() error {
	switch {
	case m.closed || m.ctx.Err() != nil:
		return errShuttingDown
	case len(m.live) == 1 && m.cfg.maxRunning <= 1:
		return traces.Errorf(traces.CodeUnavailable,
			"a run is already going on, the most this server allows; try again when it has finished")
	case len(m.live) >= m.cfg.maxRunning:
		return traces.Errorf(traces.CodeUnavailable,
			"%d runs are already going on, the most this server allows; try again when one has finished", len(m.live))
	}
	return nil
}

// launchLocked makes rec's run live and runs it in the background. Callers hold m.mu.
func (m *runManager) launchLocked(rec *traces.Recording, lr *liveRun, flow string, run func(context.Context) traces.Status) {
	m.live[rec.ID()] = lr
	delete(m.ended, rec.ID())
	ctx, cancel := context.WithCancel(m.ctx)
	m.wg.Add(1)
	go m.execute(ctx, cancel, lr, flow, rec, run)
}

// keepPaused returns the agents.Options.Paused of the run live as lr: it keeps the pause, which
// forget makes resumable once the run's goroutine is done with its recording.
func (m *runManager) keepPaused(lr *liveRun) func(*agents.Pause) {
	return func(p *agents.Pause) {
		m.mu.Lock()
		defer m.mu.Unlock()
		lr.paused = p
	}
}

// windUpWait bounds how long a resume waits for an interrupted run's goroutine to wind up.
const windUpWait = 2 * time.Second

// resume continues run id, which ended interrupted here, with d, in the background, in the same
// recording. It fails with CodeNotFound for an unknown run, CodeConflict for a run that is not
// waiting for a decision here, and CodeUnavailable as start does.
func (m *runManager) resume(id string, d agents.Decision) error {
	rec, err := m.cfg.broker.Get(id)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	// The trace's end says it first: a run whose run.finished is recorded may still be in live
	// for the moment its goroutine takes to wind up.
	if st := rec.Run().Status; st.Ended() && st != traces.StatusInterrupted {
		return traces.Errorf(traces.CodeConflict, "run %s is %s: only a run that ended interrupted can be resumed", id, st)
	}
	// A run whose run.finished says interrupted is in live until its goroutine has wound up
	// (forget): a decision made the moment the page shows the interrupt waits for that, briefly.
	for deadline := time.Now().Add(windUpWait); ; {
		lr, running := m.live[id]
		if !running {
			break
		}
		if rec.Run().Status != traces.StatusInterrupted || !time.Now().Before(deadline) {
			return traces.Errorf(traces.CodeConflict, "run %s is still running: only a run that ended interrupted can be resumed", id)
		}
		changed := lr.changed // closed by forget (or by a change of pace: then look again)
		m.mu.Unlock()
		select {
		case <-changed:
		case <-time.After(time.Until(deadline)):
		}
		m.mu.Lock()
	}
	pr, ok := m.paused[id]
	if !ok {
		if st := rec.Run().Status; st != traces.StatusInterrupted {
			return traces.Errorf(traces.CodeConflict, "run %s is %s: only a run that ended interrupted can be resumed", id, st)
		}
		return traces.Errorf(traces.CodeConflict,
			"run %s was not run by this server (an app's run or a trace file): resume it where it ran", id)
	}
	if err := m.canStartLocked(); err != nil {
		return err
	}
	// Through the broker, which writes the resumed part to its store too: reopening the
	// recording alone left the store (and so the runs list) at the interrupted part.
	if err := m.cfg.broker.Resume(rec); err != nil {
		return err
	}
	delete(m.paused, id)
	if m.cfg.export != nil {
		m.cfg.export(rec) // the exporter follows the resumed part into the same trace
	}
	lr := &liveRun{pace: pr.pace, typing: pr.typing, debug: pr.debug, changed: make(chan struct{})}
	m.launchLocked(rec, lr, rec.Run().Flow, func(ctx context.Context) traces.Status {
		return pr.pause.Resume(ctx, d, rec)
	})
	return nil
}

// register adds a recording of a run of flow on the model named model under a fresh id.
func (m *runManager) register(flow agents.Flow, input, conversation, model string) (*traces.Recording, error) {
	return addFresh(m.cfg.broker, func(id string) *traces.Recording {
		run := traces.Run{ID: id, Flow: flow.Name, Input: input, Model: model, Conversation: conversation}
		return traces.NewRecording(run, flow.Agents)
	})
}

// addFresh adds to broker the recording newRec makes for a fresh run id, trying again on the rare
// id collision.
func addFresh(broker *live.Broker, newRec func(id string) *traces.Recording) (*traces.Recording, error) {
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
func (m *runManager) execute(ctx context.Context, cancel context.CancelFunc, lr *liveRun, flow string,
	rec *traces.Recording, run func(context.Context) traces.Status) {
	id := rec.ID()
	defer m.wg.Done()
	defer cancel()
	defer m.forget(id, lr)
	defer func() {
		if p := recover(); p != nil {
			m.cfg.log.Error("run panicked", "run", id, "flow", flow, "panic", p, "stack", string(debug.Stack()))
			rec.Finish(traces.StatusFailed, "internal error: the flow panicked")
		}
	}()
	status := run(ctx)
	// RunFlow finishes the recording itself; this only covers a runner that did not, so that
	// viewers never wait on a run nobody runs.
	if !status.Ended() {
		status = traces.StatusFailed
	}
	rec.Finish(status, "")
}

// forget moves run id, live as lr, from the running runs to the ended ones (and to the paused
// ones when it ended interrupted), and drops the ended and paused runs the broker no longer
// holds.
func (m *runManager) forget(id string, lr *liveRun) {
	m.mu.Lock()
	defer m.mu.Unlock()
	close(lr.changed) // the pace is final: watchers read it once more
	m.ended[id] = lr.pace.Get()
	delete(m.live, id)
	if lr.paused != nil {
		m.paused[id] = pausedRun{pause: lr.paused, pace: lr.pace, typing: lr.typing, debug: lr.debug}
	}
	for old := range m.ended {
		if !m.cfg.broker.Holds(old) {
			delete(m.ended, old)
		}
	}
	for old := range m.paused {
		if _, err := m.cfg.broker.Get(old); err != nil {
			delete(m.paused, old)
		}
	}
}

// debugger returns the debugger of run id, going on here. It fails with CodeConflict when the
// run is not going on here, or was started without breakpoints.
func (m *runManager) debugger(id string) (*agents.Debugger, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	lr, ok := m.live[id]
	switch {
	case !ok:
		return nil, traces.Errorf(traces.CodeConflict, "run %s is not running here: only a run going on in this server can be paused and continued", id)
	case lr.debug == nil:
		return nil, traces.Errorf(traces.CodeConflict, "run %s was started without breakpoints: start a run with \"breakpoints\" (an empty list will do) to set them while it runs", id)
	}
	return lr.debug, nil
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

// typing returns the replies being streamed of run id, or nil when it is not running here.
func (m *runManager) typing(id string) *typing {
	m.mu.Lock()
	defer m.mu.Unlock()
	if lr, ok := m.live[id]; ok {
		return lr.typing
	}
	return nil
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
