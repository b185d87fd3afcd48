package cli

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/internal/prices"
	"github.com/baton-dev/baton/traces"
	"github.com/baton-dev/baton/web"
)

var compareCommand = &command{
	name:  "compare",
	args:  "FLOW...",
	shape: "[--input] [--out] [--prices]",
	about: "run one task under several flows, and compare them",
	define: func(fs *flag.FlagSet) runner {
		input := fs.String("input", "", "the task `TEXT` every flow runs (default: their shared default input, else each its own)")
		out := fs.String("out", "", "write each run's trace to the directory `DIR`, as FLOW.json (to open the events the table names)")
		pricesFile := pricesFlag(fs)
		return func(ctx context.Context, args []string, stdout, _ io.Writer) error {
			var names []string
			for len(args) > 0 && args[0] != "" && args[0][0] != '-' {
				names, args = append(names, args[0]), args[1:]
			}
			if err := fs.Parse(args); err != nil {
				return err
			}
			names = append(names, fs.Args()...)
			if len(names) == 0 {
				return misuse("compare", "compare needs at least one flow")
			}
			table, err := loadPrices(*pricesFile)
			if err != nil {
				return err
			}
			return compareFlows(ctx, names, *input, *out, table, stdout)
		}
	},
}

// compareFlows runs one task under each named flow, one after the other without pace, and prints
// web.NewComparison's table, each figure with the events (#seq) it comes from, the cost by p.
func compareFlows(ctx context.Context, names []string, input, out string, p prices.Table, stdout io.Writer) error {
	flows := make([]agents.Flow, len(names))
	for i, n := range names {
		f, err := lookupFlow(ctx, n)
		if err != nil {
			return errors.New(traces.ErrorMessage(err))
		}
		flows[i] = f
	}
	inputs, same := agents.TaskInputs(flows, input)
	trs := make([]traces.Trace, len(flows))
	for i, f := range flows {
		rec := traces.NewRecording(traces.Run{ID: traces.NewRunID(), Flow: f.Name, Input: inputs[i], Model: "scripted"}, f.Agents)
		agents.RunFlow(ctx, f, inputs[i], agents.Options{}, rec)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		trs[i] = rec.Snapshot()
		if out != "" {
			if err := os.MkdirAll(out, 0o755); err != nil {
				return err
			}
			if err := traces.WriteFile(filepath.Join(out, f.Name+".json"), trs[i]); err != nil {
				return err
			}
		}
	}
	if same {
		fmt.Fprintf(stdout, "task: %q\n\n", inputs[0])
	} else {
		fmt.Fprint(stdout, "these flows' default inputs differ, so each ran its own: compare with care\n\n")
	}
	printComparison(stdout, web.NewComparison(trs, web.WithPrices(p)))
	return nil
}

// printComparison writes c as a table, then the events behind each row's figures.
func printComparison(w io.Writer, c web.Comparison) {
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "mechanism\tstatus\tmodel calls\tprompt tokens\tlargest prompt\tcrossed\tby model\tby code\tactions crossed\twall\tcost\t")
	for _, m := range c.Rows {
		crossed := 0
		for _, a := range m.Actions {
			if a.Crossed && !a.Ended {
				crossed++
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d %s\t%d\t%d\t%d\t%d\t%s\t%s\t\n", m.Flow, m.Status, m.ModelCalls.N, m.PromptTokens.N,
			m.LargestPrompt.N, refs(m.LargestPrompt.Refs), m.Crossed.N, m.ByModel, m.ByCode, crossed, m.Wall.Text, cmp.Or(m.Cost.Text, "-"))
	}
	tw.Flush()
	if c.Estimated {
		fmt.Fprintf(w, "\nsome prompts are a %s: their model reported no usage\n", web.Estimator)
	}
	for _, m := range c.Rows {
		fmt.Fprintf(w, "\n%s (run %s, input %q)\n", m.Flow, m.RunID, m.Input)
		fmt.Fprintf(w, "  model calls   %s\n", refs(m.ModelCalls.Refs))
		fmt.Fprintf(w, "  crossed at    %s\n", refs(m.Crossed.Refs))
		for _, h := range m.Handoffs {
			fmt.Fprintf(w, "  handoff       %s -> %s by %s (%s) #%d\n", h.From, h.To, h.ChosenBy, h.Via, h.Seq)
		}
		for _, a := range m.Actions {
			where := "crossed"
			switch {
			case a.Ended:
				where = "ended the run"
			case !a.Crossed:
				where = "stopped at its AgentTool boundary"
			}
			fmt.Fprintf(w, "  action        %s of %s, %s #%d\n", a.Kind, a.Agent, where, a.Seq)
		}
		fmt.Fprintf(w, "  wall          %s %s\n", m.Wall.Text, refs(m.Wall.Refs))
	}
}

// refs lists event numbers as "#3 #9".
func refs(seqs []int64) string {
	parts := make([]string, len(seqs))
	for i, s := range seqs {
		parts[i] = fmt.Sprintf("#%d", s)
	}
	return strings.Join(parts, " ")
}
