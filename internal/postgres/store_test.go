package postgres_test

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/baton-dev/baton/internal/live"
	"github.com/baton-dev/baton/internal/postgres"
	"github.com/baton-dev/baton/internal/postgres/pgtest"
	"github.com/baton-dev/baton/internal/storetest"
)

func TestMain(m *testing.M) {
	code := pgtest.Main(m)
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// mustOpen opens a store on a new database of the test cluster; cleanup closes it. It returns
// the database's URL too.
func mustOpen(tb testing.TB, keep int) (*postgres.Store, string) {
	tb.Helper()
	url := pgtest.Database(tb)
	s, err := postgres.Open(url, keep)
	if err != nil {
		tb.Fatalf("Open: %v", err)
	}
	tb.Cleanup(func() { s.Close() })
	return s, url
}

// The PostgreSQL store meets the Store contract, as the in-memory and SQLite ones do.
func TestStoreContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T, keep int) live.Store {
		s, _ := mustOpen(t, keep)
		return s
	})
}
