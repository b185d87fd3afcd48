package postgres_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

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
