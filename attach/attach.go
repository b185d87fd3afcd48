// Package attach records the runs of an eino ADK app for Baton, live, with one line:
//
//	iter := runner.Query(ctx, "hello", attach.Option())
//
// or, to record every run the app makes, once at start:
//
//	callbacks.AppendGlobalHandlers(attach.Handler())
//
// Each run streams to a running `baton serve` (at $BATON_URL, by default
// http://127.0.0.1:7070, with $BATON_TOKEN when the server wants one) and is live in its page
// while the app runs. New(Config{Dir: ...}) writes each run as a trace file instead, and package
// attach/inprocess serves the page from inside the app.
//
// Nothing needs declaring: the agent tree is inferred from the run (see Config.Agents for what
// inference cannot know). Recording never blocks the app and never changes an event: when Baton
// is down or slow the app runs on, a bounded number of events wait per run, and the trace says
// how many were lost and where. Each run is delivered as it goes and finished when it ends, with
// no Close to call.
//
// An app that adds Middleware() to its ChatModelAgents' Handlers can be held at the breakpoints
// set on its runs in Baton's page, in its own process, edited and continued there.
//
// Supported API: everything this package exports, which is only what an app uses. The recording
// itself is Baton's own engine (internal/record), free to change behind it.
package attach

import (
	"cmp"
	"context"
	"log/slog"
	"os"
	"sync"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/callbacks"

	"github.com/baton-dev/baton/internal/record"
	"github.com/baton-dev/baton/traces"
)

// Defaults of Config.
const (
	DefaultURL = "http://127.0.0.1:7070"
	// DefaultBuffer is how many events of one run wait for a slow or absent Baton before later
	// ones are dropped (and counted).
	DefaultBuffer = 10_000
)

// Config says where recorded runs go. The zero value streams to $BATON_URL or DefaultURL.
type Config struct {
	// URL is a running `baton serve`; "" reads $BATON_URL, then DefaultURL.
	URL string
	// Token is the server's token, when it requires one; "" reads $BATON_TOKEN.
	Token string
	// Dir, when set, makes each run a trace file Dir/<run id>.trace.json, written when the run
	// ends (`baton open FILE` shows it), instead of streaming it. A resumed run continues the file
	// of the run it resumes, found in Dir, whichever process wrote it.
	Dir string
	// Flow names the runs in Baton's list; "" names each after its root agent.
	Flow string
	// Agents declares the agent tree, root first, when the app wants to: inference cannot know
	// agents that never run and that no transfer instruction lists, nor descriptions that no
	// instruction shows. Declared agents are shown as declared.
	Agents []traces.Agent
	// Logger receives the one warning that Baton cannot be reached (and refusals); a logger on
	// standard error when nil.
	Logger *slog.Logger
	// Buffer bounds the events of one run waiting for Baton; DefaultBuffer when 0.
	Buffer int
}

// Baton records runs to one destination. Its methods are safe for concurrent use.
type Baton struct {
	cfg  Config
	dest *record.Destination
}

// New returns a Baton for cfg.
func New(cfg Config) *Baton {
	cfg.URL = cmp.Or(cfg.URL, os.Getenv("BATON_URL"), DefaultURL)
	cfg.Token = cmp.Or(cfg.Token, os.Getenv("BATON_TOKEN"))
	cfg.Buffer = cmp.Or(max(cfg.Buffer, 0), DefaultBuffer)
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	return &Baton{cfg: cfg, dest: record.NewDestination(record.Config{
		URL: cfg.URL, Token: cfg.Token, Dir: cfg.Dir, Logger: cfg.Logger, Buffer: cfg.Buffer})}
}

// defaultBaton is the Baton of the package-level functions, configured from the environment.
var defaultBaton = sync.OnceValue(func() *Baton { return New(Config{}) })

// Option records the run it is passed to (runner.Query, Run, Resume or ResumeWithParams) with
// the Baton configured from the environment.
func Option(opts ...RunOption) adk.AgentRunOption { return defaultBaton().Option(opts...) }

// Handler returns a callback handler for callbacks.AppendGlobalHandlers that records every run
// of the process, each as a trace of its own, with the Baton configured from the environment.
func Handler() callbacks.Handler { return defaultBaton().Handler() }

// RunOption labels the runs an Option or Handler records.
type RunOption func(*runLabels)

type runLabels struct{ flow, conversation string }

// Conversation groups the run with the others of one conversation (the turns of a chat): Baton
// links them. A resumed run joins the run it resumes by itself.
func Conversation(id string) RunOption { return func(l *runLabels) { l.conversation = id } }

// Flow names the run in Baton's list, instead of its root agent's name.
func Flow(name string) RunOption { return func(l *runLabels) { l.flow = name } }

// Option returns a run option that records the run it is passed to. The same option passed to
// runner.Resume or ResumeWithParams records the resumed part, which Baton joins to the run it
// resumes, in this process or another one.
func (b *Baton) Option(opts ...RunOption) adk.AgentRunOption {
	return adk.WithCallbacks(b.hub(opts))
}

// Handler returns a callback handler that records every run it sees, for
// callbacks.AppendGlobalHandlers. Runs going on at once are kept apart.
func (b *Baton) Handler(opts ...RunOption) callbacks.Handler { return b.hub(opts) }

// Run runs runner on messages, recorded, and returns the runner's events unchanged: the
// iterator form, for apps that prefer to wrap.
func (b *Baton) Run(ctx context.Context, runner *adk.Runner, messages []adk.Message, opts ...adk.AgentRunOption) *adk.AsyncIterator[*adk.AgentEvent] {
	labels := runLabels{flow: b.cfg.Flow}
	return b.recorder(labels).Run(ctx, runner, messages, opts...)
}

func (b *Baton) hub(opts []RunOption) callbacks.Handler {
	labels := runLabels{flow: b.cfg.Flow}
	for _, o := range opts {
		o(&labels)
	}
	return record.Handler(func() *record.Recorder { return b.recorder(labels) })
}

// recorder returns the recorder of one run labelled labels.
func (b *Baton) recorder(labels runLabels) *record.Recorder {
	return record.NewRecorder(b.dest.Sink(labels.conversation), labels.flow, b.cfg.Agents)
}

// Close is optional: runs are delivered as they go and when they end, with nothing to close. It
// waits until every run recorded so far has been delivered, or ctx is done, and then stops
// sending (runs not delivered by then are lost). Use it to be sure of the last run before exit,
// or to stop retrying a Baton that will not come back. Runs that start later are not recorded.
// It returns an error when a run was not delivered whole: still being sent when ctx ended,
// refused by Baton, or with events dropped while Baton was away (the trace counts those).
func (b *Baton) Close(ctx context.Context) error { return b.dest.Close(ctx) }
