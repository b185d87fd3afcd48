package attach_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/schema"

	"github.com/baton-dev/baton/attach"
	"github.com/baton-dev/baton/internal/attachtest"
	"github.com/baton-dev/baton/traces"
)

// recordEachWay runs the app root builds on input four ways, each with a fresh app: through the
// run option and through the iterator wrapper, streaming and not. It calls check with each trace
// and the lines attachtest.Drain describes the Runner's stream by. The runner has a checkpoint
// store, as apps that interrupt have.
func recordEachWay(t *testing.T, root func(t *testing.T) adk.Agent, input string, check func(t *testing.T, tr traces.Trace, stream []string)) {
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
				runner := adk.NewRunner(ctx, adk.RunnerConfig{Agent: root(t), EnableStreaming: streaming, CheckPointStore: attachtest.NewStore()})
				var stream []string
				if wrapped {
					stream, _ = attachtest.Drain(t, b.Run(ctx, runner, []adk.Message{schema.UserMessage(input)}, adk.WithCheckPointID("cp")))
				} else {
					stream, _ = attachtest.Drain(t, runner.Query(ctx, input, adk.WithCheckPointID("cp"), b.Option()))
				}
				tr := attachtest.ReadTraces(t, b, dir, 1)[0]
				if err := traces.Validate(tr); err != nil {
					t.Fatal(err)
				}
				check(t, tr, stream)
			})
		}
	}
}
