package agents_test

import (
	"context"
	"flag"
	"math"
	"runtime"
	"runtime/metrics"
	"slices"
	"testing"
	"time"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/callbacks"
	"github.com/cloudwego/eino/components"
	"github.com/cloudwego/eino/schema"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/internal/agentstest"
	"github.com/baton-dev/baton/internal/record"
	"github.com/baton-dev/baton/traces"
)

// BenchmarkRecorderCost measures what recording a run costs the app per recorded event, and how
// that changes with the run's length: the figures the recorder's goals are set in. Each round
// runs the same scripted run twice, with eino's no-op callback handler and recorded into a live
// Recording, in alternating order, and reports the recorded run's extra CPU time (the process's,
// the collector's included), wall time, allocations and collector CPU time per event (min /
// median / max over the rounds). Only two variants take turns, so that a round is short and the
// machine's load moves both alike.
//
// Runs of about 1k, 3k and 100k events (agentstest.LongTurns; the 100k run feeds its model the
// whole history, 300 tool calls a reply) at zero pace, the worst case for the app: a collector
// whose work grew with the events recorded would show as a cost per event growing with the run.
// streamed=3k is the 3k run with a streaming Runner. At pace=2ms (the 3k run, its model taking
// 2 ms a reply) it reports the run's wall time recorded against the same run without any handler
// and against eino's no-op handler, as ratios and as differences in ms a run (see
// benchmarkRecorderPaced).
//
//	go test ./agents -run '^$' -bench BenchmarkRecorderCost -benchtime 20x
//
// The paced differences need more rounds than that: other processes on a shared machine's cores
// stretch a run's own work (30–40 ms of CPU time beside 100 waits of 2 ms) by as much as ±20 ms,
// and 1 ms is 0.4% of a run. The benchmark reports how far each median may be off ("-medci"). On
// 2 shared cores at a load average of 2–7, 150 rounds (three runs each, 2 minutes) gave ±1.7 to
// ±2.1 ms and 60 rounds ±2.4 to ±4.3 ms; 1 ms resolves on a quieter machine or with more rounds:
//
//	go test ./agents -run '^$' -bench 'BenchmarkRecorderCost/pace=2ms' -benchtime 150x
func BenchmarkRecorderCost(b *testing.B) {
	for _, run := range costRuns() {
		b.Run(run.name, func(b *testing.B) { benchmarkRecorderCost(b, run.flow, false) })
	}
	// The 3k run with a streaming Runner (see BenchmarkRecorderAlone's streamed=3k).
	b.Run("streamed=3k", func(b *testing.B) { benchmarkRecorderCost(b, costRuns()[1].flow, true) })
	b.Run("pace=2ms", func(b *testing.B) {
		benchmarkRecorderPaced(b, agentstest.Long(longTicks), agents.NewPace(2*time.Millisecond))
	})
}

// costRuns are the runs BenchmarkRecorderCost measures.
func costRuns() []struct {
	name string
	flow agents.Flow
} {
	return []struct {
		name string
		flow agents.Flow
	}{
		{"events=1k", agentstest.LongTurns(330, 30)},
		{"events=3k", agentstest.Long(longTicks)},
		{"events=100k", agentstest.LongTurns(33000, 300)},
	}
}

// BenchmarkRecorderAlone runs BenchmarkRecorderCost's runs one way only, recorded or with the
// no-op handler, each iteration a run at zero pace: for CPU profiles of one side, and for counting
// instructions, which the load of a shared machine does not move (the recorder's own cost is the
// difference of two counts, per event; 3,307 events a run at events=3k):
//
//	go test -c -o /tmp/agents.test ./agents
//	GOGC=off GODEBUG=asyncpreemptoff=1 GOMAXPROCS=1 valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
//	  /tmp/agents.test -test.run '^$' -test.bench 'BenchmarkRecorderAlone/events=3k/recorded$' -test.benchtime 10x
//
// and the same with /noop$ (streamed=3k/ for that run with a streaming Runner; /attached$ for
// either recorded as an attached app's, over the same /noop$; streamed=3k/noop-streams$ tells
// eino's copying of the models' streamed replies, which any handler reading them pays, from the
// recorder's own part). It turns the memory profiler off (unless -test.memprofile asks for it):
// each of its samples walks a stack, tens of thousands of instructions, at allocations that fall
// differently from process to process, which moved the counts by ±60 an event.
//
// GOGC=off counts the recorder's own work alone, steadily, for comparing two builds. It is not
// what the recorder costs in time: leave GOGC unset to count the collector's work too, and add
// --cache-sim=yes to count cache misses. No count foretells the time: the recorder's instructions
// take 2.5–3 times as long as eino's, and halving its instruction-cache misses (~120 an event)
// did not move it. Time it with BenchmarkRecorderCost or BenchmarkRecorderFloor at GOMAXPROCS=1
// (see docs/performance.md).
func BenchmarkRecorderAlone(b *testing.B) {
	if flagUnset("test.memprofile") {
		defer func(rate int) { runtime.MemProfileRate = rate }(runtime.MemProfileRate)
		runtime.MemProfileRate = 0
	}
	noop := noopHandler()
	runs := costRuns()
	for _, run := range runs {
		b.Run(run.name+"/recorded", func(b *testing.B) {
			for b.Loop() {
				drainLong(b, run.flow, nil, traces.NewRecording(traces.Run{ID: "r-bench", Flow: run.flow.Name}, run.flow.Agents))
			}
		})
		b.Run(run.name+"/noop", func(b *testing.B) {
			for b.Loop() {
				drainLong(b, run.flow, nil, nil, adk.WithCallbacks(noop))
			}
		})
	}
	// The 3k run again with a streaming Runner: models' replies and the agent's output streamed,
	// which eino copies for every handler that asks for their ends.
	streamed := runs[1]
	b.Run("streamed=3k/recorded", func(b *testing.B) {
		for b.Loop() {
			drainRun(b, streamed.flow, nil, true, traces.NewRecording(traces.Run{ID: "r-bench", Flow: streamed.flow.Name}, streamed.flow.Agents))
		}
	})
	b.Run("streamed=3k/noop", func(b *testing.B) {
		for b.Loop() {
			drainRun(b, streamed.flow, nil, true, nil, adk.WithCallbacks(noop))
		}
	})
	// noop-streams is the no-op handler that also reads each model's streamed reply to its end:
	// over /noop, what eino's copies of a streamed reply cost any handler that reads it (the
	// recorder's share of streamed=3k/attached that is eino's); /attached over it, the recorder's
	// own.
	streamReader := newNoopStreams()
	b.Run("streamed=3k/noop-streams", func(b *testing.B) {
		for b.Loop() {
			drainRun(b, streamed.flow, nil, true, nil, adk.WithCallbacks(streamReader))
		}
	})
	// The 3k runs again recorded as an attached app's are (attach.Option, attach.Handler): from
	// eino's callbacks alone, by a recorder made as the root starts, with no relay of the Runner's
	// events, which Recorder.Run (Baton's own runs, Baton.Run) adds to see the stream's end.
	for _, streaming := range []bool{false, true} {
		name := "events=3k/attached"
		if streaming {
			name = "streamed=3k/attached"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				drainAttached(b, streamed.flow, streaming)
			}
		})
	}
	// The flows stay reachable to the end, the 100k run's script among them: the collection the
	// testing package makes before each sub-benchmark then marks the same heap in every one (the
	// counts compared come from different processes), where the last ones, run once runs was
	// dead, marked ~270 instructions an event less.
	runtime.KeepAlive(runs)
}

// drainAttached runs flow as drainRun does, recorded into a Recording the way an attached app is
// (see record.Handler), and waits until the recording has ended, completed.
func drainAttached(b *testing.B, flow agents.Flow, streaming bool) {
	rec := traces.NewRecording(traces.Run{ID: "r-bench", Flow: flow.Name}, flow.Agents)
	attached := record.Handler(func() *record.Recorder { return record.NewRecorder(rec, flow.Name, flow.Agents) })
	drainRun(b, flow, nil, streaming, nil, adk.WithCallbacks(attached))
	<-rec.Done()
	if run := rec.Run(); run.Status != traces.StatusCompleted {
		b.Fatalf("the attached run ended %s (%s)", run.Status, run.Error)
	}
}

// flagUnset reports whether the test binary's flag name was left empty.
func flagUnset(name string) bool {
	f := flag.Lookup(name)
	return f == nil || f.Value.String() == ""
}

// noopHandler is eino's cheapest observer: a handler whose callbacks do nothing.
func noopHandler() callbacks.Handler {
	return callbacks.NewHandlerBuilder().OnStartFn(noopStart).OnEndFn(noopEnd).Build()
}

func noopStart(ctx context.Context, _ *callbacks.RunInfo, _ callbacks.CallbackInput) context.Context {
	return ctx
}

func noopEnd(ctx context.Context, _ *callbacks.RunInfo, _ callbacks.CallbackOutput) context.Context {
	return ctx
}

// noopStreams is noopHandler that also asks for a chat model's streamed reply, and reads each to
// its end and closes it, on the goroutine eino calls it on (the scripted model's stream is whole
// when handed over). It asks for no other stream. Its other callbacks go through functions as
// noopHandler's do, so that the difference of the two runs is eino's copying and reading of the
// replies alone.
type noopStreams struct {
	unasked
	start func(context.Context, *callbacks.RunInfo, callbacks.CallbackInput) context.Context
	end   func(context.Context, *callbacks.RunInfo, callbacks.CallbackOutput) context.Context
}

func newNoopStreams() *noopStreams { return &noopStreams{start: noopStart, end: noopEnd} }

func (*noopStreams) Needed(_ context.Context, info *callbacks.RunInfo, timing callbacks.CallbackTiming) bool {
	switch timing {
	case callbacks.TimingOnStart, callbacks.TimingOnEnd:
		return true
	case callbacks.TimingOnEndWithStreamOutput:
		return info.Component == components.ComponentOfChatModel
	}
	return false
}

func (h *noopStreams) OnStart(ctx context.Context, info *callbacks.RunInfo, in callbacks.CallbackInput) context.Context {
	return h.start(ctx, info, in)
}

func (h *noopStreams) OnEnd(ctx context.Context, info *callbacks.RunInfo, out callbacks.CallbackOutput) context.Context {
	return h.end(ctx, info, out)
}

// unasked is what a benchmark's handler does with the callbacks it has no use for: an error is
// let pass, a streamed input closed unread.
type unasked struct{}

func (unasked) OnError(ctx context.Context, _ *callbacks.RunInfo, _ error) context.Context {
	return ctx
}

func (unasked) OnStartWithStreamInput(ctx context.Context, _ *callbacks.RunInfo, in *schema.StreamReader[callbacks.CallbackInput]) context.Context {
	in.Close()
	return ctx
}

func (*noopStreams) OnEndWithStreamOutput(ctx context.Context, _ *callbacks.RunInfo, out *schema.StreamReader[callbacks.CallbackOutput]) context.Context {
	defer out.Close()
	for {
		if _, err := out.Recv(); err != nil {
			return ctx
		}
	}
}

// runCost is what some runs cost the process.
type runCost struct {
	wall   time.Duration
	cpu    float64 // seconds, the whole process's
	gcCPU  float64 // seconds, the collector's share of cpu as the runtime estimates it
	allocs uint64
	bytes  uint64
}

var (
	gcCPU    = []metrics.Sample{{Name: "/cpu/classes/gc/total:cpu-seconds"}}
	memStats runtime.MemStats
)

// measureRuns collects the garbage, then runs f reps times and returns what that cost. The
// collector's CPU time is counted when a cycle ends: reps should make f run for many cycles.
func measureRuns(reps int, f func()) runCost {
	runtime.GC()
	runtime.ReadMemStats(&memStats)
	metrics.Read(gcCPU)
	mallocs, bytes, gc := memStats.Mallocs, memStats.TotalAlloc, gcCPU[0].Value.Float64()
	start, cpu := time.Now(), cpuTime()
	for range reps {
		f()
	}
	wall, cpu := time.Since(start), cpuTime()-cpu
	runtime.ReadMemStats(&memStats)
	metrics.Read(gcCPU)
	return runCost{wall: wall, cpu: cpu, gcCPU: gcCPU[0].Value.Float64() - gc, allocs: memStats.Mallocs - mallocs,
		bytes: memStats.TotalAlloc - bytes}
}

var heapSamples = []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/scan/heap:bytes"}}

// heapKept collects the garbage and returns the live heap and the part of it that holds pointers
// (the bytes of objects the collector scans).
func heapKept() (live, scan int64) {
	runtime.GC()
	runtime.GC() // and what sync.Pools held until the first
	metrics.Read(heapSamples)
	return int64(heapSamples[0].Value.Uint64()), int64(heapSamples[1].Value.Uint64())
}

// costEvents is how many events each side of a round records, at least: enough for several
// collections.
const costEvents = 30000

func benchmarkRecorderCost(b *testing.B, flow agents.Flow, streaming bool) {
	pace, noop := agents.NewPace(0), noopHandler()
	rec := traces.NewRecording(traces.Run{ID: "r-bench", Flow: flow.Name}, flow.Agents)
	drainRun(b, flow, pace, streaming, rec)
	events := len(rec.Snapshot().Events)
	// What the recording keeps that each collection marks: the heap it keeps reachable, and of
	// that the part the collector scans for pointers.
	kept, scanned := heapKept()
	runtime.KeepAlive(rec)
	rec = nil
	free, freeScanned := heapKept()
	reps := max(1, costEvents/events)
	n := float64(events * reps)
	var cpu, wall, allocs, bytes, gc, noopGC []float64
	for i := 0; b.Loop(); i++ {
		var observed, recorded runCost
		noopRuns := func() {
			observed = measureRuns(reps, func() { drainRun(b, flow, pace, streaming, nil, adk.WithCallbacks(noop)) })
		}
		recordRuns := func() {
			recorded = measureRuns(reps, func() {
				drainRun(b, flow, pace, streaming, traces.NewRecording(traces.Run{ID: "r-bench", Flow: flow.Name}, flow.Agents))
			})
		}
		if i%2 == 0 {
			noopRuns()
			recordRuns()
		} else {
			recordRuns()
			noopRuns()
		}
		cpu = append(cpu, (recorded.cpu-observed.cpu)*1e9/n)
		wall = append(wall, float64(recorded.wall-observed.wall)/n)
		allocs = append(allocs, (float64(recorded.allocs)-float64(observed.allocs))/n)
		bytes = append(bytes, (float64(recorded.bytes)-float64(observed.bytes))/n)
		gc = append(gc, recorded.gcCPU*1e9/n)
		noopGC = append(noopGC, observed.gcCPU*1e9/n)
	}
	reportSpread(b, "cpu-ns/event-over-noop", cpu)
	reportSpread(b, "ns/event-over-noop", wall)
	reportSpread(b, "allocs/event-over-noop", allocs)
	// Bytes allocated: what makes the collector run more often.
	reportSpread(b, "B/event-over-noop", bytes)
	// The collector's CPU time per event in each run: what recording adds is the difference.
	reportSpread(b, "gc-cpu-ns/event-recorded", gc)
	reportSpread(b, "gc-cpu-ns/event-noop", noopGC)
	b.ReportMetric(float64(events), "events")
	b.ReportMetric(float64(kept-free)/float64(events), "kept-B/event")
	b.ReportMetric(float64(scanned-freeScanned)/float64(events), "kept-scan-B/event")
}

// benchmarkRecorderPaced runs flow plain, with eino's no-op handler (what any observer costs
// eino) and recorded, the three in turn, in an order that rotates round by round. A ratio of two
// runs swings by several percent with the machine's load, which hides a cost of 1 ms (0.4%); the
// difference of two runs of one round does not move with load that lasts longer than the round.
// It reports, for each pair, the differences in ms a run (min / median / max over the rounds) and
// the half-width of a 95% interval of their median ("-medci", from the ranks of the sorted
// differences, assuming nothing of their distribution): a difference resolves when its median is
// further from another than the two half-widths together. The ratios are medians of the rounds'.
func benchmarkRecorderPaced(b *testing.B, flow agents.Flow, pace *agents.Pace) {
	noop := noopHandler()
	var perPlain, noopPerPlain, perNoop, overNoop, noopOverPlain, overPlain, cpuOverNoop []float64
	for i := 0; b.Loop(); i++ {
		var took [3]runCost // plain, noop, recorded
		runs := [3]func(){
			func() { drainLong(b, flow, pace, nil) },
			func() { drainLong(b, flow, pace, nil, adk.WithCallbacks(noop)) },
			func() {
				drainLong(b, flow, pace, traces.NewRecording(traces.Run{ID: "r-bench", Flow: flow.Name}, flow.Agents))
			},
		}
		for k := range 3 {
			j := (i + k) % 3
			took[j] = measureRuns(1, runs[j])
		}
		plain, observed, recorded := took[0].wall, took[1].wall, took[2].wall
		perPlain = append(perPlain, float64(recorded)/float64(plain))
		noopPerPlain = append(noopPerPlain, float64(observed)/float64(plain))
		perNoop = append(perNoop, float64(recorded)/float64(observed))
		overNoop = append(overNoop, float64(recorded-observed)/1e6)
		noopOverPlain = append(noopOverPlain, float64(observed-plain)/1e6)
		overPlain = append(overPlain, float64(recorded-plain)/1e6)
		cpuOverNoop = append(cpuOverNoop, (took[2].cpu-took[1].cpu)*1e3)
	}
	b.ReportMetric(median(perPlain), "recorded/plain")
	b.ReportMetric(median(noopPerPlain), "noop/plain")
	b.ReportMetric(median(perNoop), "recorded/noop")
	reportDifference(b, "ms/run-recorded-over-noop", overNoop)
	reportDifference(b, "ms/run-noop-over-plain", noopOverPlain)
	reportDifference(b, "ms/run-recorded-over-plain", overPlain)
	// The process's CPU time, both cores': the recorder's work and its goroutines' wake-ups, of
	// which the wall time shows only what lies on the run's critical path.
	reportDifference(b, "cpu-ms/run-recorded-over-noop", cpuOverNoop)
}

// reportDifference is reportSpread with the half-width of a 95% confidence interval of the
// median: between the sorted values of ranks n/2 ∓ 0.98√n (the binomial's normal approximation).
func reportDifference(b *testing.B, unit string, values []float64) {
	reportSpread(b, unit, values)
	s := slices.Sorted(slices.Values(values))
	n := float64(len(s))
	lo := max(0, int(math.Floor(n/2-0.98*math.Sqrt(n))))
	hi := min(len(s)-1, int(math.Ceil(n/2+0.98*math.Sqrt(n))))
	b.ReportMetric((s[hi]-s[lo])/2, unit+"-medci")
}
