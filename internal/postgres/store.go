// Package postgres is Baton's live.Store on a PostgreSQL server (github.com/jackc/pgx/v5), for
// a team that shares one Baton: `baton serve --db postgres://...`. It keeps what internal/sqlite
// keeps, in the same form: each run's metadata and tally in baton_runs, its events in baton_events
// as the compact bytes of traces.EventEncoder, and the text a search looks at (its input, its
// messages) in baton_search under a pg_trgm index, so that a search is a case-folded substring
// match as SQLite's trigram index makes it. Baton creates and migrates its tables itself (migrate.go),
// all named baton_*. Any number of servers may share a database, each holding a lease that the
// others take over its running runs by when it dies (lease.go). Its faults (the server unreachable, a full disk, a read-only standby) are
// traces errors naming the cause (fault.go). Baton's own, not API.
package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/baton-dev/baton/internal/live"
	"github.com/baton-dev/baton/traces"
)

// DefaultKeep is how many runs a store keeps by default, as SQLite's does.
const DefaultKeep = 1000

// opTimeout bounds one call of the store: a server that does not answer fails the call with an
// error instead of holding a request or a run's writer forever.
const opTimeout = 30 * time.Second

// Store is a live.Store on one PostgreSQL database. It is safe for concurrent use: writes of
// different runs go on at once over a pool of connections; those of one run are serialized.
type Store struct {
	pool   *pgxpool.Pool
	name   string // the database as messages show it: no password
	server string // this store's id in baton_servers and as the owner of the runs it writes (lease.go)
	keep   int
	maxAge atomic.Int64 // see KeepFor, in nanoseconds
	expiry atomic.Int64 // of its lease (see Claim), in nanoseconds, for messages
	// appWait is how long an app's run whose server stopped waits for its app (LeaseTimes.AppWait),
	// in nanoseconds
	appWait atomic.Int64

	mu      sync.Mutex         // guards writers
	writers map[string]*writer // of the runs being written

	unlisten func() // stops Listen's goroutine and waits for it; nil without
}

// writer is what the store keeps of a run being written: its key and its event encoder, which
// may refer to the run's earlier events. Its mutex serializes the run's writes.
type writer struct {
	mu    sync.Mutex
	ready bool // key and enc match the database; false after a failed write
	key   int64
	enc   traces.EventEncoder
}

var (
	_ live.Store   = (*Store)(nil)
	_ live.Locator = (*Store)(nil)
)

// Open connects to the database at url (a postgres:// URL or a libpq key=value string), creates
// or migrates Baton's tables, and returns the store. keep is how many runs it keeps (DefaultKeep
// when 0; negative keeps all). A URL that cannot be parsed is CodeInvalid; a server that cannot
// be reached is CodeUnavailable.
func Open(url string, keep int) (*Store, error) {
	if keep == 0 {
		keep = DefaultKeep
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		// pgx's message never repeats the password of the URL it could not parse.
		return nil, traces.Errorf(traces.CodeInvalid, "the database URL is not one PostgreSQL takes: %v", err)
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = 10 * time.Second
	}
	s := &Store{name: displayName(cfg.ConnConfig), server: newServerID(), keep: keep, writers: make(map[string]*writer)}
	s.expiry.Store(int64(DefaultLeaseTimes.Expiry))
	s.appWait.Store(int64(DefaultAppWait))
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	if s.pool, err = pgxpool.NewWithConfig(ctx, cfg); err != nil {
		return nil, s.fault(fmt.Errorf("open store %s: %w", s.name, err))
	}
	if err := s.migrate(ctx); err != nil {
		s.pool.Close()
		return nil, s.fault(fmt.Errorf("open store %s: %w", s.name, err))
	}
	return s, nil
}

// displayName is the database of cfg as a message names it: user, host, port and database.
func displayName(cfg *pgx.ConnConfig) string {
	return fmt.Sprintf("postgres://%s@%s:%d/%s", cfg.User, cfg.Host, cfg.Port, cfg.Database)
}

// newServerID returns a fresh id for a store's server: 16 random hex digits.
func newServerID() string {
	b := make([]byte, 8)
	rand.Read(b) // never fails: crypto/rand panics rather than return an error
	return hex.EncodeToString(b)
}

// KeepFor makes the store delete, besides the runs beyond its count, the runs that have ended and
// were last written more than age ago, by this machine's clock: when a run is added. Zero, the
// default, keeps runs whatever their age.
func (s *Store) KeepFor(age time.Duration) { s.maxAge.Store(int64(age)) }

// Close closes the store's connections, Listen's included, waiting for the calls that use one.
func (s *Store) Close() error {
	if s.unlisten != nil {
		s.unlisten()
	}
	s.pool.Close()
	return nil
}

// ctx is the context of one call of the store.
func ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), opTimeout)
}

// waitTimeout bounds a call that someone waits for: the reads of a page, of the run list, of a
// viewer's next events, of a request passed on to a run's server; the start of a run, a run's
// session, a run's removal. A database that does not answer (stalled, or cut off by the network
// without a reset) makes the request a 503 that says so, not one held for opTimeout. The writes of
// a run's events, which its writer tries again, and an imported trace's, which may be large, keep
// opTimeout.
const waitTimeout = 5 * time.Second

// waitCtx is the context of one call that someone waits for (waitTimeout).
func waitCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), waitTimeout)
}

// writerOf returns the writer of run id, made when missing, locked.
func (s *Store) writerOf(id string) *writer {
	s.mu.Lock()
	w := s.writers[id]
	if w == nil {
		w = &writer{}
		s.writers[id] = w
	}
	s.mu.Unlock()
	w.mu.Lock()
	return w
}

// forget drops the writer of run id, if it is still w (nil for any).
func (s *Store) forget(id string, w *writer) {
	s.mu.Lock()
	if cur := s.writers[id]; cur != nil && (w == nil || cur == w) {
		delete(s.writers, id)
	}
	s.mu.Unlock()
}

// notFound is the error for an unknown run id.
func notFound(id string) error { return traces.Errorf(traces.CodeNotFound, "run %q not found", id) }
