package cli_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"go.uber.org/goleak"

	"github.com/baton-dev/baton/internal/cli"
	"github.com/baton-dev/baton/internal/otlp/otlptest"
	"github.com/baton-dev/baton/internal/postgres/pgtest"
	"github.com/baton-dev/baton/traces"
)

// runMainEnv makes the test binary run the command line as main does instead of the tests, so
// that a test can run the command in a process of its own and signal it.
const runMainEnv = "BATON_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
	}
	// Tests name their databases; should one not, it lands here, never in the user's own.
	dir, err := os.MkdirTemp("", "baton-data-")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_DATA_HOME", dir)
	os.Unsetenv("BATON_DATABASE_URL")
	code := pgtest.Main(m) // stops the PostgreSQL server that tests may have started
	// The commands start goroutines (a run's printer, the server, the exporter's batcher): none
	// may outlive the command that started it.
	if err := goleak.Find(); err != nil && code == 0 {
		fmt.Fprintln(os.Stderr, "goleak:", err)
		code = 1
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

var servingLine = regexp.MustCompile(`Baton is serving on (http://\S+)`)

// TestServeExitsZeroOnSIGTERM runs "baton serve --addr 127.0.0.1:0" as its own process: it prints
// the port it really listens on; on SIGTERM during a run, the run's viewer gets the run's
// canceled end before its socket closes, and the process exits 0, having sent the run's spans to
// its OpenTelemetry collector.
func TestServeExitsZeroOnSIGTERM(t *testing.T) {
	rcv := otlptest.NewReceiver(t)
	cmd := exec.Command(os.Args[0], "serve", "--addr", "127.0.0.1:0", "--pace", "5s", "--otlp-endpoint", rcv.URL, "--db", t.TempDir()+"/baton.db")
	cmd.Env = append(os.Environ(), runMainEnv+"=1")
	var stdout, stderr lockedBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var exitErr error
	exited := make(chan struct{})
	go func() {
		exitErr = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		select {
		case <-exited:
		default:
			_ = cmd.Process.Kill()
			<-exited
		}
	})

	var base *url.URL
	deadline := time.Now().Add(30 * time.Second)
	for base == nil {
		if m := servingLine.FindStringSubmatch(stdout.String()); m != nil {
			var err error
			if base, err = url.Parse(m[1]); err != nil {
				t.Fatal(err)
			}
		} else if time.Now().After(deadline) {
			t.Fatalf("no URL printed within 30s; stdout %q, stderr %q", stdout.String(), stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if base.Port() == "0" || base.Port() == "" {
		t.Fatalf("printed URL %s does not name the port the system chose", base)
	}

	res, err := http.Post(base.String()+"api/runs", "application/json", strings.NewReader(`{"flow": "supervisor"}`))
	if err != nil {
		t.Fatal(err)
	}
	var created struct{ ID string }
	err = json.NewDecoder(res.Body).Decode(&created)
	res.Body.Close()
	if err != nil || res.StatusCode != http.StatusCreated {
		t.Fatalf("start a run: %d, %v", res.StatusCode, err)
	}
	conn, _, err := websocket.DefaultDialer.Dial("ws://"+base.Host+"/api/runs/"+created.ID+"/events", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// Each message is an array of one or more events.
	var first []traces.Event
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if err := conn.ReadJSON(&first); err != nil || len(first) == 0 || first[0].Kind != traces.KindRunStarted {
		t.Fatalf("first events: %+v, %v", first, err)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	last := first[len(first)-1]
	for {
		_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		var evs []traces.Event
		err := conn.ReadJSON(&evs)
		var closed *websocket.CloseError
		if errors.As(err, &closed) {
			if last.Kind != traces.KindRunFinished || last.Run.Status != traces.StatusCanceled || closed.Code != websocket.CloseNormalClosure {
				t.Errorf("last event %s %+v, then %v; want run.finished canceled, then a normal close", last.Kind, last.Run, closed)
			}
			break
		}
		if err != nil || len(evs) == 0 {
			t.Fatalf("after event %d: %d events, %v", last.Seq, len(evs), err)
		}
		last = evs[len(evs)-1]
	}
	select {
	case <-exited:
		if exitErr != nil {
			t.Errorf("baton serve after SIGTERM: %v; stderr:\n%s", exitErr, stderr.String())
		}
	case <-time.After(15 * time.Second):
		t.Errorf("baton serve still running 15s after SIGTERM")
	}
	var exported bool
	for _, s := range rcv.Spans() {
		exported = exported || (s.Parent == "" && s.Attrs["baton.run.id"] == created.ID && s.StatusError && s.Attrs["baton.run.status"] == "canceled")
	}
	if !exported {
		t.Errorf("the canceled run %s was not exported before the exit", created.ID)
	}
}
