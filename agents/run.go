package agents

import (
	"context"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/schema"

	"github.com/baton-dev/baton/attach"
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
}

// RunFlow runs flow on input, records every event into rec, finishes rec with the run's final
// status and returns that status. It blocks until the run has ended; cancelling ctx cancels the
// run (status canceled). A flow that fails to build is a failed run, recorded as such.
func RunFlow(ctx context.Context, flow Flow, input string, opts Options, rec *traces.Recording) traces.Status {
	status, errMsg := runFlow(ctx, flow, input, opts, rec)
	rec.Finish(status, errMsg)
	return status
}

func runFlow(ctx context.Context, flow Flow, input string, opts Options, rec *traces.Recording) (traces.Status, string) {
	if err := opts.Model.Ready(); err != nil {
		return fail(rec, "", traces.ErrorMessage(err))
	}
	models, unplayed := opts.Model.forRun(flow, opts.Pace)
	if opts.Streaming && opts.Typing != nil {
		models = withTyping(models, opts.Typing)
	}
	root, err := flow.Build(ctx, models)
	if err != nil {
		return fail(rec, "", "build flow "+flow.Name+": "+err.Error())
	}
	runner := adk.NewRunner(ctx, adk.RunnerConfig{Agent: root, EnableStreaming: opts.Streaming})
	var sink attach.Sink = rec
	var checked *checkedSink
	if unplayed != nil {
		checked = &checkedSink{Recording: rec, check: unplayed}
		sink = checked
	}
	recorder := attach.NewRecorder(sink, flow.Name, flow.Agents)
	events := recorder.Run(ctx, runner, []adk.Message{schema.UserMessage(input)}, flow.RunOptions...)
	for {
		if _, ok := events.Next(); !ok {
			break
		}
	}
	<-recorder.Done()
	if checked != nil && checked.diverged != nil { // read after Done: Finish has returned
		return traces.StatusFailed, checked.diverged.Error()
	}
	return recorder.Outcome()
}

// checkedSink is a replay's recording: a run that completes leaving recorded calls unplayed
// diverged, and fails with an error event before its run.finished.
type checkedSink struct {
	*traces.Recording
	check    func() *Divergence
	diverged *Divergence // set by Finish
}

// Finish implements attach.Sink.
func (s *checkedSink) Finish(status traces.Status, errMsg string) {
	if status == traces.StatusCompleted {
		if s.diverged = s.check(); s.diverged != nil {
			status, errMsg = fail(s.Recording, s.diverged.Agent, s.diverged.Error())
		}
	}
	s.Recording.Finish(status, errMsg)
}

// fail records an error event blamed on agent ("" for none) and returns a failed status with msg.
func fail(rec *traces.Recording, agent, msg string) (traces.Status, string) {
	rec.Emit(traces.Event{Kind: traces.KindError, Agent: agent, Error: &traces.ErrorDetail{Message: msg}})
	return traces.StatusFailed, msg
}
