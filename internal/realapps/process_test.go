package realapps_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/baton-dev/baton/internal/realapps"
)

// The environment that makes the test binary one of the apps, in a process of its own.
const (
	appEnv   = "BATON_REALAPP"       // the app's name
	idiomEnv = "BATON_REALAPP_IDIOM" // how it attaches Baton
)

func TestMain(m *testing.M) {
	if name := os.Getenv(appEnv); name != "" {
		appMain(name, realapps.Idiom(os.Getenv(idiomEnv)))
	}
	// The test process serves Baton to the apps; what it starts must end with each test.
	goleak.VerifyTestMain(m)
}

// appMain is the app process: it runs the app, printing its journal on standard output, and
// exits right after its last event, as apps do (no Close, no deferred cleanup).
//
// It exits through the system call, not os.Exit: in a binary built with -race, os.Exit(0) first
// runs the race detector's finalizer, during which the process's other goroutines go on running,
// a grace that no app built without -race gives Baton. A race the app meets is still reported on
// standard error, which runApp reads.
func appMain(name string, idiom realapps.Idiom) {
	app, ok := realapps.Lookup(name)
	if !ok {
		fmt.Fprintf(os.Stderr, "no app %q\n", name)
		os.Exit(2)
	}
	if err := app.Run(context.Background(), idiom, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	syscall.Exit(0)
}

// appRun is one run of an app process: its journal and the process's wall time.
type appRun struct {
	journal realapps.Journal
	wall    time.Duration
}

// runApp runs app in a process of its own, attached through idiom to the Baton at url ("" for
// none), and returns its journal.
func runApp(t *testing.T, app realapps.App, idiom realapps.Idiom, url string) appRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), appEnv+"="+app.Name, idiomEnv+"="+string(idiom), "BATON_URL="+url, "BATON_TOKEN=")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	run := appRun{wall: time.Since(start)}
	if err != nil {
		t.Fatalf("app %s (%s): %v\n%s", app.Name, idiom, err, stderr.Bytes())
	}
	if bytes.Contains(stderr.Bytes(), []byte("WARNING: DATA RACE")) {
		t.Errorf("app %s (%s) met a data race:\n%s", app.Name, idiom, stderr.Bytes())
	}
	run.journal, err = realapps.ReadJournal(&stdout)
	if err != nil {
		t.Fatalf("app %s (%s): %v\n%s", app.Name, idiom, err, stderr.Bytes())
	}
	return run
}
