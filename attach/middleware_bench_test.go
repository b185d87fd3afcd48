package attach_test

import (
	"context"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/cloudwego/eino/adk"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/attach"
)

// BenchmarkMiddleware measures what attach.Middleware costs an app whose runs no breakpoint is
// set on: the desk app's run (two agents, a transfer chosen by a model), recorded to a real Baton
// server, with the middleware in every agent and without. Each round runs each variant runsPerRound
// times, in alternating order, each with a Baton of its own that Close delivers every run of
// before the round's time stops (the middleware's poller included), and reports with/without for
// the app's own time (its runs, read to their end) and for the whole (delivered): min / median /
// max over the rounds. At pace=0 the models answer at once, the worst case for the checks on each
// model call, and a run is over before its poller starts; at pace=100ms billing's reply takes
// 100 ms, and each run's poller asks Baton once.
//
//	go test ./attach -run '^$' -bench BenchmarkMiddleware -benchtime 20x
func BenchmarkMiddleware(b *testing.B) {
	b.Run("pace=0", func(b *testing.B) { benchmarkMiddleware(b, nil, 20) })
	b.Run("pace=100ms", func(b *testing.B) { benchmarkMiddleware(b, agents.NewPace(100*time.Millisecond), 4) })
}

func benchmarkMiddleware(b *testing.B, pace *agents.Pace, runsPerRound int) {
	base := startBaton(b, listen(b))
	ctx := context.Background()
	plain, err := deskApp(ctx, nil, nil, pace)
	if err != nil {
		b.Fatal(err)
	}
	held, err := deskApp(ctx, attach.Middleware(), nil, pace)
	if err != nil {
		b.Fatal(err)
	}
	round := func(runner *adk.Runner) (app, whole time.Duration) {
		bt := attach.New(attach.Config{URL: base, Logger: slog.New(slog.DiscardHandler)})
		start := time.Now()
		for range runsPerRound {
			events := runner.Query(ctx, deskInput, bt.Option())
			for {
				if _, ok := events.Next(); !ok {
					break
				}
			}
		}
		app = time.Since(start)
		if err := bt.Close(ctx); err != nil {
			b.Fatal(err)
		}
		return app, time.Since(start)
	}
	var appRatio, wholeRatio []float64
	var appWith, appWithout []float64
	i := 0
	for b.Loop() {
		var a1, w1, a0, w0 time.Duration
		if i%2 == 0 {
			a1, w1 = round(held)
			a0, w0 = round(plain)
		} else {
			a0, w0 = round(plain)
			a1, w1 = round(held)
		}
		i++
		appRatio = append(appRatio, float64(a1)/float64(a0))
		wholeRatio = append(wholeRatio, float64(w1)/float64(w0))
		appWith = append(appWith, float64(a1.Microseconds())/float64(runsPerRound))
		appWithout = append(appWithout, float64(a0.Microseconds())/float64(runsPerRound))
	}
	report := func(name string, v []float64) {
		slices.Sort(v)
		b.ReportMetric(v[0], name+"-min")
		b.ReportMetric(v[len(v)/2], name+"-median")
		b.ReportMetric(v[len(v)-1], name+"-max")
	}
	report("app-with/without", appRatio)
	report("delivered-with/without", wholeRatio)
	report("app-µs/run-with", appWith)
	report("app-µs/run-without", appWithout)
}
