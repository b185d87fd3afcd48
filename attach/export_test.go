package attach

import (
	"github.com/cloudwego/eino/adk"
)

// TestEnding is the ending a sink is handed, for tests that check what an app leaves behind.
type TestEnding = ending

// RecordEachRunTo is Option recording each run into a sink of its own, made by newSink.
func RecordEachRunTo(newSink func() Sink) adk.AgentRunOption {
	return adk.WithCallbacks(runsHub(func() *Recorder { return NewRecorder(newSink(), "", nil) }))
}
