package attach_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cloudwego/eino/adk"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/attach"
	"github.com/baton-dev/baton/internal/agentstest"
	"github.com/baton-dev/baton/internal/attachtest"
	"github.com/baton-dev/baton/internal/live"
	"github.com/baton-dev/baton/internal/sqlite"
	"github.com/baton-dev/baton/server"
	"github.com/baton-dev/baton/traces"
)

// The tests of this file fault Baton between a real eino app and a real server (see faultProxy):
// whatever the fault, the run arrives whole, or the trace and Close say what was lost; and the
// app is not slowed.

var quiet = slog.New(slog.DiscardHandler)

// baton is a real server serving on its own listener, that the test may stop before it ends.
type baton struct {
	base, addr string
	stop       func() // shuts it down and closes its store; later calls do nothing
}

// serveBaton serves Baton with cfg (Addr and Flows set here) on a new listener; with db, on a
// SQLite database there, as `baton serve --db` does, runs a stopped Baton left running
// recovered.
func serveBaton(t *testing.T, cfg server.Config, db string) *baton {
	t.Helper()
	ln := listen(t)
	cfg.Addr, cfg.Flows, cfg.Logger = ln.Addr().String(), []agents.Flow{}, quiet
	var closeStore func() error
	if db != "" {
		store, err := sqlite.Open(db, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := store.Recover(context.Background()); err != nil {
			t.Fatal(err)
		}
		cfg.Broker = live.NewStoredBroker(0, store, quiet)
		closeStore = func() error {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			return errors.Join(cfg.Broker.Close(ctx), store.Close())
		}
	}
	s, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
		if closeStore != nil {
			if err := closeStore(); err != nil {
				t.Errorf("close the store: %v", err)
			}
		}
	}
	t.Cleanup(stop)
	return &baton{base: "http://" + ln.Addr().String(), addr: ln.Addr().String(), stop: stop}
}

// longApp is a real eino app whose one agent calls a tool 40 times, ten calls a model reply, each
// model reply held at gate until the test lets it through.
func longApp(t *testing.T, gate *agentstest.Gate) *adk.Runner {
	t.Helper()
	flow := gate.Flow(agentstest.Long(40))
	root, err := flow.Build(context.Background(), flow.ScriptedModels(nil))
	if err != nil {
		t.Fatal(err)
	}
	return adk.NewRunner(context.Background(), adk.RunnerConfig{Agent: root})
}

// runApp runs app recorded by b in a goroutine, and returns a channel closed once the app has
// read its last event.
func runApp(ctx context.Context, app *adk.Runner, b *attach.Baton) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		events := app.Query(ctx, "Count", b.Option())
		for {
			if _, ok := events.Next(); !ok {
				return
			}
		}
	}()
	return done
}

// longStory is the story of longApp's run recorded with nothing faulted.
func longStory(t *testing.T) string {
	t.Helper()
	srv := serveBaton(t, server.Config{}, "")
	b := attach.New(attach.Config{URL: srv.base, Logger: quiet})
	gate := agentstest.NewGate()
	gate.Open()
	<-runApp(t.Context(), longApp(t, gate), b)
	if err := b.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	return attachtest.Story(trace(t, srv.base, awaitRun(t, srv.base)))
}

// withoutGaps returns tr's events without the gaps Baton left where it lost the app for a while:
// each a run.finished, interrupted, followed by the resumed event saying why the run goes on. It
// returns how many gaps there were.
func withoutGaps(tr traces.Trace) (traces.Trace, int) {
	gaps := 0
	var kept []traces.Event
	for i := 0; i < len(tr.Events); i++ {
		e := tr.Events[i]
		if e.Kind == traces.KindRunFinished && e.Run.Status == traces.StatusInterrupted && i+1 < len(tr.Events) {
			if next := tr.Events[i+1]; next.Kind == traces.KindResumed && next.Interrupt.ID == "" {
				gaps++
				i++
				continue
			}
		}
		kept = append(kept, e)
	}
	tr.Events = kept
	return tr, gaps
}

// awaitStatus waits until run id of the server at base has status.
func awaitStatus(t *testing.T, base, id string, status traces.Status) {
	t.Helper()
	var run traces.Run
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		var tr traces.Trace
		getJSON(t, base+"/api/runs/"+id+"/trace", &tr)
		if run = tr.Run; run.Status == status {
			return
		}
	}
	t.Fatalf("run %s is %s, want %s", id, run.Status, status)
}

// awaitEvents waits until the server at base holds some events of run id.
func awaitEvents(t *testing.T, base, id string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		var tr traces.Trace
		if getJSON(t, base+"/api/runs/"+id+"/trace", &tr); len(tr.Events) > 0 {
			return
		}
	}
	t.Fatalf("no event of run %s reached the server", id)
}

// wait waits for ch to close, failing after a while.
func wait(t *testing.T, what string, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(30 * time.Second):
		t.Fatalf("timed out waiting until %s", what)
	}
}

// TestLateAnswerKeepsTheRun: Baton takes a post but its answer comes too late for the app, which
// sends the post again: told where Baton stands, the app goes on from there, and the run arrives
// whole, each event once.
func TestLateAnswerKeepsTheRun(t *testing.T) {
	want := longStory(t)
	srv := serveBaton(t, server.Config{}, "")
	proxy := startProxy(t, srv.addr)
	b := attach.New(attach.Config{URL: proxy.url(), Logger: quiet})
	attach.SetPostTimeout(b, time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	gate := agentstest.NewGate()
	done := runApp(ctx, longApp(t, gate), b)
	if err := gate.HoldAt(ctx, 3); err != nil {
		t.Fatal(err)
	}
	gaveUp := proxy.holdNextAnswer(`"seq":`)    // a post that carries events
	if err := gate.HoldAt(ctx, 4); err != nil { // the events of the third reply are sent meanwhile
		t.Fatal(err)
	}
	wait(t, "the app gave up on the late answer", gaveUp)
	gate.Open()
	wait(t, "the app's end", done)
	if err := b.Close(ctx); err != nil {
		t.Errorf("Close: %v", err)
	}
	tr := trace(t, srv.base, awaitRun(t, srv.base))
	if got := attachtest.Story(tr); tr.Run.Status != traces.StatusCompleted || got != want {
		t.Errorf("the run ended %s with %d events:\n%s\nwant completed, as recorded without faults:\n%s", tr.Run.Status, len(tr.Events), got, want)
	}
}

// TestLateAnswerToTheStartKeepsOneRun: Baton registers a run but its answer comes too late for
// the app, which sends the start again: it gets the run the first start registered, and Baton
// lists one run, whole.
func TestLateAnswerToTheStartKeepsOneRun(t *testing.T) {
	want := longStory(t)
	srv := serveBaton(t, server.Config{}, "")
	proxy := startProxy(t, srv.addr)
	b := attach.New(attach.Config{URL: proxy.url(), Logger: quiet})
	attach.SetPostTimeout(b, time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	gaveUp := proxy.holdNextAnswer("POST /api/ingest HTTP")
	gate := agentstest.NewGate()
	gate.Open()
	done := runApp(ctx, longApp(t, gate), b)
	wait(t, "the app gave up on the late answer", gaveUp)
	wait(t, "the app's end", done)
	if err := b.Close(ctx); err != nil {
		t.Errorf("Close: %v", err)
	}
	ids := runIDs(t, srv.base)
	if len(ids) != 1 {
		t.Fatalf("%d runs on the server, want the app's one run", len(ids))
	}
	tr := trace(t, srv.base, ids[0])
	if got := attachtest.Story(tr); tr.Run.Status != traces.StatusCompleted || got != want {
		t.Errorf("the run ended %s with %d events:\n%s\nwant completed, as recorded without faults:\n%s", tr.Run.Status, len(tr.Events), got, want)
	}
}

// TestLongStallKeepsTheRest: Baton hears nothing from the app for longer than its timeout (the
// network stalls) and ends the run interrupted; once the app gets through again, the run goes on
// with the rest, the gap in it saying why.
func TestLongStallKeepsTheRest(t *testing.T) {
	want := longStory(t)
	srv := serveBaton(t, server.Config{IngestTimeout: 2 * time.Second}, "")
	proxy := startProxy(t, srv.addr)
	b := attach.New(attach.Config{URL: proxy.url(), Logger: quiet})
	attach.SetPostTimeout(b, 500*time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	gate := agentstest.NewGate()
	done := runApp(ctx, longApp(t, gate), b)
	if err := gate.HoldAt(ctx, 3); err != nil {
		t.Fatal(err)
	}
	id := awaitRun(t, srv.base)
	awaitEvents(t, srv.base, id)
	proxy.stallAll()
	gate.Open()
	wait(t, "the app's end", done)
	awaitStatus(t, srv.base, id, traces.StatusInterrupted) // Baton gave the app up
	proxy.resume()
	if err := b.Close(ctx); err != nil {
		t.Errorf("Close: %v", err)
	}
	checkWholeAfterGaps(t, trace(t, srv.base, id), want, "stopped sending events")
}

// TestBatonRestartKeepsTheRest: Baton stops while the app streams a run, and starts again on the
// same database: the run goes on in the new Baton with the rest, the gap in it saying why.
func TestBatonRestartKeepsTheRest(t *testing.T) {
	want := longStory(t)
	db := filepath.Join(t.TempDir(), "baton.db")
	first := serveBaton(t, server.Config{}, db)
	proxy := startProxy(t, first.addr)
	b := attach.New(attach.Config{URL: proxy.url(), Logger: quiet})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	gate := agentstest.NewGate()
	done := runApp(ctx, longApp(t, gate), b)
	if err := gate.HoldAt(ctx, 3); err != nil {
		t.Fatal(err)
	}
	id := awaitRun(t, first.base)
	awaitEvents(t, first.base, id)
	first.stop()
	second := serveBaton(t, server.Config{}, db)
	proxy.retarget(second.addr)
	gate.Open()
	wait(t, "the app's end", done)
	if err := b.Close(ctx); err != nil {
		t.Errorf("Close: %v", err)
	}
	checkWholeAfterGaps(t, trace(t, second.base, id), want, "Baton shut down")
}

// checkWholeAfterGaps checks that tr, once its gaps are taken out, tells the story want, ended
// completed, and that it has at least one gap, whose run.finished says why.
func checkWholeAfterGaps(t *testing.T, tr traces.Trace, want, why string) {
	t.Helper()
	var why0 string
	for _, e := range tr.Events {
		if e.Kind == traces.KindRunFinished && e.Run.Status == traces.StatusInterrupted && why0 == "" {
			why0 = e.Run.Error
		}
	}
	whole, gaps := withoutGaps(tr)
	if got := attachtest.Story(whole); tr.Run.Status != traces.StatusCompleted || got != want {
		t.Errorf("the run ended %s (%s) with %d events:\n%s\nwant completed, as recorded without faults:\n%s",
			tr.Run.Status, tr.Run.Error, len(tr.Events), attachtest.Story(tr), want)
	}
	if gaps == 0 || !strings.Contains(why0, why) {
		t.Errorf("%d gaps, the first saying %q: want one where Baton lost the app, saying %q", gaps, why0, why)
	}
}

// TestRefusedRunMakesCloseFail: a run Baton refuses (here, for want of its token) is dropped, and
// Close says the runs were not delivered whole.
func TestRefusedRunMakesCloseFail(t *testing.T) {
	srv := serveBaton(t, server.Config{Token: "a-token-strong-enough-for-baton-0123456789"}, "")
	b := attach.New(attach.Config{URL: srv.base, Logger: quiet})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	gate := agentstest.NewGate()
	gate.Open()
	wait(t, "the app's end", runApp(ctx, longApp(t, gate), b))
	if err := b.Close(ctx); err == nil {
		t.Error("Close returned nil for a run the server refused")
	}
}

// TestStalledBatonCostsOneWait: against a Baton that takes connections and never answers, ten
// short runs in a row wait for delivery at most once between them: the stall found by the first
// run's end stops the others from waiting. Once Baton answers again, a run's end waits for its
// delivery again, so that the app sees its end only once Baton has the run.
func TestStalledBatonCostsOneWait(t *testing.T) {
	srv := serveBaton(t, server.Config{}, "")
	proxy := startProxy(t, srv.addr)
	proxy.stallAll()
	b := attach.New(attach.Config{URL: proxy.url(), Logger: quiet}) // posts time out after 10 s
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const endingWait = 500 * time.Millisecond // the recorder's bound of a run end's wait
	slow, all := 0, time.Now()
	for range 10 {
		app, err := attachtest.Helpdesk(ctx, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		attachtest.Drain(t, app.Query(ctx, attachtest.HelpdeskInput, b.Option()))
		if time.Since(start) >= endingWait {
			slow++
		}
	}
	t.Logf("10 runs against a stalled Baton took %s", time.Since(all))
	if waits := attach.EndingWaitsRunOut(b); waits > 1 || slow > 2 {
		t.Errorf("10 runs against a stalled Baton: %d waits ran out, %d runs took %s or more; want at most one wait", waits, slow, endingWait)
	}

	proxy.resume()
	for deadline := time.Now().Add(time.Minute); countRuns(t, srv.base, traces.StatusCompleted) < 10; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the runs did not arrive once Baton answered")
		}
	}
	app, err := attachtest.Helpdesk(ctx, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	before := runIDs(t, srv.base)
	attachtest.Drain(t, app.Query(ctx, attachtest.HelpdeskInput, b.Option()))
	// The run's end waited: Baton has its last reply the moment the app has seen its end.
	var last traces.Trace
	for _, id := range runIDs(t, srv.base) {
		if !slices.Contains(before, id) {
			getJSON(t, srv.base+"/api/runs/"+id+"/trace", &last)
		}
	}
	if !hasReply(last, "triage", "Alice was charged twice by mistake; the duplicate $12 will be refunded.") {
		t.Errorf("when the app saw its run end, Baton had %d events of it, not its last reply", len(last.Events))
	}
	if waits := attach.EndingWaitsRunOut(b); waits > 1 {
		t.Errorf("%d waits ran out in all, want at most the one of the stall", waits)
	}
	if err := b.Close(ctx); err != nil {
		t.Errorf("Close: %v", err)
	}
}

// hasReply reports whether tr holds agent's model reply text.
func hasReply(tr traces.Trace, agent, text string) bool {
	return slices.ContainsFunc(tr.Events, func(e traces.Event) bool {
		return e.Kind == traces.KindModelFinished && e.Agent == agent && e.Model.Output != nil && e.Model.Output.Content == text
	})
}

// runIDs lists the ids of the runs of the server at base.
func runIDs(t *testing.T, base string) []string {
	t.Helper()
	var runs []traces.Run
	getJSON(t, base+"/api/runs", &runs)
	ids := make([]string, len(runs))
	for i, r := range runs {
		ids[i] = r.ID
	}
	return ids
}

// countRuns counts the runs of the server at base that have status.
func countRuns(t *testing.T, base string, status traces.Status) int {
	t.Helper()
	var runs []traces.Run
	getJSON(t, base+"/api/runs", &runs)
	n := 0
	for _, r := range runs {
		n += btoi(r.Status == status)
	}
	return n
}

// TestExitingAppsRunEndsAtItsTime: an app exits right after its last event, and what it posts
// after the ending it posted at its root agent's last end is lost on the way: Baton ends the run
// from that ending, at the time the app's run ended, not when Baton gave up waiting for more.
func TestExitingAppsRunEndsAtItsTime(t *testing.T) {
	srv := serveBaton(t, server.Config{}, "")
	proxy := startProxy(t, srv.addr)
	// The ending of triage's last turn: its tail closes triage first (earlier endings close
	// lookup_agent or billing_agent, or foresee a refused transfer).
	proxy.loseRequestsAfter(`"ending":\{"status":"completed","time":"[^"]*","tail":\[\{"seq":0,"time":"[^"]*","kind":"agent.finished","agent":"triage"`)
	app := exec.Command(os.Args[0], "-test.run=^$")
	app.Env = append(os.Environ(), exitingAppEnv+"="+proxy.url())
	if out, err := app.CombinedOutput(); err != nil {
		t.Fatalf("app: %v\n%s", err, out)
	}
	tr := trace(t, srv.base, awaitRun(t, srv.base))
	n := len(tr.Events)
	if n < 2 || tr.Run.Status != traces.StatusCompleted {
		t.Fatalf("the run ended %s with %d events, want completed\n%s", tr.Run.Status, n, attachtest.Story(tr))
	}
	end, lastDone := tr.Events[n-1].Time, tr.Events[n-2].Time
	if took := end.Sub(lastDone); took < 0 || took > time.Second || !tr.Run.EndedAt.Equal(end) {
		t.Errorf("run.finished %s after the run's last event (ended at %s), want the app's end, within a second of it", took, tr.Run.EndedAt)
	}
}
