package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/baton-dev/baton/internal/cli"
	"github.com/baton-dev/baton/internal/live"
	"github.com/baton-dev/baton/internal/postgres/pgtest"
	"github.com/baton-dev/baton/traces"
)

// TestServeOnPostgres: `baton serve --db postgres://...` keeps its runs in PostgreSQL; a second
// server on the same database, named by $BATON_DATABASE_URL, starts beside the first (each holds
// a lease), lists the first's run as running and leaves it so; once the first has stopped, the
// second serves the run ended (following it, it reads the end once it is committed), and `baton
// export` reads it from there too.
func TestServeOnPostgres(t *testing.T) {
	db := pgtest.Database(t)
	first := serveHere(t, "--db", db, "--pace", "5s")
	id := startRun(t, first.url)
	t.Setenv("BATON_DATABASE_URL", db)
	second := serveHere(t)
	if st := listedStatus(t, second.url, id); st != traces.StatusRunning {
		t.Errorf("the first server's run is listed by the second as %s; want running", st)
	}
	if st := runStatus(t, first.url, id); st != traces.StatusRunning {
		t.Errorf("the first server's run is %s once a second server started; want running", st)
	}
	going := traceOn(t, second.url, id) // as committed so far
	first.close()

	// The second follows the run: it has the end once the announcement of its commit came.
	var tr traces.Trace
	waitFor(t, "the second server serves the run ended", func() bool {
		tr = traceOn(t, second.url, id)
		return tr.Run.Status.Ended()
	})
	if tr.Run.Status != traces.StatusInterrupted && tr.Run.Status != traces.StatusCanceled ||
		len(tr.Events) <= len(going.Events) {
		t.Errorf("the run read back by the second server is %s with %d events (%d while going on); want it as the first ended it",
			tr.Run.Status, len(tr.Events), len(going.Events))
	}
	if st := listedStatus(t, second.url, id); !st.Ended() {
		t.Errorf("the run listed by the second server is %s; want it ended when the first stopped", st)
	}
	second.close()
	var stdout, stderr bytes.Buffer
	if code := cli.Run(context.Background(), []string{"export", id}, &stdout, &stderr); code != 0 {
		t.Fatalf("export %s: %s", id, stderr.String())
	}
	tr, err := traces.Unmarshal(stdout.Bytes())
	if err != nil || tr.Run.ID != id || len(tr.Events) == 0 {
		t.Errorf("export %s from PostgreSQL: run %q with %d events, %v", id, tr.Run.ID, len(tr.Events), err)
	}
}

// listedStatus returns the status of run id in the run list of the server at base.
func listedStatus(t *testing.T, base, id string) traces.Status {
	t.Helper()
	res, err := http.Get(base + "api/runs")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var runs []live.RunSummary
	if err := json.NewDecoder(res.Body).Decode(&runs); err != nil {
		t.Fatalf("list runs: %d, %v", res.StatusCode, err)
	}
	for _, r := range runs {
		if r.ID == id {
			return r.Status
		}
	}
	t.Fatalf("run %s is not listed by %s: %+v", id, base, runs)
	return ""
}

// traceOn returns the trace of run id as the server at base serves it.
func traceOn(t *testing.T, base, id string) traces.Trace {
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
	return tr
}
