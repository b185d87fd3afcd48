package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/baton-dev/baton/templates"
	"github.com/baton-dev/baton/traces"
	"github.com/baton-dev/baton/traces/sqlite"
)

// dbFlag adds --db to fs: the database of runs.
func dbFlag(fs *flag.FlagSet) *string {
	return fs.String("db", "", `the database of runs (default: baton/baton.db in the user's data directory; ":memory:" keeps none)`)
}

// openStore opens the database at path, or the default one when path is empty.
func openStore(path string, keep int) (*sqlite.Store, error) {
	if path == "" {
		var err error
		if path, err = sqlite.DefaultPath(); err != nil {
			return nil, err
		}
	}
	return sqlite.Open(path, keep)
}

// storedBroker opens the database that serve keeps its runs in, ends the runs a stopped process
// left running, and returns a broker that writes to it. close waits for the last events to be
// written, then closes the database; later calls return the first one's result.
func storedBroker(ctx context.Context, path string, keep int, log *slog.Logger) (b *traces.Broker, close func() error, err error) {
	store, err := openStore(path, keep)
	if err != nil {
		return nil, nil, err
	}
	if n, err := store.Recover(ctx); err != nil {
		store.Close()
		return nil, nil, err
	} else if n > 0 {
		log.Info("runs left running by a stopped Baton are now interrupted", "runs", n)
	}
	b = traces.NewStoredBroker(0, store, log)
	return b, sync.OnceValue(func() error {
		wctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return errors.Join(b.Close(wctx), store.Close())
	}), nil
}

// exportRun writes a run of the database as a trace file or, with --html, as its report; to
// stdout without --out.
func exportRun(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("export", flag.ContinueOnError)
	fs.SetOutput(stderr)
	db := dbFlag(fs)
	out := fs.String("out", "", "write the trace to this file instead of stdout")
	html := fs.Bool("html", false, "write the self-contained HTML report (opens offline, in any browser) instead of the trace JSON")
	id, err := parseWithArg(fs, args, "export needs a run id")
	if err != nil {
		return err
	}
	if *db == "" {
		if *db, err = sqlite.DefaultPath(); err != nil {
			return err
		}
	}
	if _, err := os.Stat(*db); *db != sqlite.Memory && err != nil {
		return fmt.Errorf("no database of runs at %s (choose one with --db): %w", *db, err)
	}
	store, err := openStore(*db, -1)
	if err != nil {
		return err
	}
	defer store.Close()
	tr, err := store.Load(id)
	if err != nil {
		return errors.New(traces.ErrorMessage(err))
	}
	if *html {
		return writeReport(*out, tr, stdout)
	}
	if *out != "" {
		return writeTrace(*out, tr)
	}
	data, err := traces.Marshal(tr)
	if err != nil {
		return err
	}
	_, err = stdout.Write(data)
	return err
}

// writeReport writes tr's HTML report to the file out, or to stdout when out is empty.
func writeReport(out string, tr traces.Trace, stdout io.Writer) error {
	var buf bytes.Buffer
	if err := templates.Report(context.Background(), &buf, tr); err != nil {
		return err
	}
	if out == "" {
		_, err := stdout.Write(buf.Bytes())
		return err
	}
	return writeWhole(out, buf.Bytes())
}

// importTrace adds a trace file to the database, after traces.Unmarshal accepted it, under its
// own id or a fresh one when that is taken.
func importTrace(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	fs.SetOutput(stderr)
	db := dbFlag(fs)
	keep := fs.Int("keep", sqlite.DefaultKeep, "how many runs the database keeps; the oldest added that have ended go first")
	file, err := parseWithArg(fs, args, "import needs a trace file")
	if err != nil {
		return err
	}
	tr, err := readTrace(file)
	if err != nil {
		return err
	}
	store, err := openStore(*db, *keep)
	if err != nil {
		return err
	}
	defer store.Close()
	rec, err := traces.NewStoredBroker(0, store, nil).Import(tr)
	if err != nil {
		return fmt.Errorf("import %s: %s", file, traces.ErrorMessage(err))
	}
	fmt.Fprintf(stdout, "imported run %s (%s, %s)\n", rec.ID(), tr.Run.Flow, rec.Run().Status)
	if rec.ID() != tr.Run.ID {
		fmt.Fprintf(stdout, "run id %s was taken, so this trace is run %s\n", tr.Run.ID, rec.ID())
	}
	return nil
}

// parseWithArg parses fs from args, which hold one argument, before or after the flags.
func parseWithArg(fs *flag.FlagSet, args []string, missing string) (string, error) {
	var arg string
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		arg, args = args[0], args[1:]
	}
	if err := fs.Parse(args); err != nil {
		return "", err
	}
	switch {
	case arg == "" && fs.NArg() == 1:
		arg = fs.Arg(0)
	case fs.NArg() > 0:
		return "", fmt.Errorf("%s takes one argument, not also %q\n%s", fs.Name(), fs.Arg(fs.NArg()-1), usage)
	}
	if arg == "" {
		return "", fmt.Errorf("%s\n%s", missing, usage)
	}
	return arg, nil
}
