package cli

import (
	"context"
	"errors"
	"flag"
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
			if err != nil {
				return errors.New("fork re-runs the run's flow, and " + traces.ErrorMessage(err))
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
