package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/internal/otlp"
	"github.com/baton-dev/baton/traces"
)

var forkCommand = &command{
	name:  "fork",
	args:  "RUN",
	shape: "--at [--reply] [--transfer-to] [--model] [--out] [--db]",
	about: "re-run a run with one model call answered otherwise, the steps before it replayed",
	define: func(fs *flag.FlagSet) runner {
		at := fs.Int64("at", 0, "the seq `SEQ` of the model call (model.started) to change")
		reply := fs.String("reply", "", "what the call answers instead: this `TEXT`")
		to := fs.String("transfer-to", "", "what the call does instead: transfer to the agent `AGENT` (with --reply, both)")
		var models modelFlags
		fs.Var(&models, "model", "the chat model `M` after the fork point (default: the flow's scripts)")
		var o runOptions
		fs.StringVar(&o.out, "out", "", "write the fork's trace JSON to this `FILE`")
		db := dbFlag(fs)
		return func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
			name, err := parseWithArg(fs, args, "fork needs a run: a trace file, or a run id of the database")
			if err != nil {
				return err
			}
			if *at <= 0 || (*reply == "" && *to == "") {
				return misuse("fork", "fork needs --at SEQ and what the call answers instead: --reply TEXT or --transfer-to AGENT")
			}
			if len(models) > 1 {
				return errors.New("fork takes one --model")
			}
			tr, err := readRun(name, *db)
			if err != nil {
				return err
			}
			flow, err := lookupFlow(ctx, tr.Run.Flow)
			if err != nil { // an app's run: the app forks itself, given the environment
				if len(models) > 0 || o.out != "" {
					return errors.New("fork of an app's run (flow " + tr.Run.Flow + ", which Baton does not run) gives the command that makes the app's next run the fork: it takes no --model or --out (the app goes on with its own model, and streams the fork to Baton)")
				}
				return printAppFork(stdout, agents.AppFork{Run: tr.Run.ID, At: *at, Reply: *reply, TransferTo: *to}, tr)
			}
			edit := agents.Reply{Text: *reply}
			if *to != "" {
				edit.ToolCalls = []agents.ToolCall{agents.Transfer(*to)}
			}
			var live *agents.Model
			if len(models) == 1 {
				live = models[0]
			}
			model, err := agents.ForkOf(tr, agents.Fork{At: *at, Reply: edit}, live)
			if err != nil {
				return errors.New(traces.ErrorMessage(err))
			}
			if err := model.CanRun(flow); err != nil {
				return errors.New(traces.ErrorMessage(err))
			}
			o.forkOf = &traces.ForkOrigin{Run: tr.Run.ID, Seq: *at}
			return recordFlow(ctx, flow, model, &o, (*otlp.Exporter)(nil), stdout)
		}
	},
}

// printAppFork writes what makes an app's next run the fork f of tr: the app, its agents carrying
// attach.Middleware, answers its calls before the fork point from the recording that Baton (at
// $BATON_URL) keeps, and streams the fork there.
func printAppFork(stdout io.Writer, f agents.AppFork, tr traces.Trace) error {
	if err := f.CheckAgainst(tr); err != nil {
		return errors.New(traces.ErrorMessage(err))
	}
	_, err := fmt.Fprintf(stdout, "Baton does not run flow %s: run the app again, its agents carrying attach.Middleware(), with\n\n  %s=%s\n\nfor example: %s\n",
		tr.Run.Flow, agents.ForkEnv, "'"+f.String()+"'", f.Command())
	return err
}
