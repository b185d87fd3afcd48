package postgres

import (
	"context"
	"fmt"
	"os"

	"github.com/jackc/pgx/v5"

	"github.com/baton-dev/baton/traces"
)

// serveLock is the advisory lock that the one server writing a database's runs holds.
const serveLock int64 = 0x6261746f6e03 // "baton" 3

// Lock is a server's claim on a database: as with SQLite, one `baton serve` writes a database's
// runs, since each ends at its start the runs it finds running (Recover) and keeps its runs'
// state in memory. It is a session advisory lock held on a connection of its own, which
// PostgreSQL releases when that connection ends, however the server ends. The connection's
// application_name says who holds it, for the message a second server gets.
type Lock struct {
	conn *pgx.Conn
}

// Claim takes the database's lock for this process, which serves at address ("" until it
// knows). It fails with CodeUnavailable, naming the holder, when another server holds it.
func (s *Store) Claim(address string) (*Lock, error) {
	ctx, cancel := ctx()
	defer cancel()
	pc, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, s.fault(fmt.Errorf("lock the database: %w", err))
	}
	l := &Lock{conn: pc.Hijack()} // out of the pool: the lock lives as long as this connection
	var got bool
	if err := l.conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, serveLock).Scan(&got); err != nil {
		l.Release()
		return nil, s.fault(fmt.Errorf("lock the database: %w", err))
	}
	if !got {
		l.Release()
		return nil, s.inUse(ctx)
	}
	if err := l.SetAddress(address); err != nil {
		l.Release()
		return nil, s.fault(err)
	}
	return l, nil
}

// inUse is the error of a Claim on a database another server holds, named by its connection.
func (s *Store) inUse(ctx context.Context) error {
	who := "another baton serve"
	var name, from string
	err := s.pool.QueryRow(ctx, `SELECT a.application_name, coalesce(host(a.client_addr), 'a local socket')
		FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
		WHERE l.locktype = 'advisory' AND l.granted AND (l.classid::bigint << 32 | l.objid::bigint) = $1`, serveLock).Scan(&name, &from)
	if err == nil {
		who = fmt.Sprintf("%s (%s, connected from %s)", who, name, from)
	}
	return &traces.Error{Code: traces.CodeUnavailable, Retry: traces.NoRetry, Message: fmt.Sprintf(
		"the database %s is in use by %s; stop that one, or give this one a database of its own with --db"+
			" (one server writes a database's runs)", s.name, who)}
}

// SetAddress records where the holder serves, once it listens, in its connection's
// application_name.
func (l *Lock) SetAddress(address string) error {
	ctx, cancel := ctx()
	defer cancel()
	name := fmt.Sprintf("baton serve pid %d", os.Getpid())
	if address != "" {
		name += " on " + address
	}
	if _, err := l.conn.Exec(ctx, `SELECT set_config('application_name', $1, false)`, name); err != nil {
		return fmt.Errorf("lock the database: %w", err)
	}
	return nil
}

// Release gives the lock up, closing its connection.
func (l *Lock) Release() error {
	if l == nil {
		return nil
	}
	ctx, cancel := ctx()
	defer cancel()
	return l.conn.Close(ctx)
}
