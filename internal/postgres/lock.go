package postgres

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/baton-dev/baton/traces"
)

// serveLock is the advisory lock that the one server writing a database's runs holds.
const serveLock int64 = 0x6261746f6e03 // "baton" 3

// lockCheck is how often a Lock checks that it still holds the lock.
var lockCheck = 5 * time.Second

// Lock is a server's claim on a database: as with SQLite, one `baton serve` writes a database's
// runs, since each ends at its start the runs it finds running (Recover) and keeps its runs'
// state in memory. It is a session advisory lock held on a connection of its own, whose
// application_name says who holds it, for the message a second server gets. PostgreSQL lets the
// lock go when that connection ends: however the server ends, and also when PostgreSQL restarts
// or the network cuts it, so the Lock checks its connection and takes the lock again, logging
// the loss, and an error should another server have taken it meanwhile.
type Lock struct {
	s       *Store
	log     *slog.Logger
	address string // guarded by mu
	conn    *pgx.Conn
	mu      sync.Mutex // guards conn, address
	stop    chan struct{}
	done    chan struct{}
}

// Claim takes the database's lock for this process, which serves at address ("" until it
// knows); log receives what happens to it later. It fails with CodeUnavailable, naming the
// holder, when another server holds it. Release lets it go.
func (s *Store) Claim(address string, log *slog.Logger) (*Lock, error) {
	if log == nil {
		log = slog.Default()
	}
	l := &Lock{s: s, log: log, address: address, stop: make(chan struct{}), done: make(chan struct{})}
	got, err := l.take()
	if err != nil {
		return nil, s.fault(fmt.Errorf("lock the database: %w", err))
	}
	if !got {
		return nil, s.inUse()
	}
	go l.watch()
	return l, nil
}

// take tries to take the lock on a new connection of its own, named for the holder; it keeps
// the connection when it got the lock.
func (l *Lock) take() (bool, error) {
	ctx, cancel := ctx()
	defer cancel()
	pc, err := l.s.pool.Acquire(ctx)
	if err != nil {
		return false, err
	}
	conn := pc.Hijack() // out of the pool: the lock lives as long as this connection
	var got bool
	err = conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, serveLock).Scan(&got)
	if err == nil && got {
		l.mu.Lock()
		l.conn = conn
		l.mu.Unlock()
		if err = l.SetAddress(l.addr()); err == nil {
			return true, nil
		}
	}
	conn.Close(ctx)
	return false, err
}

func (l *Lock) addr() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.address
}

// watch checks the lock's connection every lockCheck until Release, and takes the lock again
// when it was lost, logging each change.
func (l *Lock) watch() {
	defer close(l.done)
	t := time.NewTicker(lockCheck)
	defer t.Stop()
	lost, taken := false, false // taken: another server holds it, as last seen
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
		}
		if !lost {
			ctx, cancel := ctx()
			l.mu.Lock()
			err := l.conn.Ping(ctx)
			l.mu.Unlock()
			cancel()
			if err == nil {
				continue
			}
			lost = true
			l.log.Warn("lost the database's lock with its connection; taking it again", "database", l.s.name, "cause", cause(err))
			l.mu.Lock()
			l.conn.Close(context.Background())
			l.mu.Unlock()
		}
		got, err := l.take()
		switch {
		case got:
			lost, taken = false, false
			l.log.Info("holds the database's lock again", "database", l.s.name)
		case err == nil && !taken:
			taken = true
			l.log.Error("another baton serve took the database's lock while this one had lost it: both now write its runs;"+
				" stop one of them", "database", l.s.name, "holder", traces.ErrorMessage(l.s.inUse()))
		}
	}
}

// inUse is the error of a Claim on a database another server holds, named by its connection.
func (s *Store) inUse() error {
	ctx, cancel := ctx()
	defer cancel()
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
	l.mu.Lock()
	defer l.mu.Unlock()
	l.address = address
	if _, err := l.conn.Exec(ctx, `SELECT set_config('application_name', $1, false)`, name); err != nil {
		return fmt.Errorf("lock the database: %w", err)
	}
	return nil
}

// Release gives the lock up and stops watching it. It unlocks before closing the connection: the
// server's end of a closed connection lets its locks go a moment later, which a server started
// right after this one would find held.
func (l *Lock) Release() error {
	if l == nil {
		return nil
	}
	close(l.stop)
	<-l.done
	ctx, cancel := ctx()
	defer cancel()
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.conn.IsClosed() {
		l.conn.Exec(ctx, `SELECT pg_advisory_unlock($1)`, serveLock) // a lost connection has let it go already
	}
	return l.conn.Close(ctx)
}
