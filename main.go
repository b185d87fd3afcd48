// Command baton is a live, browser-based debugger for multi-agent flows built with Eino ADK.
//
//	baton [serve] [--addr HOST:PORT] [--token T] [--pace D] [--stream] [--model M]... [--db PATH] [--keep N]
//	                                                                      serve the live page (default)
//	baton flows                                                           list the built-in flows
//	baton run FLOW [--input TEXT] [--out FILE] [--stream] [--model M] [--approve | --reject REASON]
//	                                                                      run a flow headless, one line per event
//	baton open FILE [--addr HOST:PORT] [--token T]                        serve a saved trace
//	baton compare FLOW... [--input TEXT] [--out DIR]                      run one task under several flows, compare
//	baton export RUN [--html] [--out FILE] [--db PATH]                    write a stored run as a trace file (or an HTML report)
//	baton import FILE [--db PATH]                                         add a trace file to the stored runs
//
// A model M is scripted, openai:NAME (OPENAI_API_KEY, OPENAI_BASE_URL) or replay:TRACE_FILE.
// serve and run also take --otlp-endpoint URL [--otlp-content]: send each run to an
// OpenTelemetry collector.
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
	"github.com/baton-dev/baton/traces/otlp"
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
	case "compare":
		err = compareFlows(ctx, args, stdout, stderr)
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
  baton [serve] [--addr HOST:PORT] [--token T] [--pace D] [--stream] [--model M]... [--db PATH] [--keep N]
                                                                        serve the live page (default)
  baton flows                                                           list the built-in flows
  baton run FLOW [--input TEXT] [--out FILE] [--stream] [--model M] [--approve | --reject REASON]
                                                                        run a flow headless
  baton open FILE [--addr HOST:PORT] [--token T]                        serve a saved trace
  baton compare FLOW... [--input TEXT] [--out DIR]                      run one task under several flows, compare
  baton export RUN [--html] [--out FILE] [--db PATH]                    write a stored run as a trace file (or an HTML report)
  baton import FILE [--db PATH]                                         add a trace file to the stored runs
serve and run also take --otlp-endpoint URL [--otlp-content].
A model M is scripted (the default), openai:NAME (reads OPENAI_API_KEY and OPENAI_BASE_URL)
or replay:TRACE_FILE (answers with the model replies recorded in a trace).`

// modelHelp describes the --model flag.
const modelHelp = "chat model: scripted, openai:NAME (with OPENAI_API_KEY, OPENAI_BASE_URL) or replay:TRACE_FILE"

// modelFlags collects the --model flags of serve, which may repeat.
type modelFlags []*agents.Model

func (f *modelFlags) String() string { return fmt.Sprint(len(*f)) }

func (f *modelFlags) Set(spec string) error {
	m, err := agents.ParseModel(spec, agents.ProviderEnvFromOS())
	if err != nil {
		return errors.New(traces.ErrorMessage(err))
	}
	*f = append(*f, m)
	return nil
}

func serve(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", server.DefaultAddr, "address to listen on; any non-loopback address requires a token")
	token := fs.String("token", "", tokenHelp)
	pace := fs.Duration("pace", 600*time.Millisecond, "default delay of the scripted model before each reply")
	stream := fs.Bool("stream", false, "let agents stream their replies")
	otlpEndpoint, otlpContent := otlpFlags(fs)
	var models modelFlags
	fs.Var(&models, "model", modelHelp+"; repeat it to offer several (the first is the default)")
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
	exp, err := startExport(*otlpEndpoint, *otlpContent, stderr)
	if err != nil {
		return err
	}
	defer stopExport(exp, stderr) // after Serve, which has ended every run
	var export func(*traces.Recording)
	if exp != nil {
		export = exp.Watch
	}
	srv, err := server.New(server.Config{Addr: *addr, Token: *token, DefaultPace: *pace, Streaming: *stream, Models: models, Export: export, Broker: broker})
	if err != nil {
		return err
	}
	for _, m := range models {
		if err := m.Ready(); err != nil {
			fmt.Fprintln(stderr, "baton:", traces.ErrorMessage(err))
		}
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
	otlpEndpoint, otlpContent := otlpFlags(fs)
	approve := fs.Bool("approve", false, "approve what the run asks when it stops for approval, and resume it")
	reject := fs.String("reject", "", "reject what the run asks when it stops for approval, for this reason, and resume it")
	var models modelFlags
	fs.Var(&models, "model", modelHelp)
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if *approve && *reject != "" {
		return errors.New("run: --approve and --reject exclude each other: give one")
	}
	flow, err := agents.Lookup(name)
	if err != nil {
		return errors.New(traces.ErrorMessage(err))
	}
	model := agents.Scripted()
	switch len(models) {
	case 0:
	case 1:
		model = models[0]
	default:
		return errors.New("run takes one --model")
	}
	if err := model.Ready(); err != nil {
		return errors.New(traces.ErrorMessage(err))
	}
	if *input == "" {
		*input = flow.DefaultInput
		if replayed, recorded, ok := model.Replays(); ok && replayed == flow.Name {
			*input = recorded // the input the recorded replies answer
		}
	}
	var decide *agents.Decision
	if *approve || *reject != "" {
		decide = &agents.Decision{Approve: *approve, Comment: *reject}
	}
	opts := agents.Options{Pace: agents.NewPace(*pace), Streaming: *stream, Model: model}
	return exporting(*otlpEndpoint, *otlpContent, stderr, func(exp *otlp.Exporter) error {
		return recordFlow(ctx, flow, *input, opts, decide, *out, exp, stdout)
	})
}

// recordFlow runs flow on input, printing each event as it is recorded, and exports the run when
// exp is not nil. A run that stops for approval is resumed with decide, each time it stops, unless
// decide is nil. The trace goes to the file out unless out is empty. It fails when the run did not
// complete.
func recordFlow(ctx context.Context, flow agents.Flow, input string, opts agents.Options, decide *agents.Decision, out string, exp *otlp.Exporter, stdout io.Writer) error {
	rec := traces.NewRecording(traces.Run{ID: traces.NewRunID(), Flow: flow.Name, Input: input, Model: opts.Model.Name()}, flow.Agents)
	if exp != nil {
		exp.Watch(rec)
	}
	printed := make(chan struct{})
	go func() {
		defer close(printed)
		printEvents(rec, stdout, 0)
	}()
	var paused *agents.Pause // set by Paused, in RunFlow's and Resume's goroutine
	opts.Paused = func(p *agents.Pause) { paused = p }
	status := agents.RunFlow(ctx, flow, input, opts, rec)
	for paused != nil && decide != nil {
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
			printEvents(rec, stdout, after)
		}(printed, int64(len(rec.Snapshot().Events)))
		p := paused
		paused = nil
		status = p.Resume(ctx, *decide, rec)
	}
	<-printed
	if paused != nil {
		fmt.Fprintf(stdout, "The run waits for a decision: %s\nRun it again with --approve, or --reject REASON.\n", paused.Interrupt.Info)
	}
	if out != "" {
		if err := writeTrace(out, rec.Snapshot()); err != nil {
			return err
		}
	}
	if status != traces.StatusCompleted {
		return fmt.Errorf("run %s", status)
	}
	return nil
}

// writeTrace writes the trace to path; a reader never sees a half-written file.
func writeTrace(path string, t traces.Trace) error {
	data, err := traces.Marshal(t)
	if err != nil {
		return err
	}
	return writeWhole(path, data)
}

// writeWhole writes data next to path and renames it into place.
func writeWhole(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// printEvents prints one line per event of rec after seq last until the run ends. It reads them
// from the recording at its own pace: the run never waits for it.
func printEvents(rec *traces.Recording, w io.Writer, last int64) {
	sub := rec.Subscribe(last)
	buf := make([]traces.Event, 64)
	for {
		n, err := sub.Read(context.Background(), buf)
		if err != nil { // io.EOF: the run has ended
			return
		}
		for _, e := range buf[:n] {
			fmt.Fprintf(w, "%4d %s %-16s %-18s %s\n", e.Seq, e.Time.Format("15:04:05.000"), e.Agent, e.Kind, web.Summary(e))
		}
	}
}

// otlpFlags adds the OpenTelemetry export flags of serve and run to fs.
func otlpFlags(fs *flag.FlagSet) (endpoint *string, content *bool) {
	endpoint = fs.String("otlp-endpoint", "", "send each run as OpenTelemetry spans to this OTLP/HTTP collector, such as http://localhost:4318")
	content = fs.Bool("otlp-content", false, "with --otlp-endpoint: include what messages, tools and the session said (it may hold user data)")
	return endpoint, content
}

// exportGrace bounds how long a command waits, as it exits, for the last spans to be sent.
const exportGrace = 5 * time.Second

// startExport returns an exporter to endpoint that logs its failures on stderr, or nil when
// endpoint is empty.
func startExport(endpoint string, content bool, stderr io.Writer) (*otlp.Exporter, error) {
	if endpoint == "" {
		return nil, nil
	}
	exp, err := otlp.New(otlp.Config{Endpoint: endpoint, Content: content, Logger: slog.New(slog.NewTextHandler(stderr, nil))})
	if err != nil {
		return nil, fmt.Errorf("--otlp-endpoint: %s", traces.ErrorMessage(err))
	}
	return exp, nil
}

// exporting runs fn with an exporter to endpoint (nil when endpoint is empty), then sends the
// spans not sent yet however fn returns: the exporter lives exactly as long as fn, so that no
// return of fn, early or late, loses the last spans of a run.
func exporting(endpoint string, content bool, stderr io.Writer, fn func(exp *otlp.Exporter) error) error {
	exp, err := startExport(endpoint, content, stderr)
	if err != nil {
		return err
	}
	defer stopExport(exp, stderr)
	return fn(exp)
}

// stopExport sends the spans not sent yet, for at most exportGrace. Exporting never fails a
// command: what went wrong is only said on stderr.
func stopExport(e *otlp.Exporter, stderr io.Writer) {
	if e == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), exportGrace)
	defer cancel()
	if err := e.Shutdown(ctx); err != nil {
		fmt.Fprintln(stderr, "baton: OpenTelemetry export:", err)
	}
}
