package otlp_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/internal/agentstest"
	"github.com/baton-dev/baton/internal/otlp"
	"github.com/baton-dev/baton/traces"
)

// sink is a collector that takes every export and throws it away: the benchmarks measure Baton's
// side, not a collector's decoding.
func sink(b *testing.B) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
	}))
	b.Cleanup(srv.Close)
	return srv.URL
}

// BenchmarkExport runs a long scripted run (about 3,300 events) in turn plain and with an
// exporter watching it, so machine load hits both alike, and reports the ratio of their times
// (what exporting costs the run itself). It then exports that run's finished trace on its own and
// reports what turning an event into spans and sending them costs (ns/event-exported): the
// watcher's work, done beside the run. ns/op is one round of all three. At zero pace the run
// and the watcher compete for the CPU, the worst case; a model taking 2 ms a reply, far faster
// than any LLM, shows what remains as soon as the model does any work.
func BenchmarkExport(b *testing.B) {
	for _, pace := range []time.Duration{0, 2 * time.Millisecond} {
		b.Run("pace="+pace.String(), func(b *testing.B) { benchmarkExport(b, agents.NewPace(pace)) })
	}
}

func benchmarkExport(b *testing.B, pace *agents.Pace) {
	url := sink(b)
	flow := agentstest.Long(1000)
	newExporter := func() *otlp.Exporter {
		exp, err := otlp.New(otlp.Config{Endpoint: url})
		if err != nil {
			b.Fatal(err)
		}
		return exp
	}
	run := func(exp *otlp.Exporter) *traces.Recording {
		rec := traces.NewRecording(traces.Run{ID: traces.NewRunID(), Flow: flow.Name, Model: "scripted"}, flow.Agents)
		if exp != nil {
			exp.Watch(rec)
		}
		if st := agents.RunFlow(context.Background(), flow, flow.DefaultInput, agents.Options{Pace: pace}, rec); st != traces.StatusCompleted {
			b.Fatalf("run %s", st)
		}
		return rec
	}
	stop := func(exp *otlp.Exporter) {
		if err := exp.Shutdown(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	var plain, watched, exported time.Duration
	var events int
	for b.Loop() {
		start := time.Now()
		rec := run(nil)
		plain += time.Since(start)

		exp := newExporter()
		start = time.Now()
		run(exp)
		watched += time.Since(start)
		stop(exp)

		tr := rec.Snapshot()
		events += len(tr.Events)
		exp = newExporter()
		start = time.Now()
		exp.Watch(traces.NewRecordingOf(tr))
		stop(exp) // returns once every span is sent
		exported += time.Since(start)
	}
	b.ReportMetric(float64(events)/float64(b.N), "events/run")
	b.ReportMetric(float64(watched)/float64(plain), "exported/plain")
	b.ReportMetric(float64(exported)/float64(events), "ns/event-exported")
}
