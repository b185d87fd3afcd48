package record

import (
	"context"
	"maps"

	"github.com/cloudwego/eino/adk"
)

// TestEnding is the ending a sink is handed, for tests that check what an app leaves behind.
type TestEnding = ending

// RecordEachRunTo records each run it is passed to into a sink of its own, made by newSink.
func RecordEachRunTo(newSink func() Sink) adk.AgentRunOption {
	return adk.WithCallbacks(runsHub(func() *Recorder { return NewRecorder(newSink(), "", nil) }))
}

// SessionInPlace reports whether the recorder reads the session values of eino's run in ctx in
// place, under eino's lock, and returns a copy of them.
func SessionInPlace(ctx context.Context) (map[string]any, bool) {
	values, lock := sessionValues(ctx)
	if lock != nil {
		lock.Lock()
		defer lock.Unlock()
	}
	return maps.Clone(values), lock != nil
}

// ToolsNodeVisit returns the agent of the visit whose tools call (see toolsStarted) holds the
// tools node a tool running in ctx was called by, or "" when the node holds none.
func ToolsNodeVisit(ctx context.Context) string {
	c, _ := ctx.Value(callKey{}).(*call) // the tool's own call
	if c == nil {
		return ""
	}
	t, _ := c.Context.Value(callKey{}).(*call)
	if t == nil || t.scope == nil || t != &t.scope.tools {
		return ""
	}
	return t.scope.agent
}
