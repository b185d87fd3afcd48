package attach_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cloudwego/eino/adk"

	"github.com/baton-dev/baton/attach"
	"github.com/baton-dev/baton/internal/attachtest"
	"github.com/baton-dev/baton/traces"
)

// resumeAppEnv makes the test binary a SupervisedRefunds app (see resumeApp), configured by its
// value, a resumeAppConfig in JSON.
const resumeAppEnv = "BATON_TEST_RESUME_APP"

// resumeAppConfig says what a resumeApp does: run the query to its interrupt ("interrupt"), resume
// Interrupt ("resume"), or both at once ("both"); recorded to URL, or to files in Dir, with its
// checkpoints in Store.
type resumeAppConfig struct {
	Phase, URL, Dir, Store, Interrupt string
}

// resumeApp is a SupervisedRefunds app in a process of its own, attached through the option as
// users attach it. It prints the interrupt it stopped at ("interrupt ID") and how long its resume
// took ("resume-ms N"), and exits the moment its last event is read: no Close, no cleanup.
func resumeApp(raw string) {
	var cfg resumeAppConfig
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		os.Exit(2)
	}
	ctx := context.Background()
	runner, err := attachtest.SupervisedRefunds(ctx, attachtest.FileStore(cfg.Store), false)
	if err != nil {
		os.Exit(2)
	}
	b := attach.New(attach.Config{URL: cfg.URL, Dir: cfg.Dir, Logger: slog.New(slog.DiscardHandler)})
	interrupt := cfg.Interrupt
	if cfg.Phase != "resume" {
		interrupt = readToInterrupt(runner.Query(ctx, attachtest.SupervisedRefundsInput, adk.WithCheckPointID("cp-1"), b.Option()))
		fmt.Println("interrupt", interrupt)
		if cfg.Phase == "interrupt" {
			os.Exit(0)
		}
	}
	began := time.Now()
	events, err := runner.ResumeWithParams(ctx, "cp-1", &adk.ResumeParams{Targets: map[string]any{interrupt: "approved"}}, b.Option())
	if err != nil {
		os.Exit(3)
	}
	readToInterrupt(events)
	fmt.Println("resume-ms", time.Since(began).Milliseconds())
	os.Exit(0)
}

// readToInterrupt reads events to their end as an app does and returns the root cause of the
// interrupt they stop at, if any.
func readToInterrupt(events *adk.AsyncIterator[*adk.AgentEvent]) string {
	id := ""
	for {
		ev, ok := events.Next()
		if !ok {
			return id
		}
		if ev.Output != nil && ev.Output.MessageOutput != nil {
			ev.Output.MessageOutput.GetMessage()
		}
		if ev.Action != nil && ev.Action.Interrupted != nil {
			for _, c := range ev.Action.Interrupted.InterruptContexts {
				if c.IsRootCause {
					id = c.ID
				}
			}
		}
	}
}

// runResumeApp runs a resumeApp with cfg to its exit and returns what it printed, by key.
func runResumeApp(t *testing.T, cfg resumeAppConfig) map[string]string {
	t.Helper()
	raw, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	app := exec.Command(os.Args[0], "-test.run=^$")
	app.Env = append(os.Environ(), resumeAppEnv+"="+string(raw))
	var stderr bytes.Buffer
	app.Stderr = &stderr
	out, err := app.Output()
	if err != nil {
		t.Fatalf("app %s: %v\n%s%s", cfg.Phase, err, out, stderr.Bytes())
	}
	printed := map[string]string{}
	for sc := bufio.NewScanner(bytes.NewReader(out)); sc.Scan(); {
		if k, v, ok := strings.Cut(sc.Text(), " "); ok {
			printed[k] = v
		}
	}
	return printed
}

// checkResumeTook fails when the app's resume, as it printed it, took resumeWait or more.
func checkResumeTook(t *testing.T, printed map[string]string) {
	t.Helper()
	ms, err := strconv.Atoi(printed["resume-ms"])
	if err != nil {
		t.Fatalf("the app printed %v", printed)
	}
	took := time.Duration(ms) * time.Millisecond
	t.Logf("the app's resume took %s", took)
	if took >= resumeWait {
		t.Errorf("the app's resume took %s, want well under %s", took, resumeWait)
	}
}

// awaitOneRun waits until the server holds exactly one run and it has ended, and returns its
// trace; it fails when a second run appears.
func awaitOneRun(t *testing.T, base string) traces.Trace {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		var runs []traces.Run
		getJSON(t, base+"/api/runs", &runs)
		if len(runs) > 1 {
			t.Fatalf("%d runs on the server, want the one run: %+v", len(runs), runs)
		}
		if len(runs) == 1 && runs[0].Status.Ended() && runs[0].Status != traces.StatusInterrupted || time.Now().After(deadline) {
			if len(runs) == 0 {
				t.Fatal("no run reached the server")
			}
			return trace(t, base, runs[0].ID)
		}
	}
}

// TestResumeAtOnceInItsOwnProcess runs SupervisedRefunds in a process of its own that resumes the
// moment it sees the interrupt and exits right after its last event, recorded to a real server:
// one run, told as one story, and the app's resume costs it nothing, Baton up or unreachable.
func TestResumeAtOnceInItsOwnProcess(t *testing.T) {
	t.Run("recorded", func(t *testing.T) {
		base := startBaton(t, listen(t))
		printed := runResumeApp(t, resumeAppConfig{Phase: "both", URL: base, Store: t.TempDir()})
		checkResumeTook(t, printed)
		checkSupervisedResume(t, awaitOneRun(t, base), printed["interrupt"])
	})
	t.Run("files", func(t *testing.T) {
		dir := t.TempDir()
		printed := runResumeApp(t, resumeAppConfig{Phase: "both", Dir: dir, Store: t.TempDir()})
		checkResumeTook(t, printed)
		checkSupervisedResume(t, attachtest.ReadTraces(t, attach.New(attach.Config{Dir: dir}), dir, 1)[0], printed["interrupt"])
	})
	t.Run("Baton unreachable", func(t *testing.T) {
		ln := listen(t)
		url := "http://" + ln.Addr().String()
		ln.Close() // connections are refused
		checkResumeTook(t, runResumeApp(t, resumeAppConfig{Phase: "both", URL: url, Store: t.TempDir()}))
	})
}

// TestResumeInAnotherProcess stops SupervisedRefunds at its interrupt in one process and resumes
// it at once in another, each exiting right after its last event, tied only by the checkpoint:
// the resumed part goes on in the same run, on the server and in files.
func TestResumeInAnotherProcess(t *testing.T) {
	t.Run("server", func(t *testing.T) {
		base := startBaton(t, listen(t))
		store := t.TempDir()
		stopped := runResumeApp(t, resumeAppConfig{Phase: "interrupt", URL: base, Store: store})
		printed := runResumeApp(t, resumeAppConfig{Phase: "resume", URL: base, Store: store, Interrupt: stopped["interrupt"]})
		checkResumeTook(t, printed)
		checkSupervisedResume(t, awaitOneRun(t, base), stopped["interrupt"])
	})
	t.Run("files", func(t *testing.T) {
		dir, store := t.TempDir(), t.TempDir()
		stopped := runResumeApp(t, resumeAppConfig{Phase: "interrupt", Dir: dir, Store: store})
		runResumeApp(t, resumeAppConfig{Phase: "resume", Dir: dir, Store: store, Interrupt: stopped["interrupt"]})
		checkSupervisedResume(t, attachtest.ReadTraces(t, attach.New(attach.Config{Dir: dir}), dir, 1)[0], stopped["interrupt"])
	})
}
