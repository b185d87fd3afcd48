package attach_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/schema"

	"github.com/baton-dev/baton/attach"
	"github.com/baton-dev/baton/attach/attachtest"
	"github.com/baton-dev/baton/traces"
)

// recordEachWay runs the app root builds on input four ways, each with a fresh app: through the
// run option and through the iterator wrapper, streaming and not. It calls check with each trace
// and a name for the way it was recorded, and returns the lines attachtest.Drain describes the
// Runner's stream by, from the last run.
func recordEachWay(t *testing.T, root func(t *testing.T) adk.Agent, input string, check func(t *testing.T, tr traces.Trace)) {
	t.Helper()
	for _, streaming := range []bool{false, true} {
		for _, wrapped := range []bool{false, true} {
			name := fmt.Sprintf("option streaming=%v", streaming)
			if wrapped {
				name = fmt.Sprintf("wrapper streaming=%v", streaming)
			}
			t.Run(name, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				dir := t.TempDir()
				b := attach.New(attach.Config{Dir: dir})
				runner := adk.NewRunner(ctx, adk.RunnerConfig{Agent: root(t), EnableStreaming: streaming})
				if wrapped {
					attachtest.Drain(t, b.Run(ctx, runner, []adk.Message{schema.UserMessage(input)}))
				} else {
					attachtest.Drain(t, runner.Query(ctx, input, b.Option()))
				}
				tr := attachtest.ReadTraces(t, b, dir, 1)[0]
				if err := traces.Validate(tr); err != nil {
					t.Fatal(err)
				}
				check(t, tr)
			})
		}
	}
}
