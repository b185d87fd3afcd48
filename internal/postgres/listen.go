package postgres

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/baton-dev/baton/traces"
)

// listenRetry is how long the listener waits before it connects again after losing its
// connection.
const listenRetry = time.Second

// Listen LISTENs on EventsChannel, on one connection of its own, and calls commit with the run id
// and last seq of each commit announced there (by any server, this one's included), in commit
// order, from its own goroutine, until Close. A lost connection is logged to log and made again
// every second; what was announced meanwhile is not heard (a follower reads it on its next
// periodic check, see live.Broker.Follow). It returns once it listens, or once its first try
// has failed (logged; it goes on trying). Call it once.
func (s *Store) Listen(commit func(id string, seq int64), log *slog.Logger) {
	if log == nil {
		log = slog.Default()
	}
	ctx, cancel := context.WithCancel(context.Background())
	done, tried := make(chan struct{}), make(chan struct{})
	s.unlisten = func() {
		cancel()
		<-done
	}
	go func() {
		defer close(done)
		first := sync.OnceFunc(func() { close(tried) })
		defer first()
		failing := false
		for {
			err := s.listen(ctx, commit, func() {
				first()
				if failing {
					log.Info("listening to the database's announcements again", "database", s.name)
				}
				failing = false
			})
			first()
			if ctx.Err() != nil {
				return
			}
			if !failing {
				log.Warn("lost the database's announcements of other servers' events: their runs' viewers here are late"+
					" until it is back", "database", s.name, "cause", traces.ErrorMessage(s.fault(err)))
			}
			failing = true
			select {
			case <-ctx.Done():
				return
			case <-time.After(listenRetry):
			}
		}
	}()
	<-tried
}

// listen connects, LISTENs, calls up, then calls commit for each announcement until the
// connection fails or ctx ends.
func (s *Store) listen(ctx context.Context, commit func(id string, seq int64), up func()) error {
	cctx, cancel := context.WithTimeout(ctx, opTimeout)
	conn, err := pgx.ConnectConfig(cctx, s.pool.Config().ConnConfig.Copy())
	if err == nil {
		_, err = conn.Exec(cctx, "LISTEN "+EventsChannel)
	}
	cancel()
	if conn != nil {
		defer conn.Close(context.Background())
	}
	if err != nil {
		return err
	}
	up()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		id, last, ok := strings.Cut(n.Payload, " ")
		seq, perr := strconv.ParseInt(last, 10, 64)
		if ok && perr == nil {
			commit(id, seq)
		}
	}
}
