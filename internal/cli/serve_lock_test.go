package cli_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/baton-dev/baton/internal/cli"
	"github.com/baton-dev/baton/internal/sqlite"
	"github.com/baton-dev/baton/traces"
)

// inProcess is a `baton serve` run in this process by serveHere.
type inProcess struct {
	url    string
	stop   context.CancelFunc
	exit   chan int
	stderr *lockedBuffer
}

// serveHere runs `baton serve args... --addr 127.0.0.1:0` in this process and waits until it
// serves; it fails the test when it exits first.
func serveHere(t testing.TB, args ...string) *inProcess {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &inProcess{stop: cancel, exit: make(chan int, 1), stderr: &lockedBuffer{}}
	var stdout lockedBuffer
	go func() {
		s.exit <- cli.Run(ctx, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...), &stdout, s.stderr)
	}()
	t.Cleanup(s.close)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if m := servingLine.FindStringSubmatch(stdout.String()); m != nil {
			s.url = m[1]
			return s
		}
		select {
		case code := <-s.exit:
			s.exit <- code
			t.Fatalf("baton serve %v exited %d before serving: %s", args, code, s.stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("baton serve %v: not serving within 30s", args)
		}
	}
}

// close stops the server and waits for it to exit.
func (s *inProcess) close() {
	s.stop()
	code := <-s.exit
	s.exit <- code
}

// refusedServe runs a second `baton serve args...` and returns what it says on stderr; it fails
// the test unless the command exits 1 without serving.
func refusedServe(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var stdout, stderr lockedBuffer
	if code := cli.Run(ctx, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...), &stdout, &stderr); code != 1 ||
		strings.Contains(stdout.String(), "serving") {
		t.Fatalf("second baton serve %v: exit %d, stdout %q; want it refused", args, code, stdout.String())
	}
	return stderr.String()
}

// TestServeRefusesADatabaseInUse starts a server, and a run on it, then a second server on the
// same database: the second is refused, naming the first (pid, address, since when), and the
// first's run goes on untouched (a second server used to mark it interrupted). Once the first
// has stopped, a server starts on the database again. Without --db, a second server on another
// port is refused the same way, pointed to --db, rather than sharing the default database.
func TestServeRefusesADatabaseInUse(t *testing.T) {
	db := t.TempDir() + "/runs.db"
	for _, args := range [][]string{{"--db", db}, nil} {
		first := serveHere(t, append([]string{"--pace", "5s"}, args...)...)
		id := startRun(t, first.url)
		msg := refusedServe(t, args...)
		for _, want := range []string{"is in use by another baton serve", fmt.Sprintf("pid %d", os.Getpid()),
			"serving on " + first.url, "since " + time.Now().Format(time.DateOnly), "--db PATH"} {
			if !strings.Contains(msg, want) {
				t.Errorf("serve %v refused with %q; want it to say %q", args, msg, want)
			}
		}
		if st := runStatus(t, first.url, id); st != traces.StatusRunning {
			t.Errorf("the first server's run is %s after the second was refused; want running", st)
		}
		first.close()
		serveHere(t, args...).close()
	}
}

// TestServeLockKeepsNoToken: the lock file beside the database, and the refusal a second server
// prints from it, name the first server's address without its access token.
func TestServeLockKeepsNoToken(t *testing.T) {
	db := t.TempDir() + "/runs.db"
	token := "0f3a9c5e7b1d2486af0c3e5b7d9f1a2c"
	first := serveHere(t, "--db", db, "--token", token)
	if !strings.Contains(first.url, token) {
		t.Fatalf("the server's URL %s has no token; the test needs one", first.url)
	}
	msg := refusedServe(t, "--db", db)
	file, err := os.ReadFile(sqlite.LockFile(db))
	if err != nil {
		t.Fatal(err)
	}
	base, _, _ := strings.Cut(first.url, "?")
	if !strings.Contains(msg, "serving on "+base) {
		t.Errorf("refused with %q; want it to name the first server at %s", msg, base)
	}
	for what, text := range map[string]string{"the lock file": string(file), "the refusal": msg} {
		if strings.Contains(text, token) {
			t.Errorf("%s holds the access token: %s", what, text)
		}
	}
}

// TestServeLockDiesWithItsProcess holds a database with a `baton serve` in a process of its own,
// kills it with SIGKILL (no chance to clean up) and starts a server on the database at once.
func TestServeLockDiesWithItsProcess(t *testing.T) {
	db := t.TempDir() + "/runs.db"
	child := startServe(t, db)
	if msg := refusedServe(t, "--db", db); !strings.Contains(msg, fmt.Sprintf("pid %d, serving on %s", child.cmd.Process.Pid, child.base)) {
		t.Errorf("refused with %q; want it to name the child, pid %d on %s", msg, child.cmd.Process.Pid, child.base)
	}
	child.kill()
	serveHere(t, "--db", db).close()
}

// TestServeRefusesADatabaseItCannotWrite: serve on a read-only database says so and exits,
// rather than serving pages whose every new run would fail.
func TestServeRefusesADatabaseItCannotWrite(t *testing.T) {
	db := t.TempDir() + "/runs.db"
	var stdout, stderr lockedBuffer
	if code := cli.Run(context.Background(), []string{"import", "../../traces/testdata/v2/supervisor.trace.json", "--db", db}, &stdout, &stderr); code != 0 {
		t.Fatalf("import: %s", stderr.String())
	}
	// The file mode binds all but root; the header's write version above 2 binds root too.
	if err := os.Chmod(db, 0o444); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		f, err := os.OpenFile(db, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		_, err = f.WriteAt([]byte{3}, 18)
		if err := errors.Join(err, f.Close()); err != nil {
			t.Fatal(err)
		}
	}
	if msg := refusedServe(t, "--db", db); !strings.Contains(msg, "the database "+db+" is read-only") {
		t.Errorf("refused with %q; want it to say the database is read-only", msg)
	}
}

// startRun starts a supervisor run on the server at base and returns its id.
func startRun(t *testing.T, base string) string {
	t.Helper()
	res, err := http.Post(base+"api/runs", "application/json", strings.NewReader(`{"flow": "supervisor"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var created struct{ ID string }
	if err := json.NewDecoder(res.Body).Decode(&created); err != nil || res.StatusCode != http.StatusCreated {
		t.Fatalf("start a run: %d, %v", res.StatusCode, err)
	}
	return created.ID
}

// runStatus returns the status of run id on the server at base.
func runStatus(t testing.TB, base, id string) traces.Status {
	t.Helper()
	res, err := http.Get(base + "api/runs/" + id + "/trace")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var tr traces.Trace
	if err := json.NewDecoder(res.Body).Decode(&tr); err != nil {
		t.Fatalf("run %s: %d, %v", id, res.StatusCode, err)
	}
	return tr.Run.Status
}
