package postgres_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/baton-dev/baton/internal/postgres"
	"github.com/baton-dev/baton/traces"
)

// syncBuffer is a log's output that tests read while the lock's watcher writes it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// One server holds a database: a second Claim is refused, naming the first by its address. When
// PostgreSQL drops the holder's connection (as a restart would), the holder takes the lock again,
// logging it, and a second server is still refused.
func TestClaimIsOneServersAndSurvivesItsConnection(t *testing.T) {
	defer postgres.SetLockCheck(20 * time.Millisecond)()
	s, url := mustOpen(t, 0)
	var log syncBuffer
	lock, err := s.Claim("http://127.0.0.1:7878/", slog.New(slog.NewTextHandler(&log, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	other, err := postgres.Open(url, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	refused := func() {
		t.Helper()
		if l, err := other.Claim("", nil); err == nil {
			l.Release()
			t.Fatal("a second server took the lock of a database in use")
		} else if traces.ErrorCode(err) != traces.CodeUnavailable || !strings.Contains(err.Error(), "on http://127.0.0.1:7878/") {
			t.Errorf("second Claim: %v; want it refused, naming the first server", err)
		}
	}
	refused()

	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var killed bool
	if err := conn.QueryRow(context.Background(), `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE application_name LIKE 'baton serve%'`).Scan(&killed); err != nil || !killed {
		t.Fatalf("terminate the lock's connection: %v, %v", killed, err)
	}
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(log.String(), "holds the database's lock again"); {
		if time.Now().After(deadline) {
			t.Fatalf("the lock was not taken again within 20 s; log:\n%s", log.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !strings.Contains(log.String(), "lost the database's lock") {
		t.Errorf("the log does not say the lock was lost:\n%s", log.String())
	}
	refused()
}
