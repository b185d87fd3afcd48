package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/baton-dev/baton/internal/atomicfile"
	"github.com/baton-dev/baton/internal/prices"
	"github.com/baton-dev/baton/internal/sqlite"
	"github.com/baton-dev/baton/templates"
	"github.com/baton-dev/baton/traces"
)

var exportCommand = &command{
	name:  "export",
	args:  "RUN",
	shape: "[--html [--prices]] [--out] [--db]",
	about: "write a stored run as a trace file (or an HTML report)",
	define: func(fs *flag.FlagSet) runner {
		html := fs.Bool("html", false, "write the self-contained HTML report (opens offline, in any browser) instead of the trace JSON")
		out := fs.String("out", "", "write the trace to the file `FILE` instead of stdout")
		db := dbFlag(fs)
		pricesFile := pricesFlag(fs)
		return func(_ context.Context, args []string, stdout, _ io.Writer) error {
			id, err := parseWithArg(fs, args, "export needs a run id")
			if err != nil {
				return err
			}
			var table prices.Table
			if *html {
				if table, err = loadPrices(*pricesFile); err != nil {
					return err
				}
			}
			return exportRun(id, *db, *out, table, *html, stdout)
		}
	},
}

// exportRun writes run id of the database db as a trace file or, with html, as its report; to
// stdout when out is empty. The report prices model calls by p.
func exportRun(id, db, out string, p prices.Table, html bool, stdout io.Writer) error {
	tr, err := loadStored(id, db)
	if err != nil {
		return err
	}
	if html {
		return writeReport(out, tr, p, stdout)
	}
	if out != "" {
		return traces.WriteFile(out, tr)
	}
	return traces.Encode(stdout, tr)
}

// writeReport writes tr's HTML report, its model calls priced by p, to the file out, or to stdout
// when out is empty.
func writeReport(out string, tr traces.Trace, p prices.Table, stdout io.Writer) error {
	write := func(w io.Writer) error { return templates.Report(context.Background(), w, tr, p) }
	if out == "" {
		return write(stdout)
	}
	return atomicfile.WriteWith(out, write)
}

// loadStored reads run id from the database db ("" for the default one), which must exist.
func loadStored(id, db string) (traces.Trace, error) {
	db, err := dbPath(db)
	if err != nil {
		return traces.Trace{}, err
	}
	if _, err := os.Stat(db); db != sqlite.Memory && !isPostgres(db) && err != nil {
		return traces.Trace{}, fmt.Errorf("no database of runs at %s (choose one with --db): %w", db, err)
	}
	store, err := openStore(db, retention{keep: -1})
	if err != nil {
		return traces.Trace{}, err
	}
	defer store.Close()
	tr, err := store.Load(id)
	if err != nil {
		return traces.Trace{}, errors.New(traces.ErrorMessage(err))
	}
	return tr, nil
}
