package cli

import (
	"context"
	"errors"
	"flag"
	"log/slog"
	"sync"
	"time"

	"github.com/baton-dev/baton/internal/sqlite"
	"github.com/baton-dev/baton/traces"
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
	if path == "" {
		var err error
		if path, err = sqlite.DefaultPath(); err != nil {
			return nil, err
		}
	}
	return sqlite.Open(path, keep)
}

// storedBroker opens the database that serve keeps its runs in, ends the runs a stopped process
// left running, and returns a broker that writes to it. close waits for the last events to be
// written, then closes the database; later calls return the first one's result.
func storedBroker(ctx context.Context, path string, keep int, log *slog.Logger) (b *traces.Broker, close func() error, err error) {
	store, err := openStore(path, keep)
	if err != nil {
		return nil, nil, err
	}
	if n, err := store.Recover(ctx); err != nil {
		store.Close()
		return nil, nil, err
	} else if n > 0 {
		log.Info("runs left running by a stopped Baton are now interrupted", "runs", n)
	}
	b = traces.NewStoredBroker(0, store, log)
	return b, sync.OnceValue(func() error {
		wctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return errors.Join(b.Close(wctx), store.Close())
	}), nil
}
