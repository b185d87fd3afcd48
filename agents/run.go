package agents

import (
	"context"
	"sync"
	"time"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/schema"

	"github.com/baton-dev/baton/internal/record"
	"github.com/baton-dev/baton/traces"
)

// Options tune one flow run.
type Options struct {
	// Pace is how long the scripted model waits before each reply; nil means no wait.
	Pace *Pace
	// Streaming makes agents stream their replies.
	Streaming bool
	// Model is the chat model the agents run on; nil means the flow's scripts.
	Model *Model
	// Typing, when set and Streaming is, is told of each streamed reply while it arrives.
	Typing Typing
	// History is the conversation so far, fed to the flow before the input: the earlier turns'
	// user inputs and answers, for a run that continues a conversation.
	History []traces.Message
	// Paused, when set, is called when a run ends interrupted (before RunFlow or Pause.Resume
	// returns), with what resumes it.
	Paused func(*Pause)
	// Debugger, when set, holds the run at its breakpoints; aborting it cancels the run.
	Debugger *Debugger
}

// RunFlow runs flow on input, records every event into rec, finishes rec with the run's final
// status and returns that status. It blocks until the run has ended; cancelling ctx cancels the
// run (status canceled). A flow that fails to build is a failed run, recorded as such. A run that
// ends interrupted is saved in eino's checkpoint store under rec's id and handed to opts.Paused.
func RunFlow(ctx context.Context, flow Flow, input string, opts Options, rec *traces.Recording) traces.Status {
	status, errMsg := runFlow(ctx, flow, input, opts, rec)
	rec.Finish(status, errMsg)
	return status
}

func runFlow(ctx context.Context, flow Flow, input string, opts Options, rec *traces.Recording) (traces.Status, string) {
	if err := opts.Model.CanRun(flow); err != nil {
		return fail(rec, time.Time{}, "", traces.ErrorMessage(err))
	}
	models, unplayed := opts.Model.forRun(flow, opts.Pace)
	if opts.Streaming && opts.Typing != nil {
		models = withTyping(models, opts.Typing)
	}
	if opts.Debugger != nil {
		models = withDebugger(models)
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		opts.Debugger.Abort(cancel)
		opts.Debugger.OwnHistory(flow.OwnHistory)
	}
	root, err := flow.Build(ctx, models)
	if err != nil {
		return fail(rec, time.Time{}, "", "build flow "+flow.Name+": "+err.Error())
	}
	p := &Pause{flow: flow, opts: opts, checkPoint: rec.ID(),
		runner: adk.NewRunner(ctx, adk.RunnerConfig{Agent: root, EnableStreaming: opts.Streaming, CheckPointStore: newCheckPoints()})}
	if unplayed != nil {
		p.checked = &checkedSink{Recording: rec, check: unplayed}
	}
	recorder := record.NewRecorder(p.sink(rec), flow.Name, flow.Agents)
	recorder.Debug(opts.Debugger)
	runOpts := append([]adk.AgentRunOption{adk.WithCheckPointID(p.checkPoint)}, flow.RunOptions...)
	msgs := make([]adk.Message, 0, len(opts.History)+1)
	for _, m := range opts.History {
		msgs = append(msgs, &schema.Message{Role: schema.RoleType(m.Role), Content: m.Content})
	}
	msgs = append(msgs, schema.UserMessage(input))
	return p.follow(recorder, recorder.Run(ctx, p.runner, msgs, runOpts...))
}

// Pause is a flow run that ended interrupted, saved in eino's checkpoint store: Resume continues
// it. It keeps the run's agents (and so the scripted models' places in their scripts) in memory.
type Pause struct {
	flow       Flow
	opts       Options
	runner     *adk.Runner
	checkPoint string
	checked    *checkedSink // a replay's: checks that the run played every recorded call
	// Interrupt is eino's root cause of the interrupt, as the trace records it: ID is what a
	// resume targets, Info what it asks.
	Interrupt traces.Interrupt
}

// Decision is a person's answer to an interrupt that asks for approval: the data a run is resumed
// with. Tools that ask read it with tool.GetResumeContext[Decision].
type Decision struct {
	Approve bool
	Comment string
}

// Resume continues the paused run with d as the interrupt's resume data, records the rest into
// rec, finishes rec and returns the final status, as RunFlow does. rec is the run's recording,
// reopened by the caller with rec.Resume. A run that interrupts again is handed to opts.Paused
// anew; a Pause is resumed at most once.
func (p *Pause) Resume(ctx context.Context, d Decision, rec *traces.Recording) traces.Status {
	recorder := record.NewRecorder(p.sink(rec), p.flow.Name, p.flow.Agents)
	if d := p.opts.Debugger; d != nil { // the resumed part is held as the first was
		recorder.Debug(d)
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		d.Abort(cancel)
	}
	events, err := recorder.Resume(ctx, p.runner, p.checkPoint,
		&adk.ResumeParams{Targets: map[string]any{p.Interrupt.ID: d}}, p.flow.RunOptions...)
	if err != nil {
		msg := "resume run " + rec.ID() + ": " + err.Error()
		rec.Emit(traces.Event{Kind: traces.KindResumed, Interrupt: &p.Interrupt})
		rec.Emit(traces.Event{Kind: traces.KindError, Error: &traces.ErrorDetail{Message: msg}})
		rec.Finish(traces.StatusFailed, msg)
		return traces.StatusFailed
	}
	status, errMsg := p.follow(recorder, events)
	rec.Finish(status, errMsg)
	return status
}

// follow reads a run's events to their end, waits for the recorder, and hands the run to
// opts.Paused when it ended interrupted.
func (p *Pause) follow(recorder *record.Recorder, events *adk.AsyncIterator[*adk.AgentEvent]) (traces.Status, string) {
	var cause *adk.InterruptCtx
	for {
		ev, ok := events.Next()
		if !ok {
			break
		}
		if ev.Action != nil && ev.Action.Interrupted != nil {
			cause = rootCause(ev.Action.Interrupted)
		}
	}
	<-recorder.Done()
	if p.checked != nil && p.checked.diverged != nil { // read after Done: Finish has returned
		return traces.StatusFailed, p.checked.diverged.Error()
	}
	status, errMsg := recorder.Outcome()
	if status == traces.StatusInterrupted && cause != nil && p.opts.Paused != nil {
		next := *p
		next.Interrupt = traces.Interrupt{ID: cause.ID, Address: cause.Address.String()}
		if s, ok := cause.Info.(string); ok {
			next.Interrupt.Info = s
		}
		p.opts.Paused(&next)
	}
	return status, errMsg
}

// rootCause returns the interrupt context a resume must target: eino's root cause.
func rootCause(info *adk.InterruptInfo) *adk.InterruptCtx {
	for _, c := range info.InterruptContexts {
		if c != nil && c.IsRootCause {
			return c
		}
	}
	return nil
}

// checkPoints is an in-memory adk.CheckPointStore, one per run: a paused run lives as long as
// the process.
type checkPoints struct {
	mu   sync.Mutex
	data map[string][]byte
}

func newCheckPoints() *checkPoints { return &checkPoints{data: make(map[string][]byte)} }

// Get implements adk.CheckPointStore.
func (s *checkPoints) Get(_ context.Context, id string) ([]byte, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.data[id]
	return b, ok, nil
}

// Set implements adk.CheckPointStore.
func (s *checkPoints) Set(_ context.Context, id string, b []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.data[id] = b
	return nil
}

// sink is what the run records into: rec, or a replay's check of it.
func (p *Pause) sink(rec *traces.Recording) record.Sink {
	if p.checked != nil {
		return p.checked
	}
	return rec
}

// checkedSink is a replay's recording: a run that completes leaving recorded calls unplayed
// diverged, and fails with an error event before its run.finished.
type checkedSink struct {
	*traces.Recording
	check    func() *Divergence
	diverged *Divergence // set by FinishAt
}

// FinishAt implements record.Sink.
func (s *checkedSink) FinishAt(at time.Time, status traces.Status, errMsg string) {
	if status == traces.StatusCompleted {
		if s.diverged = s.check(); s.diverged != nil {
			status, errMsg = fail(s.Recording, at, s.diverged.Agent, s.diverged.Error())
		}
	}
	s.Recording.FinishAt(at, status, errMsg)
}

// fail records an error event blamed on agent ("" for none), at at (now when zero), and returns
// a failed status with msg.
func fail(rec *traces.Recording, at time.Time, agent, msg string) (traces.Status, string) {
	rec.Emit(traces.Event{Time: at, Kind: traces.KindError, Agent: agent, Error: &traces.ErrorDetail{Message: msg}})
	return traces.StatusFailed, msg
}
