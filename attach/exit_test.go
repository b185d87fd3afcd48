package attach_test

import (
	"context"
	"log/slog"
	"os"
	"os/exec"
	"syscall"
	"testing"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/attach"
	"github.com/baton-dev/baton/internal/attachtest"
	"github.com/baton-dev/baton/server"
	"github.com/baton-dev/baton/traces"
)

// exitingAppEnv makes the test binary the app of TestAppThatExitsAtOnce, streaming to its value.
const exitingAppEnv = "BATON_TEST_EXITING_APP"

// exitingApp runs the helpdesk app, streaming, recorded to url and exits the moment its last
// event is read, as apps do (no Close, no deferred cleanup). Package realapps holds apps of every
// shape to the same promise.
func exitingApp(url string) {
	ctx := context.Background()
	runner, err := attachtest.Helpdesk(ctx, true, nil)
	if err != nil {
		os.Exit(2)
	}
	events := runner.Query(ctx, attachtest.HelpdeskInput, attach.New(attach.Config{URL: url}).Option())
	for {
		ev, ok := events.Next()
		if ok && ev.Output != nil && ev.Output.MessageOutput != nil {
			ev.Output.MessageOutput.GetMessage() // as an app reads each streamed reply
		}
		if !ok {
			// Not os.Exit: in a -race binary it first runs the race detector's shutdown, about a
			// second in which Baton's goroutines go on sending.
			syscall.Exit(0)
		}
	}
}

// TestAppThatExitsAtOnce runs an app in a process of its own that exits right after its last
// event: everything its run did reaches the server, and the run ends completed, not interrupted.
func TestAppThatExitsAtOnce(t *testing.T) {
	ln := listen(t)
	s, err := server.New(server.Config{Addr: ln.Addr().String(), Flows: []agents.Flow{},
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	defer func() { cancel(); <-done }()
	base := "http://" + ln.Addr().String()

	app := exec.Command(os.Args[0], "-test.run=^$")
	app.Env = append(os.Environ(), exitingAppEnv+"="+base)
	if out, err := app.CombinedOutput(); err != nil {
		t.Fatalf("app: %v\n%s", err, out)
	}
	tr := trace(t, base, awaitRun(t, base))
	if tr.Run.Status != traces.StatusCompleted {
		t.Fatalf("the run ended %s (%s), want completed", tr.Run.Status, tr.Run.Error)
	}
	final := ""
	for _, e := range tr.Events {
		if e.Kind == traces.KindModelFinished && e.Agent == "triage" && e.Model.Output != nil {
			final = e.Model.Output.Content
		}
	}
	if final != "Alice was charged twice by mistake; the duplicate $12 will be refunded." {
		t.Errorf("the run's last model reply is %q: the end of the run did not arrive", final)
	}
}
