package postgres_test

import (
	"testing"

	"github.com/baton-dev/baton/internal/live"
	"github.com/baton-dev/baton/internal/postgres"
	"github.com/baton-dev/baton/internal/postgres/pgtest"
	"github.com/baton-dev/baton/internal/storetest"
)

// BenchmarkWrite: events a second one server writes into PostgreSQL, on a cluster of its own with
// PostgreSQL's durable defaults (each commit flushed), beside SQLite's BenchmarkWrite.
//
//	go test ./internal/postgres -run '^$' -bench Write -count 5
func BenchmarkWrite(b *testing.B) {
	c, err := pgtest.Start(pgtest.Options{Durable: true})
	if err != nil {
		if _, berr := pgtest.Bin(); berr != nil && !pgtest.Required() {
			b.Skip(berr)
		}
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Stop() })
	storetest.BenchWrite(b, func(b *testing.B) live.Store {
		url, err := c.NewDatabase()
		if err != nil {
			b.Fatal(err)
		}
		s, err := postgres.Open(url, -1)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		return s
	})
}
