package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/baton-dev/baton/internal/live"
	"github.com/baton-dev/baton/internal/postgres"
	"github.com/baton-dev/baton/internal/sqlite"
	"github.com/baton-dev/baton/traces"
)

// dbFlag adds --db to fs: the database of runs.
func dbFlag(fs *flag.FlagSet) *string {
	return fs.String("db", "", "the database of runs: the file at `PATH`, or a PostgreSQL server's postgres:// URL"+
		` (default: $BATON_DATABASE_URL, else baton/baton.db in the user's data directory; ":memory:" keeps none)`)
}

// keepFlag adds --keep to fs: how many runs the database keeps.
func keepFlag(fs *flag.FlagSet) *int {
	return fs.Int("keep", sqlite.DefaultKeep, "how many runs `N` the database keeps; the oldest added that have ended go first")
}

// advertiseFlag adds --advertise to fs: where the other servers on a PostgreSQL database reach
// this one.
func advertiseFlag(fs *flag.FlagSet) *string {
	return fs.String("advertise", "", "with PostgreSQL, the `URL` (http://HOST:PORT) other servers reach this one at, to pass on"+
		" the requests that act on its runs (default: --addr's, with this machine's host name for a wildcard address)")
}

// advertised returns the base URL other servers reach this one at: advertise when given (checked),
// else served (the server's own URL, whose query is left out) with, for a wildcard address addr,
// this machine's host name.
func advertised(advertise, addr, served string) (string, error) {
	if advertise != "" {
		return checkAdvertise(advertise)
	}
	u, err := url.Parse(served)
	if err != nil {
		return "", fmt.Errorf("this server's URL %q: %w", served, err)
	}
	u.Path, u.RawQuery = "", ""
	if host, _, err := net.SplitHostPort(addr); err == nil {
		if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
			name, err := os.Hostname()
			if err != nil {
				return "", fmt.Errorf("name this machine for --advertise: %w", err)
			}
			u.Host = net.JoinHostPort(name, u.Port())
		}
	}
	return u.String(), nil
}

// checkAdvertise returns the value of --advertise as a base URL, "" when not given, or an error
// saying what to write.
func checkAdvertise(advertise string) (string, error) {
	if advertise == "" {
		return "", nil
	}
	u, err := url.Parse(advertise)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return "", traces.Errorf(traces.CodeInvalid, "--advertise %q is not a base URL such as http://baton1.example:7070", advertise)
	}
	u.Path = ""
	return u.String(), nil
}

// leaseFlags adds --lease-heartbeat, --lease-expiry and --app-wait to fs: a server's lease on a
// PostgreSQL database, and how long the runs apps stream to a server that stopped wait for them.
func leaseFlags(fs *flag.FlagSet) (heartbeat, expiry, appWait *time.Duration) {
	heartbeat = fs.Duration("lease-heartbeat", postgres.DefaultLeaseTimes.Heartbeat,
		"with PostgreSQL, renew this server's lease on the database every `D` (at least 100ms)")
	expiry = fs.Duration("lease-expiry", postgres.DefaultLeaseTimes.Expiry,
		"with PostgreSQL, how long `D` this server's lease lasts unrenewed before other servers end its runs (at least 3 heartbeats)")
	appWait = fs.Duration("app-wait", postgres.DefaultAppWait,
		"with PostgreSQL, how long `D` a run an app streams to a server that stopped waits for its app to carry it on elsewhere,"+
			" from its last write, before it is ended interrupted (1s to 24h)")
	return heartbeat, expiry, appWait
}

// keepDaysFlag adds --keep-days to fs: how long the database keeps runs.
func keepDaysFlag(fs *flag.FlagSet) *int {
	return fs.Int("keep-days", 0, "also delete the runs that ended and were last written more than `D` days ago, when a run is added (0: whatever their age)")
}

// retention is how many runs a database keeps, and for how many days (0: whatever their age).
type retention struct{ keep, days int }

// apply makes s forget runs older than r's days.
func (r retention) apply(s servedStore) servedStore {
	if r.days > 0 {
		s.KeepFor(time.Duration(r.days) * 24 * time.Hour)
	}
	return s
}

// databaseEnv names the database of runs when --db does not.
const databaseEnv = "BATON_DATABASE_URL"

// isPostgres reports whether db is a PostgreSQL URL rather than a file.
func isPostgres(db string) bool {
	return strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://")
}

// store is a database of runs as the commands use it.
type store interface {
	live.Store
	Close() error
}

// servedStore is a database of runs as serve uses it.
type servedStore interface {
	store
	CheckWrite() error
	Recover(ctx context.Context) (int, error)
	KeepFor(age time.Duration)
}

// claim is a server's hold on its database (sqlite.Lock, postgres.Lease).
type claim interface {
	SetAddress(address string) error
	Release() error
}

// openStore opens the database db: a PostgreSQL URL, a file, or the default one when db is empty.
func openStore(db string, r retention) (servedStore, error) {
	db, err := dbPath(db)
	if err != nil {
		return nil, err
	}
	if isPostgres(db) {
		s, err := postgres.Open(db, r.keep)
		if err != nil {
			return nil, err
		}
		return r.apply(s), nil
	}
	s, err := sqlite.Open(db, r.keep)
	if err != nil {
		return nil, err
	}
	return r.apply(s), nil
}

// dbPath returns db, or else $BATON_DATABASE_URL, or else the default database's path.
func dbPath(db string) (string, error) {
	if db != "" {
		return db, nil
	}
	if env := os.Getenv(databaseEnv); env != "" {
		return env, nil
	}
	return sqlite.DefaultPath()
}

// storedBroker claims the database that serve keeps its runs in (one server per SQLite file: a
// second, the default database's too, is refused with the first one's pid and address; any number
// on PostgreSQL, each with a lease), opens it, checks it can be written, ends the runs a stopped
// server left running (on PostgreSQL, those of expired leases), and returns a broker that writes
// to it (and, on PostgreSQL, follows live the runs other servers record there), with the claim,
// nil for a database in memory (its address is the caller's to set once it listens). close waits for the last events to be written, then closes
// the database and lets the claim go; later calls return the first one's result.
func storedBroker(ctx context.Context, db string, r retention, lease postgres.LeaseTimes, log *slog.Logger) (b *live.Broker, lock claim, close func() error, err error) {
	if db, err = dbPath(db); err != nil {
		return nil, nil, nil, err
	}
	store, lock, err := claimStore(db, r, lease, log)
	if err != nil {
		return nil, nil, nil, err
	}
	release := func() error {
		if lock == nil {
			return nil
		}
		return lock.Release()
	}
	fail := func(err error) (*live.Broker, claim, func() error, error) {
		release()
		store.Close()
		return nil, nil, nil, err
	}
	if err := store.CheckWrite(); err != nil {
		return fail(err)
	}
	if n, err := store.Recover(ctx); err != nil {
		return fail(err)
	} else if n > 0 {
		log.Info("runs left running by a stopped Baton are now interrupted", "runs", n)
	}
	b = live.NewStoredBroker(0, store, log)
	if pg, ok := store.(*postgres.Store); ok {
		// Other servers record runs in it too: their viewers here follow them live, each run
		// read from the database as its commits are announced.
		b.Follow(pg, live.DefaultFollowCheck)
		pg.Listen(b.Committed, log)
	}
	return b, lock, sync.OnceValue(func() error {
		wctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return errors.Join(b.Close(wctx), release(), store.Close())
	}), nil
}

// claimStore opens the database db and claims it for this server: a file's lock is taken before
// it is opened, a PostgreSQL database's lease, with the times lease, once connected.
func claimStore(db string, r retention, lease postgres.LeaseTimes, log *slog.Logger) (servedStore, claim, error) {
	if isPostgres(db) {
		s, err := postgres.Open(db, r.keep)
		if err != nil {
			return nil, nil, err
		}
		l, err := s.Claim("", lease, log)
		if err != nil {
			s.Close()
			return nil, nil, err
		}
		return r.apply(s), l, nil
	}
	var lock claim
	if db != sqlite.Memory {
		l, err := sqlite.Claim(db, "")
		if err != nil {
			return nil, nil, err
		}
		lock = l
	}
	s, err := sqlite.Open(db, r.keep)
	if err != nil {
		if lock != nil {
			lock.Release()
		}
		return nil, nil, err
	}
	return r.apply(s), lock, nil
}
