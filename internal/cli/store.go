package cli

import (
	"context"
	"errors"
	"flag"
	"log/slog"
	"sync"
	"time"

	"github.com/baton-dev/baton/internal/live"
	"github.com/baton-dev/baton/internal/sqlite"
)

// dbFlag adds --db to fs: the database of runs.
func dbFlag(fs *flag.FlagSet) *string {
	return fs.String("db", "", "the database of runs, the file at `PATH` (default: baton/baton.db in the user's data directory;"+
		` ":memory:" keeps none)`)
}

// keepFlag adds --keep to fs: how many runs the database keeps.
func keepFlag(fs *flag.FlagSet) *int {
	return fs.Int("keep", sqlite.DefaultKeep, "how many runs `N` the database keeps; the oldest added that have ended go first")
}

// openStore opens the database at path, or the default one when path is empty.
func openStore(path string, keep int) (*sqlite.Store, error) {
	path, err := dbPath(path)
	if err != nil {
		return nil, err
	}
	return sqlite.Open(path, keep)
}

// dbPath returns path, or the default database's when path is empty.
func dbPath(path string) (string, error) {
	if path != "" {
		return path, nil
	}
	return sqlite.DefaultPath()
}

// storedBroker claims the database that serve keeps its runs in (one server per database: a
// second, the default database's too, is refused with the first one's pid and address), opens
// it, checks it can be written, ends the runs a stopped process left running, and returns a
// broker that writes to it, with the lock (its address is the caller's to set once it listens).
// close waits for the last events to be written, then closes the database and lets the lock go;
// later calls return the first one's result.
func storedBroker(ctx context.Context, path string, keep int, log *slog.Logger) (b *live.Broker, lock *sqlite.Lock, close func() error, err error) {
	if path, err = dbPath(path); err != nil {
		return nil, nil, nil, err
	}
	if path != sqlite.Memory {
		if lock, err = sqlite.Claim(path, ""); err != nil {
			return nil, nil, nil, err
		}
	}
	store, err := sqlite.Open(path, keep)
	if err == nil {
		err = store.CheckWrite()
		if err != nil {
			store.Close()
		}
	}
	if err != nil {
		lock.Release()
		return nil, nil, nil, err
	}
	if n, err := store.Recover(ctx); err != nil {
		store.Close()
		lock.Release()
		return nil, nil, nil, err
	} else if n > 0 {
		log.Info("runs left running by a stopped Baton are now interrupted", "runs", n)
	}
	b = live.NewStoredBroker(0, store, log)
	return b, lock, sync.OnceValue(func() error {
		wctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return errors.Join(b.Close(wctx), store.Close(), lock.Release())
	}), nil
}
