package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/baton-dev/baton/internal/prices"
	"github.com/baton-dev/baton/internal/story"
	"github.com/baton-dev/baton/traces"
)

var diffCommand = &command{
	name:  "diff",
	args:  "A B",
	shape: "[--json] [--prices] [--db]",
	about: "compare two runs, turn by turn, aligned by handoff",
	define: func(fs *flag.FlagSet) runner {
		asJSON := fs.Bool("json", false, "print the comparison as JSON")
		pricesFile := pricesFlag(fs)
		db := dbFlag(fs)
		return func(_ context.Context, args []string, stdout, _ io.Writer) error {
			var runs []string
			for len(args) > 0 && args[0] != "" && args[0][0] != '-' {
				runs, args = append(runs, args[0]), args[1:]
			}
			if err := fs.Parse(args); err != nil {
				return err
			}
			runs = append(runs, fs.Args()...)
			if len(runs) != 2 {
				return misuse("diff", "diff compares two runs: trace files, or run ids of the database")
			}
			table, err := loadPrices(*pricesFile)
			if err != nil {
				return err
			}
			return diffRuns(runs[0], runs[1], *db, table, *asJSON, stdout)
		}
	},
}

// errDiffer is diff's exit status when the runs differ: 1, like diff(1).
var errDiffer = errors.New("the runs differ")

// readRun reads a trace file, or else the run of that id in the database db.
func readRun(name, db string) (traces.Trace, error) {
	if _, err := os.Stat(name); err == nil {
		return readTrace(name)
	}
	return loadStored(name, db)
}

// diffRuns prints how runs a and b differ, turn by turn, with what each turn's model calls cost
// by p, and fails when they do.
func diffRuns(a, b, db string, p prices.Table, asJSON bool, stdout io.Writer) error {
	ta, err := readRun(a, db)
	if err != nil {
		return err
	}
	tb, err := readRun(b, db)
	if err != nil {
		return err
	}
	c := story.Compare(story.Of(ta), story.Of(tb))
	c.Price(p.Run(ta.Run.Model), p.Run(tb.Run.Model))
	if asJSON {
		if err := json.NewEncoder(stdout).Encode(c); err != nil {
			return err
		}
	} else {
		printDiff(stdout, a, b, ta, tb, c)
	}
	if !c.Same() {
		return errDiffer
	}
	return nil
}

func printDiff(w io.Writer, a, b string, ta, tb traces.Trace, c story.Comparison) {
	fmt.Fprintf(w, "A: %s (%s, %s)\nB: %s (%s, %s)\n", a, ta.Run.Flow, ta.Run.Status, b, tb.Run.Flow, tb.Run.Status)
	if f := c.First; f != nil {
		fmt.Fprintf(w, "first divergence: %s%s\n  A: %s%s\n  B: %s%s\n", f.What, turnsOf(f), f.A, at(f.Seq[0]), f.B, at(f.Seq[1]))
	} else {
		fmt.Fprintln(w, "the runs took the same turns, fed, did and answered the same")
	}
	fmt.Fprintln(w, "\nturns, aligned by agent and handoff (A | B):")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, p := range c.Pairs {
		mark, key := "=", ""
		if len(p.Differences) > 0 {
			mark = "≠"
		}
		if p.A != nil {
			key = p.A.Key()
		} else {
			key = p.B.Key()
		}
		fmt.Fprintf(tw, "%s\t%s | %s\t%s\t%s\t%s\t%s\t\n", mark, num(p.Turn[0]), num(p.Turn[1]), key,
			side(p, func(t *story.Turn) string { return tokens(t.Tokens, t.Cost) }),
			side(p, func(t *story.Turn) string { return t.Took.Round(time.Millisecond).String() }),
			side(p, func(t *story.Turn) string { return strings.SplitN(t.Outcome, ":", 2)[0] }))
		for _, d := range p.Differences { // no tab: the columns stay as wide as the turns need
			fmt.Fprintf(tw, "      %s: A %s%s; B %s%s\n", d.What, d.A, at(d.Seq[0]), d.B, at(d.Seq[1]))
		}
	}
	fmt.Fprintf(tw, "\t\ttotal\t%s | %s\t\t\t\n", tokens(c.Totals[0].Tokens, c.Totals[0].Cost), tokens(c.Totals[1].Tokens, c.Totals[1].Cost))
	tw.Flush()
}

// tokens writes a count of tokens and, when known, what they cost: "812 tok $0.0012".
func tokens(n int, cost *story.Money) string {
	if cost == nil {
		return fmt.Sprintf("%d tok", n)
	}
	return fmt.Sprintf("%d tok %s", n, cost.Text)
}

func num(n int) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprint(n)
}

func side(p story.Pair, f func(*story.Turn) string) string {
	v := func(t *story.Turn) string {
		if t == nil {
			return "-"
		}
		return f(t)
	}
	return v(p.A) + " | " + v(p.B)
}

func turnsOf(d *story.Divergence) string {
	return fmt.Sprintf(", in turn %d of A, %d of B", d.Turn[0], d.Turn[1])
}

func at(seq int64) string {
	if seq == 0 {
		return ""
	}
	return fmt.Sprintf(" (#%d)", seq)
}
