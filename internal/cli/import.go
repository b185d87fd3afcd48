package cli

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/baton-dev/baton/internal/lint"
	"github.com/baton-dev/baton/internal/live"
	"github.com/baton-dev/baton/traces"
)

var importCommand = &command{
	name:  "import",
	args:  "FILE",
	shape: "[--db] [--keep] [--keep-days]",
	about: "add a trace file to the stored runs",
	define: func(fs *flag.FlagSet) runner {
		db, keep, keepDays := dbFlag(fs), keepFlag(fs), keepDaysFlag(fs)
		return func(_ context.Context, args []string, stdout, _ io.Writer) error {
			file, err := parseWithArg(fs, args, "import needs a trace file")
			if err != nil {
				return err
			}
			return importTrace(file, *db, retention{*keep, *keepDays}, stdout)
		}
	},
}

// importTrace adds a trace file to the database db, after traces.Unmarshal accepted it, under its
// own id or a fresh one when that is taken.
func importTrace(file, db string, r retention, stdout io.Writer) error {
	tr, err := readTrace(file)
	if err != nil {
		return err
	}
	store, err := openStore(db, r)
	if err != nil {
		return err
	}
	defer store.Close()
	broker := live.NewStoredBroker(0, store, nil)
	broker.CountFindings(lint.Warnings) // as a server counts what it imports
	rec, err := broker.Import(tr)
	if err != nil {
		return fmt.Errorf("import %s: %s", file, traces.ErrorMessage(err))
	}
	fmt.Fprintf(stdout, "imported run %s (%s, %s)\n", rec.ID(), tr.Run.Flow, rec.Run().Status)
	if rec.ID() != tr.Run.ID {
		fmt.Fprintf(stdout, "run id %s was taken, so this trace is run %s\n", tr.Run.ID, rec.ID())
	}
	return nil
}
