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
	// Models overrides the scripted models (for a real LLM); nil means the flow's scripts.
	Models ModelFor
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
	models := opts.Models
	if models == nil {
		models = flow.ScriptedModels(opts.Pace)
	}
	root, err := flow.Build(ctx, models)
	if err != nil {
		msg := "build flow " + flow.Name + ": " + err.Error()
		rec.Emit(traces.Event{Kind: traces.KindError, Error: &traces.ErrorDetail{Message: msg}})
		return traces.StatusFailed, msg
	}
	runner := adk.NewRunner(ctx, adk.RunnerConfig{Agent: root, EnableStreaming: opts.Streaming})
	recorder := attach.NewRecorder(rec, flow.Name, flow.Agents)
	events := recorder.Run(ctx, runner, []adk.Message{schema.UserMessage(input)}, flow.RunOptions...)
	for {
		if _, ok := events.Next(); !ok {
			break
		}
	}
	<-recorder.Done()
	return recorder.Outcome()
}
