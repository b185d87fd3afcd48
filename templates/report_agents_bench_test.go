package templates_test

import (
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/baton-dev/baton/templates"
	"github.com/baton-dev/baton/traces"
)

// wideTree is a run of n chat-model agents below one supervisor, each started and finished once.
func wideTree(n int) traces.Trace {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	agents := []traces.Agent{{Name: "root", Kind: traces.AgentSupervisor}}
	events := []traces.Event{{Seq: 1, Time: at, Kind: traces.KindRunStarted, Run: &traces.RunMark{Status: traces.StatusRunning}}}
	for i := range n {
		name := fmt.Sprintf("a%d", i)
		agents = append(agents, traces.Agent{Name: name, Kind: traces.AgentChatModel, Parent: "root", Relation: traces.RelationSubAgent})
		events = append(events,
			traces.Event{Seq: int64(len(events) + 1), Time: at, Kind: traces.KindAgentStarted, Agent: name, AgentRun: &traces.AgentRun{Via: "run"}},
			traces.Event{Seq: int64(len(events) + 2), Time: at, Kind: traces.KindAgentFinished, Agent: name, AgentRun: &traces.AgentRun{}})
	}
	events = append(events, traces.Event{Seq: int64(len(events) + 1), Time: at, Kind: traces.KindRunFinished, Run: &traces.RunMark{Status: traces.StatusCompleted}})
	return traces.Trace{Run: traces.Run{ID: "r-wide", Status: traces.StatusCompleted, StartedAt: at}, Agents: agents, Events: events}
}

// BenchmarkReportWideTree: the report's time against the size of the agent tree, up to
// traces.MaxAgents.
//
//	go test ./templates -run '^$' -bench ReportWideTree -benchtime 1x -count 3
func BenchmarkReportWideTree(b *testing.B) {
	for _, n := range []int{500, 1000, traces.MaxAgents} {
		tr := wideTree(n)
		b.Run(fmt.Sprintf("agents=%d", n), func(b *testing.B) {
			for b.Loop() {
				if err := templates.Report(context.Background(), io.Discard, tr, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
