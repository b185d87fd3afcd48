package cli_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/baton-dev/baton/internal/cli"
	"github.com/baton-dev/baton/internal/postgres/pgtest"
	"github.com/baton-dev/baton/traces"
)

// TestServeOnPostgres: `baton serve --db postgres://...` keeps its runs in PostgreSQL; a second
// server on the same database, named by $BATON_DATABASE_URL, is refused, naming the first; once
// the first has stopped, a server started with the variable alone lists and serves the first's
// run, and `baton export` reads it from there too.
func TestServeOnPostgres(t *testing.T) {
	db := pgtest.Database(t)
	first := serveHere(t, "--db", db, "--pace", "5s")
	id := startRun(t, first.url)
	t.Setenv("BATON_DATABASE_URL", db)
	msg := refusedServe(t)
	for _, want := range []string{"is in use by another baton serve", "on " + first.url} {
		if !strings.Contains(msg, want) {
			t.Errorf("the second serve was refused with %q; want it to say %q", msg, want)
		}
	}
	if st := runStatus(t, first.url, id); st != traces.StatusRunning {
		t.Errorf("the first server's run is %s after the second was refused; want running", st)
	}
	first.close()

	second := serveHere(t)
	if st := runStatus(t, second.url, id); !st.Ended() {
		t.Errorf("the run read back by the second server is %s; want it ended when the first stopped", st)
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
