package realapps

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/callbacks"
	"github.com/cloudwego/eino/schema"

	"github.com/baton-dev/baton/attach"
)

// Idiom is how an app attaches Baton: each is one line a user adds.
type Idiom string

// Idioms. Every attached idiom records to the Baton at $BATON_URL.
const (
	// Unattached is the app without Baton: what the attached runs are measured against.
	Unattached Idiom = "unattached"
	// ViaOption passes attach.Option() to every Query and ResumeWithParams.
	ViaOption Idiom = "option"
	// ViaHandler calls callbacks.AppendGlobalHandlers(attach.Handler()) once at start.
	ViaHandler Idiom = "handler"
	// ViaRun runs each query through (*attach.Baton).Run, the iterator wrapper. It has no resume,
	// so apps that resume do not use it.
	ViaRun Idiom = "run"
)

// App is an eino app of one shape, written as users write them.
type App struct {
	// Name names the shape.
	Name string
	// Queries are asked one after another on one Runner.
	Queries []string
	// Approval, when set, is the data the app resumes an interrupt with, at once.
	Approval any
	// Build returns the app's Runner; its models and tools count their calls in t.
	Build func(ctx context.Context, t *tally) (*adk.Runner, error)
}

// Idioms returns the idioms the app can be attached with.
func (a App) Idioms() []Idiom {
	if a.Approval != nil {
		return []Idiom{ViaOption, ViaHandler}
	}
	return []Idiom{ViaOption, ViaHandler, ViaRun}
}

// Apps are the suite's apps, one per shape.
var Apps = []App{
	streamingChat, chat,
	sequential, loop, parallel,
	supervisorExit, layeredSupervisor, planExecute,
	supervisorApproval, sequentialApproval, agentToolApproval, deepTask,
	toolMiddleware,
}

// Lookup returns the app named name.
func Lookup(name string) (App, bool) {
	i := slices.IndexFunc(Apps, func(a App) bool { return a.Name == name })
	if i < 0 {
		return App{}, false
	}
	return Apps[i], true
}

// Run runs the app attached through idiom, as its main function would, printing its journal to
// w line by line as it goes (see Line). It holds nothing open when it returns: the caller may
// exit at once, as apps do after their last event.
func (a App) Run(ctx context.Context, idiom Idiom, w io.Writer) error {
	if idiom == ViaHandler {
		callbacks.AppendGlobalHandlers(attach.Handler())
	}
	t := newTally()
	runner, err := a.Build(ctx, t)
	if err != nil {
		return fmt.Errorf("build %s: %w", a.Name, err)
	}
	var baton *attach.Baton
	if idiom == ViaRun {
		baton = attach.New(attach.Config{})
	}
	out := json.NewEncoder(w)
	start := time.Now()
	for i, q := range a.Queries {
		if err := a.ask(ctx, runner, baton, idiom, i+1, q, out); err != nil {
			return err
		}
	}
	return out.Encode(Line{Summary: t.summary(time.Since(start))})
}

// ask runs the turn-th query and, while it stops at an interrupt, resumes it at once with the
// app's approval, printing each event as it reads it.
func (a App) ask(ctx context.Context, runner *adk.Runner, baton *attach.Baton, idiom Idiom, turn int, q string, out *json.Encoder) error {
	var attached, opts []adk.AgentRunOption
	if idiom == ViaOption {
		attached = append(attached, attach.Option())
	}
	checkpoint := "checkpoint-" + strconv.Itoa(turn)
	if a.Approval != nil {
		opts = append(opts, adk.WithCheckPointID(checkpoint))
	}
	opts = append(opts, attached...)
	var events *adk.AsyncIterator[*adk.AgentEvent]
	if baton != nil {
		events = baton.Run(ctx, runner, []adk.Message{schema.UserMessage(q)}, opts...)
	} else {
		events = runner.Query(ctx, q, opts...)
	}
	for part := 1; ; part++ {
		var last Event
		for {
			ev, ok := events.Next()
			if !ok {
				break
			}
			last = readEvent(ev)
			if err := out.Encode(Line{Turn: turn, Query: q, Part: part, Event: &last}); err != nil {
				return err
			}
		}
		if last.Interrupt == "" || a.Approval == nil {
			break
		}
		if part > 3 {
			return fmt.Errorf("%s: query %q still interrupts after %d resumes", a.Name, q, part-1)
		}
		var err error
		events, err = runner.ResumeWithParams(ctx, checkpoint, &adk.ResumeParams{Targets: map[string]any{last.Interrupt: a.Approval}}, attached...)
		if err != nil {
			return fmt.Errorf("%s: resume %s: %w", a.Name, last.Interrupt, err)
		}
	}
	now := time.Now()
	return out.Encode(Line{Turn: turn, Query: q, EndedAt: &now})
}
