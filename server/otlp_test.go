package server_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/internal/otlp"
	"github.com/baton-dev/baton/internal/otlp/otlptest"
	"github.com/baton-dev/baton/server"
	"github.com/baton-dev/baton/traces"
)

// exportingServer opens a server whose Config.Export is an exporter to a test receiver; stop
// shuts the exporter down, which sends every span of the runs that ended.
func exportingServer(t *testing.T, cfg server.Config) (ts *testServer, rcv *otlptest.Receiver, stop func()) {
	t.Helper()
	rcv = otlptest.NewReceiver(t)
	exp, err := otlp.New(otlp.Config{Endpoint: rcv.URL})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Export = exp.Watch
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := exp.Shutdown(ctx); err != nil {
			t.Errorf("exporter shutdown: %v", err)
		}
	}
	t.Cleanup(stop) // registered first, so it runs after the server's cleanup has ended its runs
	ts = mustOpenServer(t, cfg)
	return ts, rcv, stop
}

func TestServerExportsItsRuns(t *testing.T) {
	flow, err := agents.Lookup("agenttool")
	if err != nil {
		t.Fatal(err)
	}
	ts, rcv, stop := exportingServer(t, server.Config{Flows: []agents.Flow{flow}})
	server.SetRunner(ts.Server, agents.RunFlow)
	id := ts.createRun(t, `{"flow":"agenttool","pace_ms":0}`)
	receive(t, ts.recording(t, id).Done())
	stop()

	var run, callee, call otlptest.Span
	byID := map[string]otlptest.Span{}
	for _, s := range rcv.Spans() {
		byID[s.ID] = s
		switch {
		case s.Parent == "":
			run = s
		case s.Name == "invoke_agent research_agent":
			callee = s
		}
	}
	call = byID[callee.Parent]
	if run.Attrs["baton.run.id"] != id || run.Attrs["baton.run.status"] != "completed" {
		t.Errorf("run span %+v, want run %s, completed", run, id)
	}
	if call.Name != "execute_tool research_agent" || byID[call.Parent].Name != "invoke_agent project_manager" {
		t.Errorf("research_agent's visit is under %q under %q, want the project manager's tool call", call.Name, byID[call.Parent].Name)
	}
}

// TestServerExportsAnAppsResumedRunAsOneTrace: a run an app streams in is exported as it comes,
// and its resumed part joins the same trace, under the run's first span.
func TestServerExportsAnAppsResumedRunAsOneTrace(t *testing.T) {
	ts, rcv, stop := exportingServer(t, server.Config{})
	id, _ := ts.interruptedRun(t)
	ts.startIngest(t, `{"resumes":"int-7"}`, nil, http.StatusOK)
	ts.postEvents(t, id, nil, 4, appEvents(1, traces.KindResumed, traces.KindMessage, traces.KindRunFinished)...)
	receive(t, ts.recording(t, id).Done())
	stop()

	var parts []otlptest.Span
	for _, s := range rcv.Spans() {
		if s.Attrs["baton.run.id"] == id {
			parts = append(parts, s)
		}
	}
	if len(parts) != 2 {
		t.Fatalf("%d run spans, want the run and its resumed part", len(parts))
	}
	first, resumed := parts[0], parts[1]
	if first.Attrs["baton.run.resumed"] == true {
		first, resumed = resumed, first
	}
	if first.Parent != "" || first.Attrs["baton.run.status"] != "interrupted" || first.Attrs["gen_ai.conversation.id"] != "conv-9" ||
		resumed.Parent != first.ID || resumed.TraceID != first.TraceID || resumed.Attrs["baton.run.status"] != "completed" {
		t.Errorf("run spans %+v and %+v, want an interrupted run and its completed resumed part under it", first, resumed)
	}
}
