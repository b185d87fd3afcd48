package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/baton-dev/baton/internal/cli"
	"github.com/baton-dev/baton/internal/live"
	"github.com/baton-dev/baton/templates"
	"github.com/baton-dev/baton/traces"
)

// baton is `baton serve` in a process of its own.
type baton struct {
	cmd    *exec.Cmd
	base   string // http://127.0.0.1:port/
	exited chan struct{}
}

// startServe starts `baton serve args...` on a free port with the database db and waits for its
// URL. Cleanup kills it if the test has not.
func startServe(t *testing.T, db string, args ...string) *baton {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"serve", "--addr", "127.0.0.1:0", "--db", db}, args...)...)
	cmd.Env = append(os.Environ(), runMainEnv+"=1")
	var stdout, stderr lockedBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	b := &baton{cmd: cmd, exited: make(chan struct{})}
	go func() {
		cmd.Wait()
		close(b.exited)
	}()
	t.Cleanup(b.kill)
	deadline := time.Now().Add(30 * time.Second)
	for {
		if m := servingLine.FindStringSubmatch(stdout.String()); m != nil {
			b.base = m[1]
			return b
		}
		if time.Now().After(deadline) {
			t.Fatalf("no URL printed within 30s; stdout %q, stderr %q", stdout.String(), stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// kill ends the process with SIGKILL, as a crash would, and waits for it.
func (b *baton) kill() {
	b.cmd.Process.Kill()
	<-b.exited
}

// do sends a request and returns the status and body.
func (b *baton) do(t *testing.T, method, path, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, b.base+strings.TrimPrefix(path, "/"), strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var buf bytes.Buffer
	buf.ReadFrom(res.Body)
	return res.StatusCode, buf.Bytes()
}

// runs lists the runs the query selects.
func (b *baton) runs(t *testing.T, query string) []live.RunSummary {
	t.Helper()
	status, body := b.do(t, http.MethodGet, "/api/runs?"+query, "")
	var runs []live.RunSummary
	if err := json.Unmarshal(body, &runs); status != http.StatusOK || err != nil {
		t.Fatalf("GET /api/runs?%s: %d %s", query, status, body)
	}
	return runs
}

// start starts a run of flow at pace ms and returns its id.
func (b *baton) start(t *testing.T, flow string, paceMS int) string {
	t.Helper()
	status, body := b.do(t, http.MethodPost, "/api/runs", `{"flow":"`+flow+`","pace_ms":`+strconv.Itoa(paceMS)+`}`)
	var created struct{ ID string }
	if err := json.Unmarshal(body, &created); status != http.StatusCreated || err != nil {
		t.Fatalf("start %s: %d %s", flow, status, body)
	}
	return created.ID
}

// waitFor polls until ok or fails the test after 20 s.
func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 20s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A server killed with SIGKILL, with one run over and one going on, then started again on the
// same database: both runs are listed, their pages and traces work, the finished one's trace is
// byte for byte what it was, and the one cut short is interrupted with what it had recorded.
func TestRestartKeepsEveryRun(t *testing.T) {
	db := filepath.Join(t.TempDir(), "baton.db")
	first := startServe(t, db)
	done := first.start(t, "supervisor", 0)
	waitFor(t, "the quick run completes", func() bool {
		runs := first.runs(t, "status=completed")
		return len(runs) == 1 && runs[0].ID == done
	})
	cut := first.start(t, "agenttool", 2000)
	waitFor(t, "the slow run records its first model call", func() bool {
		runs := first.runs(t, "status=running")
		return len(runs) == 1 && runs[0].Events >= 3
	})
	_, before := first.do(t, http.MethodGet, "/api/runs/"+done+"/trace", "")
	first.kill()

	second := startServe(t, db)
	runs := second.runs(t, "")
	if len(runs) != 2 || runs[0].ID != cut || runs[1].ID != done {
		t.Fatalf("after the restart %d runs are listed, want %s then %s: %+v", len(runs), cut, done, runs)
	}
	if r := runs[0]; r.Status != traces.StatusInterrupted || r.EndedAt == nil || !strings.Contains(r.Error, "Baton stopped") {
		t.Errorf("the run cut short is listed as %s (%q), want interrupted by the stop", r.Status, r.Error)
	}
	if r := runs[1]; r.Status != traces.StatusCompleted || r.Transfers != 4 || r.Tokens == 0 || r.Agents != 3 {
		t.Errorf("the completed run is listed as %+v", r)
	}
	status, after := second.do(t, http.MethodGet, "/api/runs/"+done+"/trace", "")
	if status != http.StatusOK || !bytes.Equal(after, before) {
		t.Errorf("the completed run's trace after the restart: %d, same bytes: %v", status, bytes.Equal(after, before))
	}
	status, body := second.do(t, http.MethodGet, "/api/runs/"+cut+"/trace", "")
	tr, err := traces.Unmarshal(body)
	if status != http.StatusOK || err != nil {
		t.Fatalf("the interrupted run's trace: %d %v", status, err)
	}
	if last := tr.Events[len(tr.Events)-1]; tr.Run.Status != traces.StatusInterrupted || last.Kind != traces.KindRunFinished || len(tr.Events) < 4 {
		t.Errorf("the interrupted run's trace: status %s, %d events ending with %s", tr.Run.Status, len(tr.Events), last.Kind)
	}
	for _, id := range []string{done, cut} {
		status, page := second.do(t, http.MethodGet, "/runs/"+id, "")
		doc, err := goquery.NewDocumentFromReader(bytes.NewReader(page))
		if status != http.StatusOK || err != nil || doc.Find(`[data-testid^="node-"]`).Length() == 0 {
			t.Errorf("page of run %s after the restart: %d, %v, no agent tree", id, status, err)
		}
	}
	// A run can be deleted after the restart, and stays deleted.
	if status, body := second.do(t, http.MethodDelete, "/api/runs/"+done, ""); status != http.StatusNoContent {
		t.Errorf("DELETE: %d %s", status, body)
	}
	if status, _ := second.do(t, http.MethodGet, "/runs/"+done, ""); status != http.StatusNotFound {
		t.Errorf("page of a deleted run: %d, want 404", status)
	}
}

// A trace imported into the database exports as the same bytes; imported again, its id is taken,
// so it gets a new one and otherwise exports the same.
func TestExportImportRoundTrip(t *testing.T) {
	const file = "../../traces/testdata/v2/supervisor.trace.json" // the version Baton writes
	dir := t.TempDir()
	db := filepath.Join(dir, "baton.db")
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	baton := func(args ...string) string {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if code := cli.Run(context.Background(), append(args, "--db", db), &stdout, &stderr); code != 0 {
			t.Fatalf("baton %s: exit %d: %s", strings.Join(args, " "), code, stderr.String())
		}
		return stdout.String()
	}
	const id = "run-20260314-093000-7f3a"
	if out := baton("import", file); !strings.Contains(out, "imported run "+id) {
		t.Errorf("import said %q", out)
	}
	exported := filepath.Join(dir, "out.trace.json")
	baton("export", id, "--out", exported)
	if got, _ := os.ReadFile(exported); !bytes.Equal(got, want) {
		t.Errorf("export after import differs from the file:\n%s", got)
	}
	out := baton("import", exported)
	again := regexpRunID.FindStringSubmatch(out)
	if again == nil || again[1] == id || !strings.Contains(out, "was taken") {
		t.Fatalf("second import said %q: want a new id and why", out)
	}
	got := baton("export", again[1])
	if strings.Replace(got, again[1], id, 1) != string(want) {
		t.Errorf("the re-imported run exports differently:\n%s", got)
	}

	var stderr bytes.Buffer
	if code := cli.Run(context.Background(), []string{"export", "r-nope", "--db", db}, &bytes.Buffer{}, &stderr); code == 0 || !strings.Contains(stderr.String(), `run "r-nope" not found`) {
		t.Errorf("export of an unknown run: exit %d, %q", code, stderr.String())
	}
	stderr.Reset()
	if code := cli.Run(context.Background(), []string{"export", id, "--db", filepath.Join(dir, "none.db")}, &bytes.Buffer{}, &stderr); code == 0 || !strings.Contains(stderr.String(), "no database of runs at") {
		t.Errorf("export from a missing database: exit %d, %q", code, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "none.db")); !os.IsNotExist(err) {
		t.Errorf("export created the database it was asked to read: %v", err)
	}
	stderr.Reset()
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"format":"baton.trace","version":1,"run":{"id":""},"agents":[],"events":[]}`), 0o644)
	if code := cli.Run(context.Background(), []string{"import", bad, "--db", db}, &bytes.Buffer{}, &stderr); code == 0 || !strings.Contains(stderr.String(), "run.id is empty") {
		t.Errorf("import of a bad file: exit %d, %q", code, stderr.String())
	}
	if n := len(listStored(t, db)); n != 2 {
		t.Errorf("%d runs stored, want the 2 imported", n)
	}
}

var regexpRunID = regexp.MustCompile(`imported run (\S+)`)

// listStored lists the runs of database db through a server started on it in this process.
func listStored(t *testing.T, db string) []live.RunSummary {
	t.Helper()
	b := startServe(t, db)
	defer b.kill()
	return b.runs(t, "")
}

// export --html writes the run's report: a page of the trace's timeline that embeds the trace
// file itself, with a CSP that allows nothing remote.
func TestExportHTMLReport(t *testing.T) {
	const file = "../../traces/testdata/v2/supervisor.trace.json"
	dir := t.TempDir()
	db := filepath.Join(dir, "baton.db")
	var stdout, stderr bytes.Buffer
	if code := cli.Run(context.Background(), []string{"import", file, "--db", db}, &stdout, &stderr); code != 0 {
		t.Fatalf("import: exit %d: %s", code, stderr.String())
	}
	want := readTraceFile(t, file)
	out := filepath.Join(dir, "report.html")
	if code := cli.Run(context.Background(), []string{"export", want.Run.ID, "--html", "--out", out, "--db", db}, &stdout, &stderr); code != 0 {
		t.Fatalf("export --html: exit %d: %s", code, stderr.String())
	}
	html, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(html))
	if err != nil {
		t.Fatal(err)
	}
	packed := map[string]int{}
	doc.Find(`[data-testid=report-pack]`).Each(func(_ int, p *goquery.Selection) {
		var keys []string
		if err := json.Unmarshal([]byte(p.AttrOr("data-keys", "")), &keys); err != nil {
			t.Errorf("a pack's keys %q: %v", p.AttrOr("data-keys", ""), err)
		}
		packed[p.AttrOr("data-kind", "")] += len(keys)
	})
	if packed["inspection"] != len(want.Events) || packed["rows"] == 0 || packed["frame"] != len(want.Events) {
		t.Errorf("packs of %v, want an inspection and a frame per event (%d), and rows", packed, len(want.Events))
	}
	got, err := templates.ReadReportTrace(html)
	if err != nil {
		t.Fatalf("the embedded trace does not read back: %v", err)
	}
	if got.Run.ID != want.Run.ID || len(got.Events) != len(want.Events) {
		t.Errorf("the embedded trace is run %s with %d events, want %s with %d", got.Run.ID, len(got.Events), want.Run.ID, len(want.Events))
	}
	csp, _ := doc.Find(`meta[http-equiv="Content-Security-Policy"]`).Attr("content")
	if !strings.HasPrefix(csp, "default-src 'none';") || strings.Contains(csp, "http") || strings.Contains(csp, "unsafe") {
		t.Errorf("CSP %q: want default-src 'none' and only hashes", csp)
	}
}
