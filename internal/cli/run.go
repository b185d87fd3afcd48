package cli

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/internal/otlp"
	"github.com/baton-dev/baton/internal/prices"
	"github.com/baton-dev/baton/traces"
	"github.com/baton-dev/baton/web"
)

var runCommand = &command{
	name:  "run",
	args:  "FLOW",
	shape: "[--input] [--out] [--stream] [--pace] [--model] [--approve | --reject] [--break ...] [--prices] [--otlp-endpoint [--otlp-content]]",
	about: "run a flow headless, one line per event",
	define: func(fs *flag.FlagSet) runner {
		var o runOptions
		fs.StringVar(&o.input, "input", "", "the user's input `TEXT` (default: the flow's own)")
		fs.StringVar(&o.out, "out", "", "write the trace JSON to this `FILE`")
		fs.BoolVar(&o.stream, "stream", false, "let agents stream their replies")
		fs.DurationVar(&o.pace, "pace", 0, "delay `D` of the scripted model before each reply")
		fs.Var(&o.models, "model", modelHelp)
		fs.BoolVar(&o.approve, "approve", false, "approve what the run asks when it stops for approval, and resume it")
		fs.StringVar(&o.reject, "reject", "", "reject what the run asks when it stops for approval, for this `REASON`, and resume it")
		fs.Var(&o.breaks, "break", breakHelp)
		o.otlpEndpoint, o.otlpContent = otlpFlags(fs)
		o.prices = pricesFlag(fs)
		return func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
			if len(args) == 0 || args[0] == "" || args[0][0] == '-' {
				if err := fs.Parse(args); err != nil {
					return err // -h among them: run's help
				}
				return misuse("run", "run needs a flow name")
			}
			if err := fs.Parse(args[1:]); err != nil {
				return err
			}
			return runFlow(ctx, args[0], o, stdout, stderr)
		}
	},
}

// runOptions are the flags of run.
type runOptions struct {
	input, out   string
	stream       bool
	pace         time.Duration
	models       modelFlags
	approve      bool
	reject       string
	breaks       breakFlags
	otlpEndpoint *string
	otlpContent  *bool
	prices       *string
	pricing      prices.Run         // of the run's model calls, by prices
	forkOf       *traces.ForkOrigin // a fork's origin, recorded on its run.started
}

// runFlow runs flow name without a server, printing each event as it is recorded.
func runFlow(ctx context.Context, name string, o runOptions, stdout, stderr io.Writer) error {
	if o.approve && o.reject != "" {
		return errors.New("run: --approve and --reject exclude each other: give one")
	}
	flow, err := lookupFlow(ctx, name)
	if err != nil {
		return errors.New(traces.ErrorMessage(err))
	}
	model := agents.Scripted()
	switch len(o.models) {
	case 0:
	case 1:
		model = o.models[0]
	default:
		return errors.New("run takes one --model")
	}
	if err := model.CanRun(flow); err != nil {
		return errors.New(traces.ErrorMessage(err))
	}
	table, err := loadPrices(*o.prices)
	if err != nil {
		return err
	}
	o.pricing = table.Run(model.Name())
	return exporting(*o.otlpEndpoint, *o.otlpContent, stderr, func(exp *otlp.Exporter) error {
		return recordFlow(ctx, flow, model, &o, exp, stdout)
	})
}

// recordFlow runs flow with o's input and model, printing each event as it is recorded, and
// exports the run when exp is not nil. A run that stops for approval is resumed as o says, each
// time it stops. The trace goes to o's file, if any. It fails when the run did not complete.
func recordFlow(ctx context.Context, flow agents.Flow, model *agents.Model, o *runOptions, exp *otlp.Exporter, stdout io.Writer) error {
	input := o.input
	if input == "" {
		input = flow.DefaultInput
		if replayed, recorded, ok := model.Replays(); ok && replayed == flow.Name {
			input = recorded // the input the recorded replies answer
		}
	}
	rec := traces.NewRecording(traces.Run{ID: traces.NewRunID(), Flow: flow.Name, Input: input, Model: model.Name()}, flow.Agents)
	if o.forkOf != nil {
		rec.ForkOf(*o.forkOf)
	}
	if exp != nil {
		exp.Watch(rec)
	}
	var onPause func(traces.Event)
	var debug *agents.Debugger
	if len(o.breaks) > 0 {
		debug = agents.NewDebugger(o.breaks, nil)
		in := bufio.NewScanner(stdin)
		onPause = func(e traces.Event) { prompt(debug, e, rec.Snapshot(), in, stdout) }
	}
	printed := make(chan struct{})
	go func() {
		defer close(printed)
		printEvents(rec, stdout, 0, o.pricing, onPause)
	}()
	var paused *agents.Pause // set by Paused, in RunFlow's and Resume's goroutine
	opts := agents.Options{Pace: agents.NewPace(o.pace), Streaming: o.stream, Model: model, Paused: func(p *agents.Pause) { paused = p },
		Debugger: debug}
	status := agents.RunFlow(ctx, flow, input, opts, rec)
	for paused != nil && (o.approve || o.reject != "") {
		<-printed // the printer ends with the interrupted run; it follows the resumed part anew
		if err := rec.Resume(); err != nil {
			return err
		}
		if exp != nil {
			exp.Watch(rec) // the exporter follows the resumed part into the same trace
		}
		printed = make(chan struct{})
		go func(done chan struct{}, after int64) {
			defer close(done)
			printEvents(rec, stdout, after, o.pricing, nil)
		}(printed, int64(len(rec.Snapshot().Events)))
		p := paused
		paused = nil
		status = p.Resume(ctx, agents.Decision{Approve: o.approve, Comment: o.reject}, rec)
	}
	<-printed
	if paused != nil {
		fmt.Fprintf(stdout, "The run waits for a decision: %s\nRun it again with --approve, or --reject REASON.\n", paused.Interrupt.Info)
	}
	if o.out != "" {
		if err := traces.WriteFile(o.out, rec.Snapshot()); err != nil {
			return err
		}
	}
	if status != traces.StatusCompleted {
		return fmt.Errorf("run %s", status)
	}
	return nil
}

// printEvents prints one line per event of rec after seq last until the run ends. It reads them
// from the recording at its own pace: the run never waits for it, but where a breakpoint holds
// it, onPause (when set) is told of the paused event and lets it go on. A model call's line ends
// with its cost under pricing when its model has a price, or "no price for MODEL" when the model
// it named has none (scripted calls, which cost nothing, say nothing).
func printEvents(rec *traces.Recording, w io.Writer, last int64, pricing prices.Run, onPause func(traces.Event)) {
	sub := rec.Subscribe(last)
	buf := make([]traces.Event, 64)
	for {
		n, err := sub.Read(context.Background(), buf)
		if err != nil { // io.EOF: the run has ended
			return
		}
		for _, e := range buf[:n] {
			line := web.Summary(e)
			if u := usageOf(e); u != nil {
				if rate := pricing.Call(e.Model.Name); !rate.Free {
					if cost := rate.Text(u.PromptTokens, u.CompletionTokens); cost != "" {
						line += " · " + cost // "no price for gpt-9" when it has none
					}
				}
			}
			fmt.Fprintf(w, "%4d %s %-16s %-18s %s\n", e.Seq, e.Time.Format("15:04:05.000"), e.Agent, e.Kind, line)
			if e.Kind == traces.KindPaused && onPause != nil {
				onPause(e)
			}
		}
	}
}

// usageOf is the usage a model.finished event reports, nil for any other event.
func usageOf(e traces.Event) *traces.Usage {
	if e.Kind != traces.KindModelFinished || e.Model == nil {
		return nil
	}
	return e.Model.Usage
}
