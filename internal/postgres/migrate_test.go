package postgres_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/baton-dev/baton/internal/live"
	"github.com/baton-dev/baton/internal/postgres"
	"github.com/baton-dev/baton/internal/postgres/pgtest"
	"github.com/baton-dev/baton/traces"
)

// exec runs sql on the database at url.
func exec(t *testing.T, url, sql string, args ...any) {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), sql, args...); err != nil {
		t.Fatal(err)
	}
}

// Servers started at once on an empty database create its tables once, under the migration
// lock, and each opens it.
func TestOpenEmptyDatabaseAtOnce(t *testing.T) {
	url := pgtest.Database(t)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() {
			s, err := postgres.Open(url, 0)
			if err == nil {
				s.Close()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("open %d: %v", i, err)
		}
	}
	s, err := postgres.Open(url, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.CheckWrite(); err != nil {
		t.Errorf("CheckWrite: %v", err)
	}
}

// A database of a later schema than this Baton knows is refused, saying so, and left as it is.
func TestOpenRefusesALaterSchema(t *testing.T) {
	s, url := mustOpen(t, 0)
	s.Close()
	exec(t, url, `UPDATE baton_schema SET version = $1`, postgres.SchemaVersion+1)
	_, err := postgres.Open(url, 0)
	if err == nil || !strings.Contains(err.Error(), "run a newer Baton") {
		t.Errorf("Open of a later schema: %v; want it refused", err)
	}
}

// A server that cannot be reached is unavailable, worth a retry, named without its password.
func TestOpenUnreachable(t *testing.T) {
	_, err := postgres.Open("postgres://baton:s3cret@/baton?host="+t.TempDir()+"&connect_timeout=2", 0)
	if traces.ErrorCode(err) != traces.CodeUnavailable || retry(err) <= 0 ||
		!strings.Contains(traces.ErrorMessage(err), "cannot be reached") || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("Open of no server: %v; want unavailable, retry, no password", err)
	}
	if _, err := postgres.Open("postgres://%zz", 0); traces.ErrorCode(err) != traces.CodeInvalid {
		t.Errorf("Open of a bad URL: %v; want invalid", err)
	}
}

// retry is the Retry of err's *traces.Error, 0 without one.
func retry(err error) time.Duration {
	var te *traces.Error
	if errors.As(err, &te) {
		return te.Retry
	}
	return 0
}

// A database of schema version 1 (before runs said when they were last written) migrates: its
// runs stay, listed, and count as written at the upgrade, so retention by age keeps them.
func TestMigrateFromVersion1(t *testing.T) {
	s, url := mustOpen(t, 0)
	start := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	events := []traces.Event{
		{Seq: 1, Time: start, Kind: traces.KindRunStarted, Run: &traces.RunMark{Status: traces.StatusRunning}},
		{Seq: 2, Time: start, Kind: traces.KindRunFinished, Run: &traces.RunMark{Status: traces.StatusCompleted}},
	}
	var tally live.Tally
	for _, e := range events {
		tally.Add(e)
	}
	if err := s.Create(tally.Apply(traces.Run{ID: "r-old", Flow: "f", StartedAt: start}), tally, nil, events); err != nil {
		t.Fatal(err)
	}
	s.Close()
	exec(t, url, `ALTER TABLE baton_runs DROP COLUMN saved_at, DROP COLUMN owner, DROP COLUMN session, DROP COLUMN usage; DROP TABLE baton_servers;
		DROP TABLE baton_next_breakpoints; UPDATE baton_schema SET version = 1`)

	s, err := postgres.Open(url, 0)
	if err != nil {
		t.Fatalf("open a version-1 database: %v", err)
	}
	defer s.Close()
	s.KeepFor(time.Hour)
	if err := s.Create(tally.Apply(traces.Run{ID: "r-new", Flow: "f", StartedAt: start}), tally, nil, events); err != nil {
		t.Fatal(err)
	}
	p, err := s.List(live.RunQuery{})
	if err != nil || len(p.Runs) != 2 || p.Runs[1].ID != "r-old" {
		t.Fatalf("List after the migration = %+v, %v: want r-new and r-old", p.Runs, err)
	}
	if tr, err := s.Load("r-old"); err != nil || len(tr.Events) != 2 {
		t.Errorf("Load(r-old) after the migration: %d events, %v", len(tr.Events), err)
	}
}

// A database of schema version 2 (before leases) migrates: a run an older Baton left running,
// which has no owner, counts as a stopped server's, and a leased server's Recover ends it.
func TestMigrateFromVersion2(t *testing.T) {
	s, url := mustOpen(t, 0)
	start := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	events := []traces.Event{{Seq: 1, Time: start, Kind: traces.KindRunStarted, Run: &traces.RunMark{Status: traces.StatusRunning}}}
	var tally live.Tally
	tally.Add(events[0])
	if err := s.Create(tally.Apply(traces.Run{ID: "r-old", Flow: "f", StartedAt: start}), tally, nil, events); err != nil {
		t.Fatal(err)
	}
	s.Close()
	exec(t, url, `ALTER TABLE baton_runs DROP COLUMN owner, DROP COLUMN session, DROP COLUMN usage; DROP TABLE baton_servers;
		DROP TABLE baton_next_breakpoints; UPDATE baton_schema SET version = 2`)

	s, err := postgres.Open(url, 0)
	if err != nil {
		t.Fatalf("open a version-2 database: %v", err)
	}
	defer s.Close()
	l, err := s.Claim("", postgres.DefaultLeaseTimes, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	if n, err := s.Recover(context.Background()); err != nil || n != 1 {
		t.Errorf("Recover after the migration = %d, %v; want the older Baton's running run", n, err)
	}
}

// A database of schema version 3 (before runs kept their session's hash) migrates: its runs have
// none, and take one.
func TestMigrateFromVersion3(t *testing.T) {
	s, url := mustOpen(t, 0)
	start := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	events := []traces.Event{{Seq: 1, Time: start, Kind: traces.KindRunStarted, Run: &traces.RunMark{Status: traces.StatusRunning}}}
	var tally live.Tally
	tally.Add(events[0])
	if err := s.Create(tally.Apply(traces.Run{ID: "r-old", Flow: "f", StartedAt: start}), tally, nil, events); err != nil {
		t.Fatal(err)
	}
	s.Close()
	exec(t, url, `ALTER TABLE baton_runs DROP COLUMN session, DROP COLUMN usage; ALTER TABLE baton_servers DROP COLUMN expiry;
		DROP TABLE baton_next_breakpoints; UPDATE baton_schema SET version = 3`)

	s, err := postgres.Open(url, 0)
	if err != nil {
		t.Fatalf("open a version-3 database: %v", err)
	}
	defer s.Close()
	if h, err := s.SessionHash("r-old"); err != nil || h != nil {
		t.Errorf("SessionHash(r-old) after the migration = %x, %v; want none", h, err)
	}
	if err := s.SetSessionHash("r-old", []byte{1}); err != nil {
		t.Errorf("SetSessionHash(r-old) after the migration: %v", err)
	}
}

// While its server is down, the store's calls fail as unavailable, worth a retry, saying the
// database cannot be reached (the server maps that to 503 with Retry-After).
// A database of schema version 4 (before runs kept their tokens by model) migrates: its runs
// list with no usage (tokens, no money), and a run created after keeps its usage.
func TestMigrateFromVersion4(t *testing.T) {
	s, url := mustOpen(t, 0)
	start := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	events := []traces.Event{
		{Seq: 1, Time: start, Kind: traces.KindRunStarted, Run: &traces.RunMark{Status: traces.StatusRunning}},
		{Seq: 2, Time: start, Kind: traces.KindModelFinished, Agent: "a", Model: &traces.ModelCall{ID: "m1", Name: "gpt-4o",
			Usage: &traces.Usage{PromptTokens: 30, CompletionTokens: 12, TotalTokens: 42}}},
	}
	var tally live.Tally
	for _, e := range events {
		tally.Add(e)
	}
	if err := s.Create(tally.Apply(traces.Run{ID: "r-old", Flow: "f", StartedAt: start}), tally, nil, events); err != nil {
		t.Fatal(err)
	}
	s.Close()
	exec(t, url, `ALTER TABLE baton_runs DROP COLUMN usage; ALTER TABLE baton_servers DROP COLUMN expiry;
		DROP TABLE baton_next_breakpoints; UPDATE baton_schema SET version = 4`)

	s, err := postgres.Open(url, 0)
	if err != nil {
		t.Fatalf("open a version-4 database: %v", err)
	}
	defer s.Close()
	if err := s.Create(tally.Apply(traces.Run{ID: "r-new", Flow: "f", StartedAt: start}), tally, nil, events); err != nil {
		t.Fatal(err)
	}
	p, err := s.List(live.RunQuery{})
	if err != nil || len(p.Runs) != 2 {
		t.Fatalf("List after the migration = %+v, %v", p.Runs, err)
	}
	want := []live.ModelTokens{{Model: "gpt-4o", Prompt: 30, Completion: 12}}
	if got := p.Runs[0].Usage; !slices.Equal(got, want) {
		t.Errorf("r-new's usage = %+v, want %+v", got, want)
	}
	if old := p.Runs[1]; old.ID != "r-old" || old.Usage != nil || old.Tokens != 42 {
		t.Errorf("r-old after the migration = %+v: want its tokens and no usage", old)
	}
}

// While its server is down, the store's calls fail as unavailable, worth a retry, saying the
// database cannot be reached (the server maps that to 503 with Retry-After).
func TestServerDown(t *testing.T) {
	c, err := pgtest.Start(pgtest.Options{})
	if err != nil {
		if _, berr := pgtest.Bin(); berr != nil && !pgtest.Required() {
			t.Skip(berr)
		}
		t.Fatal(err)
	}
	url, err := c.NewDatabase()
	if err != nil {
		c.Stop()
		t.Fatal(err)
	}
	s, err := postgres.Open(url, 0)
	if err != nil {
		c.Stop()
		t.Fatal(err)
	}
	defer s.Close()
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	_, listErr := s.List(live.RunQuery{})
	_, loadErr := s.Load("r-1")
	createErr := s.Create(traces.Run{ID: "r-1", Status: traces.StatusRunning}, live.Tally{}, nil, nil)
	for name, err := range map[string]error{"List": listErr, "Load": loadErr, "Create": createErr} {
		if traces.ErrorCode(err) != traces.CodeUnavailable || retry(err) <= 0 || !strings.Contains(traces.ErrorMessage(err), "cannot be reached") {
			t.Errorf("%s with the server down: %v; want unavailable, cannot be reached, worth a retry", name, err)
		}
	}
}

// A database of schema version 5 (leases without an expiry of their own) migrates: the lease of
// an older Baton still on it lasts the 30 s it always did.
func TestMigrateFromVersion5(t *testing.T) {
	s, url := mustOpen(t, 0)
	s.Close()
	exec(t, url, `ALTER TABLE baton_servers DROP COLUMN expiry; DROP TABLE baton_next_breakpoints; UPDATE baton_schema SET version = 5;
		INSERT INTO baton_servers (id, address, heartbeat) VALUES ('older', 'http://older/', now() - interval '20 seconds')`)
	s, err := postgres.Open(url, 0)
	if err != nil {
		t.Fatalf("open a version-5 database: %v", err)
	}
	defer s.Close()
	start := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	events := []traces.Event{{Seq: 1, Time: start, Kind: traces.KindRunStarted, Run: &traces.RunMark{Status: traces.StatusRunning}}}
	var tally live.Tally
	tally.Add(events[0])
	if err := s.Create(tally.Apply(traces.Run{ID: "r-older", Flow: "f", StartedAt: start}), tally, nil, events); err != nil {
		t.Fatal(err)
	}
	exec(t, url, `UPDATE baton_runs SET owner = 'older' WHERE id = 'r-older'`)
	if n, err := s.Recover(context.Background()); err != nil || n != 0 {
		t.Errorf("Recover 20 s after the older Baton's heartbeat = %d, %v; want its run left alone", n, err)
	}
	exec(t, url, `UPDATE baton_servers SET heartbeat = now() - interval '31 seconds' WHERE id = 'older'`)
	if n, err := s.Recover(context.Background()); err != nil || n != 1 {
		t.Errorf("Recover 31 s after it = %d, %v; want its run ended", n, err)
	}
}

// TestMigrateFromVersion6: a database written before it kept breakpoints for apps' next runs
// opens, keeps none, and keeps them from then on, for every server on it.
func TestMigrateFromVersion6(t *testing.T) {
	s, url := mustOpen(t, 0)
	s.Close()
	exec(t, url, `DROP TABLE baton_next_breakpoints; UPDATE baton_schema SET version = 6`)
	s, err := postgres.Open(url, 0)
	if err != nil {
		t.Fatalf("open a version-6 database: %v", err)
	}
	defer s.Close()
	if points, err := s.NextBreakpoints("f"); err != nil || points != nil {
		t.Errorf("NextBreakpoints(f) = %q, %v: want none", points, err)
	}
	if err := s.SetNextBreakpoints("f", []string{"transfer:billing"}); err != nil {
		t.Fatal(err)
	}
	other, err := postgres.Open(url, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if points, err := other.NextBreakpoints("f"); err != nil || !slices.Equal(points, []string{"transfer:billing"}) {
		t.Errorf("another server's NextBreakpoints(f) = %q, %v: want transfer:billing", points, err)
	}
}
