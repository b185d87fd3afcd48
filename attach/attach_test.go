package attach_test

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/schema"
	"go.uber.org/goleak"

	"github.com/baton-dev/baton/attach"
	"github.com/baton-dev/baton/internal/attachtest"
)

func TestMain(m *testing.M) {
	if url := os.Getenv(exitingAppEnv); url != "" {
		exitingApp(url) // this process is the app of TestAppThatExitsAtOnce
	}
	if cfg := os.Getenv(resumeAppEnv); cfg != "" {
		resumeApp(cfg) // this process is an app of the tests in resume_process_test.go
	}
	if url := os.Getenv(outputAppEnv); url != "" {
		outputApp(url) // this process is the app of TestOutputKeyReachesBatonInItsVisit
	}
	if url := os.Getenv(deskAppEnv); url != "" {
		deskMain(url) // this process is the app of the middleware tests
	}
	if url := os.Getenv(forkAppEnv); url != "" {
		forkMain(url) // this process is the app of TestForkAnApp
	}
	goleak.VerifyTestMain(m)
}

// TestIdiomsRecordTheSameRun records the helpdesk app through the option and the iterator
// wrapper, streaming and not: each trace holds the facts the runner's own stream shows, and the
// app gets the same events as without Baton.
func TestIdiomsRecordTheSameRun(t *testing.T) {
	for _, streaming := range []bool{false, true} {
		plain, stream := runHelpdesk(t, streaming, nil)
		dir := t.TempDir()
		b := attach.New(attach.Config{Dir: dir})
		withOption, _ := runHelpdesk(t, streaming, func(ctx context.Context, r *adk.Runner) *adk.AsyncIterator[*adk.AgentEvent] {
			return r.Query(ctx, attachtest.HelpdeskInput, b.Option())
		})
		wrapped, _ := runHelpdesk(t, streaming, func(ctx context.Context, r *adk.Runner) *adk.AsyncIterator[*adk.AgentEvent] {
			return b.Run(ctx, r, []adk.Message{schema.UserMessage(attachtest.HelpdeskInput)})
		})
		if !slices.Equal(plain, withOption) || !slices.Equal(plain, wrapped) {
			t.Errorf("streaming=%v: the app's events changed under Baton:\nplain   %q\noption  %q\nwrapped %q", streaming, plain, withOption, wrapped)
		}
		got := attachtest.ReadTraces(t, b, dir, 2)
		for _, tr := range got {
			attachtest.CheckHelpdesk(t, tr, stream)
		}
		if a, b := attachtest.Story(got[0]), attachtest.Story(got[1]); a != b {
			t.Errorf("streaming=%v: the option and the wrapper tell different stories:\n%s\n---\n%s", streaming, a, b)
		}
	}
}

// runHelpdesk runs a fresh helpdesk app, through start or plainly, and describes the events the
// app receives, reading streamed messages as an app would, with the transfers they announce.
func runHelpdesk(t *testing.T, streaming bool, start func(context.Context, *adk.Runner) *adk.AsyncIterator[*adk.AgentEvent]) (events, transfers []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	runner, err := attachtest.Helpdesk(ctx, streaming, nil)
	if err != nil {
		t.Fatal(err)
	}
	if start == nil {
		start = func(ctx context.Context, r *adk.Runner) *adk.AsyncIterator[*adk.AgentEvent] {
			return r.Query(ctx, attachtest.HelpdeskInput)
		}
	}
	return attachtest.Drain(t, start(ctx, runner))
}
