package sqlite_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/internal/agentstest"
	"github.com/baton-dev/baton/internal/live"
	"github.com/baton-dev/baton/internal/sqlite"
	"github.com/baton-dev/baton/internal/webtest"
	"github.com/baton-dev/baton/traces"
)

// childEnv makes the test binary a writer process instead of running the tests: it records a
// long eino run into the database named by the variable until it is killed.
const childEnv = "BATON_TEST_STORE_WRITER"

// announcing is the store the writer process uses: after each Save commits, it prints the last
// seq saved, so the test knows what was committed when it kills the process.
type announcing struct{ *sqlite.Store }

func (a announcing) Save(run traces.Run, tally live.Tally, agents []traces.Agent, events []traces.Event) error {
	err := a.Store.Save(run, tally, agents, events)
	if err == nil {
		fmt.Printf("saved %d\n", events[len(events)-1].Seq)
	}
	return err
}

// importerEnv makes the test binary an importing process: it creates one large run in the
// database named by the variable, says so, and waits to be killed.
const importerEnv = "BATON_TEST_STORE_IMPORTER"

// importedEvents is how many events the importing process's run has: enough for the WAL's
// checkpoint to follow the commit (pipelineEvents).
const importedEvents = 50_000

// childMain runs the writer process when childEnv is set, or the importing one when importerEnv
// is, and reports whether it did.
func childMain() bool {
	if path := os.Getenv(importerEnv); path != "" {
		store, err := sqlite.Open(path, 0)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		tr := webtest.Large(importedEvents)
		if err := store.Create(tr.Run, live.Tally{Events: int64(len(tr.Events))}, tr.Agents, tr.Events); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		fmt.Println("created")
		select {} // until killed, its checkpoint maybe going on
	}
	path := os.Getenv(childEnv)
	if path == "" {
		return false
	}
	store, err := sqlite.Open(path, 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	b := live.NewStoredBroker(0, announcing{store}, slog.New(slog.DiscardHandler))
	flow := agentstest.Long(100_000)
	rec := traces.NewRecording(traces.Run{ID: "r-killed", Flow: flow.Name, Input: flow.DefaultInput, Model: "scripted"}, flow.Agents)
	if err := b.Add(rec); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	agents.RunFlow(context.Background(), flow, flow.DefaultInput, agents.Options{Pace: agents.NewPace(10 * time.Millisecond)}, rec)
	os.Exit(3) // never reached: the run is far longer than the test waits
	return true
}

// A process writing a run is killed with SIGKILL mid-run. Reopened, the database has every event
// the process had committed, numbered with no gap, and once recovered the run is interrupted: a
// valid trace that ends with a run.finished saying so.
func TestKilledWriterLosesNoCommittedEvent(t *testing.T) {
	path := t.TempDir() + "/baton.db"
	cmd, stdout, stderr := startChild(t, childEnv, path)

	// Kill it once it has committed a few hundred events, in several transactions.
	var committed int64
	saves := 0
	lines := bufio.NewScanner(stdout)
	deadline := time.AfterFunc(30*time.Second, func() { cmd.Process.Kill() })
	defer deadline.Stop()
	for committed < 300 && lines.Scan() {
		n, err := strconv.ParseInt(strings.TrimPrefix(lines.Text(), "saved "), 10, 64)
		if err != nil {
			t.Fatalf("writer said %q", lines.Text())
		}
		committed, saves = n, saves+1
	}
	if committed < 300 {
		t.Fatalf("the writer stopped after committing %d events; stderr:\n%s", committed, stderr.String())
	}
	if err := cmd.Process.Signal(os.Kill); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	t.Logf("killed after %d commits, the last through event %d", saves, committed)

	store, err := sqlite.Open(path, 0)
	if err != nil {
		t.Fatalf("reopen after the kill: %v", err)
	}
	defer store.Close()
	before, err := store.Load("r-killed")
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(before.Events)) < committed || before.Run.Status != traces.StatusRunning {
		t.Fatalf("after the kill: %d events, status %s; want at least the %d committed, running", len(before.Events), before.Run.Status, committed)
	}
	n, err := store.Recover(context.Background())
	if err != nil || n != 1 {
		t.Fatalf("Recover: %d runs, %v; want 1", n, err)
	}
	tr, err := store.Load("r-killed")
	if err != nil {
		t.Fatal(err)
	}
	if err := traces.Validate(tr); err != nil {
		t.Errorf("the recovered trace is not valid: %v", err)
	}
	last := tr.Events[len(tr.Events)-1]
	if tr.Run.Status != traces.StatusInterrupted || tr.Run.EndedAt == nil || len(tr.Events) != len(before.Events)+1 ||
		last.Kind != traces.KindRunFinished || last.Run.Status != traces.StatusInterrupted {
		t.Errorf("recovered run %+v ends with %+v; want interrupted, ended by a run.finished after the %d saved events", tr.Run, last, len(before.Events))
	}
	page, err := store.List(live.RunQuery{Status: traces.StatusInterrupted})
	if err != nil || len(page.Runs) != 1 || page.Runs[0].Events != int64(len(tr.Events)) {
		t.Errorf("listed interrupted runs %+v, %v", page.Runs, err)
	}
	if n, err := store.Recover(context.Background()); n != 0 || err != nil {
		t.Errorf("second Recover: %d, %v; want nothing left to recover", n, err)
	}
}

// A process that imported a large run is killed with SIGKILL the moment its Create returned,
// while the copy of the WAL into the database file may be going on: reopened, the database has
// the run whole, as it was imported.
func TestKilledImporterKeepsTheRun(t *testing.T) {
	path := t.TempDir() + "/baton.db"
	cmd, stdout, stderr := startChild(t, importerEnv, path)
	deadline := time.AfterFunc(60*time.Second, func() { cmd.Process.Kill() })
	defer deadline.Stop()
	lines := bufio.NewScanner(stdout)
	if !lines.Scan() || lines.Text() != "created" {
		t.Fatalf("the importer said %q; stderr:\n%s", lines.Text(), stderr.String())
	}
	if err := cmd.Process.Signal(os.Kill); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()

	store, err := sqlite.Open(path, 0)
	if err != nil {
		t.Fatalf("reopen after the kill: %v", err)
	}
	defer store.Close()
	got, err := store.Load("r-big")
	if err != nil {
		t.Fatal(err)
	}
	want := webtest.Large(importedEvents)
	if !bytes.Equal(marshal(t, got), marshal(t, want)) {
		t.Errorf("the run read back after the kill (%d events) differs from the one imported (%d)", len(got.Events), len(want.Events))
	}
}

func marshal(t *testing.T, tr traces.Trace) []byte {
	t.Helper()
	data, err := traces.Marshal(tr)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// startChild starts this test binary as a child that does what env, set to path, asks of it
// (see TestMain), its stdout piped and its stderr kept; the child is killed when t ends.
func startChild(t *testing.T, env, path string) (*exec.Cmd, io.Reader, *strings.Builder) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), env+"="+path)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &strings.Builder{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, stdout, stderr
}
