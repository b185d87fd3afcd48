package postgres

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/baton-dev/baton/internal/live"
	"github.com/baton-dev/baton/traces"
)

// How servers on one database share it. Each holds a lease, its row in baton_servers, which it
// renews every LeaseTimes.Heartbeat; a lease not renewed for its own LeaseTimes.Expiry, by the
// database's clock, has expired: its server is taken for dead, and the first server to notice
// ends its running runs interrupted (Recover), after their last committed event. Each lease
// carries its expiry, so that servers set up alike or not judge each other by the same rule.

// LeaseTimes are how often a server renews its lease on the database, and how long the lease
// lasts unrenewed: how soon after a server dies its runs are ended, against how long a server
// may be cut off from the database (or paused) before its runs are taken for a dead one's.
type LeaseTimes struct {
	Heartbeat time.Duration
	Expiry    time.Duration
	// AppWait is how long a run an app streams (one with a session hash) waits for its app once
	// the server recording it has stopped, counted from the run's last write, before this
	// server ends it interrupted: the app may carry its run on at another server meanwhile
	// (TakeOver). DefaultAppWait when 0.
	AppWait time.Duration
}

// DefaultLeaseTimes are `baton serve`'s: a heartbeat every 5 s, expiry after 30 s, an app's run
// waiting DefaultAppWait.
var DefaultLeaseTimes = LeaseTimes{Heartbeat: 5 * time.Second, Expiry: 30 * time.Second, AppWait: DefaultAppWait}

// DefaultAppWait is LeaseTimes.AppWait by default: as long as a server waits for a quiet app
// (server.DefaultIngestTimeout).
const DefaultAppWait = 30 * time.Second

// The bounds of LeaseTimes.AppWait: shorter, an app retrying its posts (each second while it is
// told another server records the run) may find its run ended before it is let in; longer, a dead
// server's app runs show running for hours.
const (
	minAppWait = time.Second
	maxAppWait = 24 * time.Hour
)

// Lease times that Check refuses: a heartbeat shorter than minHeartbeat would write the database
// for little gain, and an expiry shorter than minBeats heartbeats would take a server that is a
// heartbeat late (a slow database, a paused process) for dead.
const (
	minHeartbeat = 100 * time.Millisecond
	minBeats     = 3
)

// Check returns a *traces.Error with CodeInvalid, saying what to change, when t cannot serve.
func (t LeaseTimes) Check() error {
	if t.Heartbeat < minHeartbeat {
		return traces.Errorf(traces.CodeInvalid, "the lease heartbeat %s is shorter than %s: each one writes the database", t.Heartbeat, minHeartbeat)
	}
	if t.Expiry < minBeats*t.Heartbeat {
		return traces.Errorf(traces.CodeInvalid, "the lease expiry %s is shorter than %d heartbeats (%s): a server one heartbeat late"+
			" would be taken for dead and its runs ended", t.Expiry, minBeats, minBeats*t.Heartbeat)
	}
	if t.AppWait != 0 && (t.AppWait < minAppWait || t.AppWait > maxAppWait) {
		return traces.Errorf(traces.CodeInvalid, "the wait for an app (%s) is not between %s (an app retrying each second may find its run"+
			" ended) and %s", t.AppWait, minAppWait, maxAppWait)
	}
	return nil
}

// Lease is a server's hold on a database that other servers may share: its row in
// baton_servers, renewed by a heartbeat, and the owner of the runs it writes. Each beat also
// takes over the runs of servers whose lease has expired. Unlike SQLite's lock, it refuses no
// one: any number of `baton serve` write one PostgreSQL database.
type Lease struct {
	s     *Store
	log   *slog.Logger
	times LeaseTimes
	mu    sync.Mutex // guards address
	addr  string
	stop  chan struct{}
	done  chan struct{}
	close sync.Once
}

// Claim takes a lease on the database for this store's server, which serves at address (""
// until it knows), renewed and expiring as times say (see LeaseTimes.Check, which it applies);
// log receives what happens to it later: runs taken over, a lease that lapsed. Release gives it
// up. Claim it once.
func (s *Store) Claim(address string, times LeaseTimes, log *slog.Logger) (*Lease, error) {
	if err := times.Check(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.Default()
	}
	s.expiry.Store(int64(times.Expiry))
	if times.AppWait != 0 {
		s.appWait.Store(int64(times.AppWait))
	}
	l := &Lease{s: s, log: log, times: times, addr: address, stop: make(chan struct{}), done: make(chan struct{})}
	if _, err := l.renew(); err != nil {
		return nil, s.fault(fmt.Errorf("take a lease on the database: %w", err))
	}
	go l.beat()
	return l, nil
}

// renew renews the lease, taking it anew when its row is gone: deleted by another server that
// took this one for dead. It reports whether the lease was still held.
func (l *Lease) renew() (bool, error) {
	ctx, cancel := ctx()
	defer cancel()
	l.mu.Lock()
	addr := l.addr
	l.mu.Unlock()
	var held bool
	err := l.s.pool.QueryRow(ctx, `WITH old AS (SELECT heartbeat > now() - make_interval(secs => expiry) AS live
			FROM baton_servers WHERE id = $1)
		INSERT INTO baton_servers AS s (id, address, heartbeat, expiry) VALUES ($1, $2, now(), $3)
		ON CONFLICT (id) DO UPDATE SET address = $2, heartbeat = now(), expiry = $3
		RETURNING coalesce((SELECT live FROM old), false)`,
		l.s.server, addr, l.times.Expiry.Seconds()).Scan(&held)
	return held, err
}

// beat renews the lease every heartbeat until Release, takes over the runs of expired leases,
// and logs what changes: a lease it could not renew, or found expired.
func (l *Lease) beat() {
	defer close(l.done)
	t := time.NewTicker(l.times.Heartbeat)
	defer t.Stop()
	failing := false
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
		}
		held, err := l.renew()
		switch {
		case err != nil:
			if !failing {
				l.log.Warn("cannot renew this server's lease on the database; other servers end its runs if it stays so for "+
					l.times.Expiry.String(), "database", l.s.name, "cause", traces.ErrorMessage(l.s.fault(err)))
			}
			failing = true
			continue
		case !held:
			l.log.Error("this server's lease on the database had expired: other servers may have ended its running runs",
				"database", l.s.name)
		case failing:
			l.log.Info("renewed this server's lease on the database again", "database", l.s.name)
		}
		failing = false
		ctx, cancel := ctx()
		n, err := l.s.Recover(ctx)
		cancel()
		if err != nil {
			l.log.Warn("cannot take over the runs of stopped servers", "database", l.s.name, "cause", traces.ErrorMessage(err))
		} else if n > 0 {
			l.log.Info("runs of a server whose lease expired are now interrupted", "runs", n)
		}
	}
}

// SetAddress records where the lease's server serves, once it listens.
func (l *Lease) SetAddress(address string) error {
	l.mu.Lock()
	l.addr = address
	l.mu.Unlock()
	ctx, cancel := ctx()
	defer cancel()
	_, err := l.s.pool.Exec(ctx, `UPDATE baton_servers SET address = $2 WHERE id = $1`, l.s.server, address)
	return l.s.fault(err)
}

// halt stops the heartbeat, leaving the lease to expire.
func (l *Lease) halt() {
	l.close.Do(func() { close(l.stop) })
	<-l.done
}

// Release gives the lease up: the runs the server left running (it ends them first when it can)
// are then any other server's to end at once, without waiting for the lease to expire.
func (l *Lease) Release() error {
	if l == nil {
		return nil
	}
	l.halt()
	ctx, cancel := ctx()
	defer cancel()
	_, err := l.s.pool.Exec(ctx, `DELETE FROM baton_servers WHERE id = $1`, l.s.server)
	return l.s.fault(err)
}

// recoverRuns is Recover; it takes the running runs whose server's lease has expired (or that
// have none: a store that holds no lease, an older Baton), marking them this store's, and ends
// each interrupted, with a run.finished saying so after its last saved event; an app's run only
// once nothing was written to it for LeaseTimes.AppWait (Claim's; DefaultAppWait without). Taking
// them is one statement, so two servers that notice at once end each run once. It then forgets the leases that expired.
func (s *Store) recoverRuns(ctx context.Context) (int, error) {
	rows, err := s.pool.Query(ctx, `UPDATE baton_runs SET owner = $1 WHERE status = 'running' AND (owner IS NULL
		OR owner NOT IN (SELECT id FROM baton_servers WHERE heartbeat > now() - make_interval(secs => expiry)))
		AND (session IS NULL OR saved_at < $2)
		RETURNING id`, s.server, time.Now().Add(-time.Duration(s.appWait.Load())).UnixNano())
	if err != nil {
		return 0, fmt.Errorf("recover runs: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return 0, fmt.Errorf("recover runs: %w", err)
	}
	for i, id := range ids {
		if err := s.endStopped(ctx, id); err != nil {
			// Give the rest back to whoever recovers next, this store included.
			s.pool.Exec(ctx, `UPDATE baton_runs SET owner = NULL WHERE id = ANY($1) AND status = 'running'`, ids[i:])
			return i, fmt.Errorf("recover run %s: %w", id, err)
		}
	}
	if _, err := s.pool.Exec(ctx, `DELETE FROM baton_servers WHERE heartbeat < now() - make_interval(secs => expiry)`); err != nil {
		return len(ids), fmt.Errorf("recover runs: %w", err)
	}
	return len(ids), nil
}

// endStopped ends run id, left running by a server that stopped, interrupted.
func (s *Store) endStopped(ctx context.Context, id string) error {
	_, tr, err := s.load(ctx, id)
	if err != nil {
		return err
	}
	run, tally, end := live.StoppedEnd(tr)
	return s.save(run, tally, nil, []traces.Event{end})
}

// takeOver is TakeOver: one statement, so that of two servers taking run id at once one does.
func (s *Store) takeOver(id string) (bool, error) {
	ctx, cancel := ctx()
	defer cancel()
	tag, err := s.pool.Exec(ctx, `UPDATE baton_runs SET owner = $1 WHERE id = $2 AND status = 'running' AND (owner IS NULL OR owner = $1
		OR owner NOT IN (SELECT id FROM baton_servers WHERE heartbeat > now() - make_interval(secs => expiry)))`, s.server, text(id))
	if err != nil {
		return false, fmt.Errorf("take over run %s: %w", id, err)
	}
	return tag.RowsAffected() == 1, nil
}

// ownerStopped is OwnerStopped.
func (s *Store) ownerStopped(id string) (bool, error) {
	ctx, cancel := waitCtx()
	defer cancel()
	var stopped bool
	err := s.pool.QueryRow(ctx, `SELECT status = 'running' AND (owner IS NULL OR owner NOT IN
		(SELECT id FROM baton_servers WHERE heartbeat > now() - make_interval(secs => expiry))) FROM baton_runs WHERE id = $1`,
		text(id)).Scan(&stopped)
	if isNoRows(err) {
		return false, notFound(id)
	}
	if err != nil {
		return false, fmt.Errorf("read the owner of run %s: %w", id, err)
	}
	return stopped, nil
}

// owner is Owner: the address of the live server, not this one, that last wrote run id while it
// runs or waits at an interrupt. A server that has not said where it serves yet ("") counts as
// none.
func (s *Store) owner(id string) (string, error) {
	ctx, cancel := waitCtx()
	defer cancel()
	var addr string
	err := s.pool.QueryRow(ctx, `SELECT s.address FROM baton_runs r JOIN baton_servers s ON s.id = r.owner
		WHERE r.id = $1 AND r.status IN ('running', 'interrupted') AND r.owner <> $2
		AND s.heartbeat > now() - make_interval(secs => s.expiry)`, text(id), s.server).Scan(&addr)
	if isNoRows(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read the server of run %s: %w", id, err)
	}
	return addr, nil
}
