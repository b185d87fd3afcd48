// Package globaltest checks the global handler in a process of its own: eino's global handlers
// cannot be removed, so they would record every other test's runs too.
package globaltest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/cloudwego/eino/callbacks"
	"go.uber.org/goleak"

	"github.com/baton-dev/baton/attach"
	"github.com/baton-dev/baton/internal/attachtest"
	"github.com/baton-dev/baton/traces"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestGlobalHandlerKeepsConcurrentRunsApart registers the handler once, as apps do, and runs the
// helpdesk app several times at once: each run is a trace of its own, holding exactly its own
// events, with every fact the runner's stream and the app show.
func TestGlobalHandlerKeepsConcurrentRunsApart(t *testing.T) {
	dir := t.TempDir()
	b := attach.New(attach.Config{Dir: dir})
	callbacks.AppendGlobalHandlers(b.Handler())
	const runs = 4
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	transfers := make([][]string, runs)
	for i := range runs {
		wg.Go(func() {
			runner, err := attachtest.Helpdesk(ctx, i%2 == 1, nil)
			if err != nil {
				t.Error(err)
				return
			}
			_, transfers[i] = attachtest.Drain(t, runner.Query(ctx, attachtest.HelpdeskInput))
		})
	}
	wg.Wait()
	got := attachtest.ReadTraces(t, b, dir, runs)
	for _, tr := range got {
		attachtest.CheckHelpdesk(t, tr, transfers[0])
		starts := 0
		for _, e := range tr.Events {
			if e.Kind == traces.KindRunStarted || e.Kind == traces.KindAgentStarted && e.AgentRun.Via == "run" {
				starts++
			}
		}
		if starts != 2 {
			t.Errorf("run %s holds %d run and root starts, want its own 2:\n%s", tr.Run.ID, starts, attachtest.Story(tr))
		}
		if s := attachtest.Story(tr); s != attachtest.Story(got[0]) {
			t.Errorf("run %s tells another story than run %s:\n%s\n---\n%s", tr.Run.ID, got[0].Run.ID, s, attachtest.Story(got[0]))
		}
	}
}
