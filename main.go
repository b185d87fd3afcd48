// Command baton is a live, browser-based debugger for multi-agent flows built with Eino ADK.
//
//	baton [serve] [--addr HOST:PORT] [--token T] [--pace D]   serve the live page (default)
//	baton flows                                               list the built-in flows
//	baton run FLOW [--input TEXT] [--out FILE] [--stream]     run a flow headless, one line per event
//	baton open FILE [--addr HOST:PORT] [--token T]            serve a saved trace
//	baton export RUN [--out FILE] [--db PATH]                 write a stored run as a trace file
//	baton import FILE [--db PATH]                             add a trace file to the stored runs
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/server"
	"github.com/baton-dev/baton/traces"
	"github.com/baton-dev/baton/traces/sqlite"
	"github.com/baton-dev/baton/web"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run executes one command line and returns the process's exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cmd := "serve"
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	}
	var err error
	switch cmd {
	case "serve":
		err = serve(ctx, args, stdout, stderr)
	case "flows":
		err = listFlows(stdout)
	case "run":
		err = runFlow(ctx, args, stdout, stderr)
	case "open":
		err = openTrace(ctx, args, stdout, stderr)
	case "export":
		err = exportRun(args, stdout, stderr)
	case "import":
		err = importTrace(args, stdout, stderr)
	case "help":
		fmt.Fprintln(stdout, usage)
		return 0
	default:
		err = fmt.Errorf("unknown command %q\n%s", cmd, usage)
	}
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "baton:", err)
		return 1
	}
	return 0
}

// tokenHelp describes the --token flag of the commands that serve.
const tokenHelp = `access token, at least 32 characters such as the output of "openssl rand -hex 16" (generated when the address is not loopback and none is given)`

const usage = `usage:
  baton [serve] [--addr HOST:PORT] [--token T] [--pace D] [--db PATH] [--keep N]
                                                            serve the live page (default)
  baton flows                                               list the built-in flows
  baton run FLOW [--input TEXT] [--out FILE] [--stream]     run a flow headless
  baton open FILE [--addr HOST:PORT] [--token T]            serve a saved trace
  baton export RUN [--out FILE] [--db PATH]                 write a stored run as a trace file
  baton import FILE [--db PATH]                             add a trace file to the stored runs`

func serve(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", server.DefaultAddr, "address to listen on; any non-loopback address requires a token")
	token := fs.String("token", "", tokenHelp)
	pace := fs.Duration("pace", 600*time.Millisecond, "default delay of the scripted model before each reply")
	stream := fs.Bool("stream", false, "let agents stream their replies")
	db := dbFlag(fs)
	keep := fs.Int("keep", sqlite.DefaultKeep, "how many runs the database keeps; the oldest added that have ended go first")
	if err := fs.Parse(args); err != nil {
		return err
	}
	broker, closeStore, err := storedBroker(ctx, *db, *keep, slog.Default())
	if err != nil {
		return err
	}
	defer closeStore()
	srv, err := server.New(server.Config{Addr: *addr, Token: *token, DefaultPace: *pace, Streaming: *stream, Broker: broker})
	if err != nil {
		return err
	}
	ln, err := srv.Listen(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Baton is serving on %s\n", srv.URL()) // the real port, also for :0
	return errors.Join(srv.Serve(ctx, ln), closeStore())
}

// openTrace serves a trace file like any finished run, after traces.Unmarshal accepted it, and
// prints its page's address.
func openTrace(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("open", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", server.DefaultAddr, "address to listen on; any non-loopback address requires a token")
	token := fs.String("token", "", tokenHelp)
	var file string
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		file, args = args[0], args[1:] // the file may come before the flags
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if file == "" && fs.NArg() > 0 {
		file = fs.Arg(0)
	} else if fs.NArg() > 0 {
		return fmt.Errorf("open takes one file, not also %q\n%s", fs.Arg(0), usage)
	}
	if file == "" {
		return fmt.Errorf("open needs a trace file\n%s", usage)
	}
	tr, err := readTrace(file)
	if err != nil {
		return err
	}
	broker := traces.NewBroker(0)
	if err := broker.Add(traces.NewRecordingOf(tr)); err != nil {
		return err
	}
	srv, err := server.New(server.Config{Addr: *addr, Token: *token, Broker: broker})
	if err != nil {
		return err
	}
	ln, err := srv.Listen(ctx) // first, so that the printed address has the real port for :0
	if err != nil {
		return err
	}
	page, err := url.Parse(srv.URL())
	if err != nil {
		ln.Close()
		return err
	}
	page.Path = "/runs/" + tr.Run.ID
	fmt.Fprintf(stdout, "Baton is serving run %s (%s, %s) on %s\n", tr.Run.ID, tr.Run.Flow, tr.Run.Status, page)
	return srv.Serve(ctx, ln)
}

// readTrace reads a trace file; a file traces.Unmarshal refuses gets its message.
func readTrace(file string) (traces.Trace, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return traces.Trace{}, err
	}
	tr, err := traces.Unmarshal(data)
	if err != nil {
		return traces.Trace{}, fmt.Errorf("%s: %s", file, traces.ErrorMessage(err))
	}
	return tr, nil
}

func listFlows(stdout io.Writer) error {
	for _, f := range agents.Catalogue() {
		fmt.Fprintf(stdout, "%-12s %s\n", f.Name, f.Title)
	}
	return nil
}

// runFlow runs one flow without a server, printing each event as it is recorded.
func runFlow(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "" || args[0][0] == '-' {
		return fmt.Errorf("run needs a flow name\n%s", usage)
	}
	name := args[0]
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	input := fs.String("input", "", "the user's input (default: the flow's own)")
	out := fs.String("out", "", "write the trace JSON to this file")
	stream := fs.Bool("stream", false, "let agents stream their replies")
	pace := fs.Duration("pace", 0, "delay of the scripted model before each reply")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	flow, err := agents.Lookup(name)
	if err != nil {
		return errors.New(traces.ErrorMessage(err))
	}
	if *input == "" {
		*input = flow.DefaultInput
	}
	rec := traces.NewRecording(traces.Run{ID: traces.NewRunID(), Flow: flow.Name, Input: *input, Model: "scripted"}, flow.Agents, 0)
	printed := make(chan struct{})
	go func() {
		defer close(printed)
		printEvents(rec, stdout)
	}()
	status := agents.RunFlow(ctx, flow, *input, agents.Options{Pace: agents.NewPace(*pace), Streaming: *stream}, rec)
	<-printed
	if *out != "" {
		if err := writeTrace(*out, rec.Snapshot()); err != nil {
			return err
		}
	}
	if status != traces.StatusCompleted {
		return fmt.Errorf("run %s", status)
	}
	return nil
}

// writeTrace writes the trace next to path and renames it into place, so a reader never sees a
// half-written file.
func writeTrace(path string, t traces.Trace) error {
	data, err := traces.Marshal(t)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return fmt.Errorf("write trace: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write trace: %w", err)
	}
	return nil
}

// printEvents prints one line per event of rec until the run ends. A printer that falls behind is
// dropped by the recording like any subscriber, and picks up where it stopped.
func printEvents(rec *traces.Recording, w io.Writer) {
	var last int64
	for {
		sub := rec.Subscribe(last)
		for e := range sub.C() {
			fmt.Fprintf(w, "%4d %s %-16s %-18s %s\n", e.Seq, e.Time.Format("15:04:05.000"), e.Agent, e.Kind, web.Summary(e))
			last = e.Seq
		}
		var slow *traces.SlowError
		if !errors.As(sub.Err(), &slow) {
			return
		}
	}
}
