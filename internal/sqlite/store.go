// Package sqlite is Baton's live.Store on an embedded SQLite database (modernc.org/sqlite, pure
// Go, so the binary stays static). One file holds every run: its metadata and tally in runs, its
// events in events (chunks of consecutive events, a row each), and a trigram full-text index of
// its input and messages in search. The
// database is in WAL mode with a busy timeout, so that `baton export` and `baton import` work on
// it while `baton serve` writes; serve, the one process that writes a database's runs, holds its
// Lock. Its faults (a full disk, a read-only or damaged file) are traces errors naming the cause
// (fault.go).
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/baton-dev/baton/internal/live"
	"github.com/baton-dev/baton/traces"
)

// Memory is the path that opens a database that lives in memory only.
const Memory = ":memory:"

// DefaultKeep is how many runs a store keeps by default: adding one more deletes the oldest
// added runs that have ended.
const DefaultKeep = 1000

// schemaVersion is the database's PRAGMA user_version once its tables exist: 2 since runs have
// their findings counted, 3 since they say when they were last written, 4 since they keep the
// hash of their latest session's secret, 5 since they keep their tokens by model (migrate adds
// the columns to a database of an earlier version), 6 since it keeps the breakpoints for apps'
// next runs (a table of its own, which the schema creates where it is missing), 7 since events
// are a rowid table keyed by eventID and the search index keeps no copy of the text it indexes
// (migrate copies the events and the index's text of an earlier one), 8 since a row of events
// holds a chunk of a run's consecutive events and a row of the index the texts of several (migrate
// joins the events of an earlier one into chunks; its index rows, one text each, stay).
const schemaVersion = 8

// seqBits is how many low bits of a search row's id hold the seq of the event whose text it
// indexes, the first one's for a row of several (0 for the run's input); the high bits are the
// run's key. A run's rows are one id range.
const seqBits = 24

// eventBits is how many low bits of an event row's id hold the seq of its first event; the high
// bits are its run's key, so a run's rows are one id range, in order. A rowid table appended to at its end
// splits its last page without spreading rows over its neighbours (SQLite's quick balance),
// which a table keyed by (run, seq) WITHOUT ROWID did at every split: a million-event import
// spent about a second on it.
const eventBits = 32

// eventID returns the id of event seq of run key.
func eventID(key, seq int64) int64 { return key<<eventBits | seq }

const schema = `
CREATE TABLE IF NOT EXISTS runs (
	key            INTEGER PRIMARY KEY AUTOINCREMENT,
	id             TEXT NOT NULL UNIQUE,
	meta           BLOB NOT NULL, -- the traces.Run as JSON, as Load returns it
	tree           BLOB NOT NULL, -- the agents as JSON
	flow           TEXT NOT NULL,
	model          TEXT NOT NULL,
	status         TEXT NOT NULL,
	conversation   TEXT NOT NULL,
	started_at     INTEGER NOT NULL, -- Unix nanoseconds
	ended_at       INTEGER,          -- Unix nanoseconds
	error          TEXT NOT NULL,
	input_line     TEXT NOT NULL,
	agents         INTEGER NOT NULL,
	transfers      INTEGER NOT NULL,
	tokens         INTEGER NOT NULL,
	events         INTEGER NOT NULL,
	last_interrupt TEXT NOT NULL,
	findings       INTEGER NOT NULL DEFAULT 0,
	saved_at       INTEGER NOT NULL DEFAULT 0, -- Unix nanoseconds of the last write, by Baton's clock
	session        BLOB, -- see live.Store.SetSessionHash
	usage          BLOB -- live.StoredUsage; NULL for a run stored before it was kept
);
-- Lists go by key, most recently added first; an index holds the key after its columns.
CREATE INDEX IF NOT EXISTS runs_by_flow ON runs(flow);
CREATE INDEX IF NOT EXISTS runs_by_status ON runs(status);
CREATE INDEX IF NOT EXISTS runs_by_conversation ON runs(conversation) WHERE conversation != '';
CREATE INDEX IF NOT EXISTS runs_by_interrupt ON runs(last_interrupt) WHERE status = 'interrupted';
CREATE INDEX IF NOT EXISTS runs_by_saved ON runs(saved_at) WHERE status != 'running';
-- A chunk of a run's consecutive events: each event's line (encoder.encode), joined by newlines.
-- A million-event import writes a few thousand rows, not a million (see insertEvents).
CREATE TABLE IF NOT EXISTS events (
	id   INTEGER PRIMARY KEY, -- eventID(run's key, seq of the chunk's first event)
	data BLOB NOT NULL
);
-- Contentless: a search reads only rowids, so the text is indexed, not kept a second time. A row
-- is one text (a run's input, or a text with a newline), or several without one, joined by
-- newlines: see eventBatch.encode.
CREATE VIRTUAL TABLE IF NOT EXISTS search USING fts5(body, tokenize = 'trigram', content = '', contentless_delete = 1);
-- The ids of the search rows that join several texts: a search for a text with a newline skips
-- them, where it would match across two texts.
CREATE TABLE IF NOT EXISTS search_joined (id INTEGER PRIMARY KEY);
-- The breakpoints kept for the next runs of each flow apps stream (live.Store.SetNextBreakpoints).
CREATE TABLE IF NOT EXISTS next_breakpoints (
	flow   TEXT PRIMARY KEY,
	points BLOB NOT NULL -- a JSON list of breakpoints as written
);
`

// Store is a live.Store on one SQLite database. It is safe for concurrent use; writes of one
// process are serialized, and other processes wait for them up to the busy timeout.
type Store struct {
	db     *sql.DB
	path   string // as given to Open, for messages
	keep   int
	maxAge time.Duration // see KeepFor; guarded by mu

	mu       sync.Mutex          // serializes writes
	encoders map[string]*encoder // of the runs being written; guarded by mu

	background sync.WaitGroup // checkpointLater's goroutines; begun under mu until closed
	closed     bool           // guarded by mu
}

var _ live.Store = (*Store)(nil)

// Open opens the database at path, creating it and its directory when missing, or one in memory
// for Memory. keep is how many runs it keeps (DefaultKeep when 0; negative keeps all).
func Open(path string, keep int) (*Store, error) { return open(path, keep, "") }

// OpenCapped is Open with the database's size capped at maxBytes (SQLite's max_page_count): past
// it, writes fail as they do on a full disk. Tests fill a database so without filling a disk.
func OpenCapped(path string, keep int, maxBytes int64) (*Store, error) {
	return open(path, keep, fmt.Sprintf("&_pragma=max_page_count(%d)", max(maxBytes/pageSize, 1)))
}

// pageSize is SQLite's default page size, which Baton's databases keep.
const pageSize = 4096

// open is Open with more pragmas for the DSN, each "&_pragma=name(value)".
func open(path string, keep int, pragmas string) (*Store, error) {
	if keep == 0 {
		keep = DefaultKeep
	}
	dsn := "file::memory:"
	if path != Memory {
		abs, err := filepath.Abs(path)
		if err != nil {
			return nil, fmt.Errorf("open store %s: %w", path, err)
		}
		if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
			return nil, fmt.Errorf("open store: %w", err)
		}
		dsn = "file:" + (&url.URL{Path: abs}).EscapedPath()
	}
	// BEGIN IMMEDIATE: a transaction that will write takes the lock up front, so it waits for
	// another process's writer instead of failing half-way.
	dsn += "?_txlock=immediate&_pragma=busy_timeout(10000)&_pragma=synchronous(NORMAL)"
	if path != Memory {
		dsn += "&_pragma=journal_mode(WAL)"
	}
	dsn += pragmas
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	if path == Memory {
		db.SetMaxOpenConns(1) // each connection to :memory: is a database of its own
	}
	s := &Store{db: db, path: path, keep: keep, encoders: make(map[string]*encoder)}
	if err := s.migrate(); err != nil {
		db.Close()
		return nil, s.fault(fmt.Errorf("open store %s: %w", path, err))
	}
	return s, nil
}

// migrate creates the tables of a new database, brings one of an earlier version to this one, and refuses
// one of a later schema.
func (s *Store) migrate() error {
	var version int
	if err := s.db.QueryRow(`PRAGMA user_version`).Scan(&version); err != nil {
		return err
	}
	if version > schemaVersion {
		return fmt.Errorf("the database has schema version %d; this Baton knows up to %d", version, schemaVersion)
	}
	if version == schemaVersion {
		return nil
	}
	tx, err := s.db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if version == 1 {
		if _, err := tx.Exec(`ALTER TABLE runs ADD COLUMN findings INTEGER NOT NULL DEFAULT 0`); err != nil {
			return err
		}
	}
	if version >= 1 && version < 3 {
		// The runs it holds are as old as this upgrade: --keep-days counts from now for them.
		if _, err := tx.Exec(`ALTER TABLE runs ADD COLUMN saved_at INTEGER NOT NULL DEFAULT 0`); err != nil {
			return err
		}
		if _, err := tx.Exec(`UPDATE runs SET saved_at = ?`, time.Now().UnixNano()); err != nil {
			return err
		}
	}
	if version >= 1 && version < 4 {
		// The runs it holds have no session hash: the ingestion's own rule for such runs applies.
		if _, err := tx.Exec(`ALTER TABLE runs ADD COLUMN session BLOB`); err != nil {
			return err
		}
	}
	if version >= 1 && version < 5 {
		// The runs it holds keep no usage: their list shows tokens and no money.
		if _, err := tx.Exec(`ALTER TABLE runs ADD COLUMN usage BLOB`); err != nil {
			return err
		}
	}
	if version >= 1 && version < 7 {
		// Events were keyed by (run, seq) WITHOUT ROWID, and the index kept its text: both
		// copied to the new tables, in order.
		if _, err := tx.Exec(`ALTER TABLE events RENAME TO events_v6; ALTER TABLE search RENAME TO search_v6`); err != nil {
			return err
		}
	}
	if _, err := tx.Exec(schema); err != nil {
		return err
	}
	if version >= 1 && version < 7 {
		if _, err := tx.Exec(fmt.Sprintf(`INSERT INTO events (id, data) SELECT run << %d | seq, data FROM events_v6 ORDER BY run, seq;
			DROP TABLE events_v6;
			INSERT INTO search (rowid, body) SELECT rowid, body FROM search_v6 ORDER BY rowid;
			DROP TABLE search_v6`, eventBits)); err != nil {
			return err
		}
	}
	if version >= 1 && version < 8 {
		if err := joinEvents(tx); err != nil {
			return fmt.Errorf("join events into chunks: %w", err)
		}
	}
	if _, err := tx.Exec(fmt.Sprintf(`PRAGMA user_version = %d`, schemaVersion)); err != nil {
		return err
	}
	return tx.Commit()
}

// joinEvents joins the events of a database of version 7, a row each, into the chunks
// insertEvents writes, run by run. Its search rows, one text each, need no change.
func joinEvents(tx *sql.Tx) error {
	if _, err := tx.Exec(`ALTER TABLE events RENAME TO events_v7`); err != nil {
		return err
	}
	if _, err := tx.Exec(schema); err != nil {
		return err
	}
	keys, err := tx.Query(`SELECT DISTINCT id >> ? FROM events_v7 ORDER BY 1`, eventBits)
	if err != nil {
		return err
	}
	var runs []int64
	for keys.Next() {
		var k int64
		if err := keys.Scan(&k); err != nil {
			keys.Close()
			return err
		}
		runs = append(runs, k)
	}
	keys.Close()
	if err := keys.Err(); err != nil {
		return err
	}
	insert, err := tx.Prepare(`INSERT INTO events (id, data) VALUES (?, ?)`)
	if err != nil {
		return err
	}
	defer insert.Close()
	for _, key := range runs {
		rows, err := tx.Query(`SELECT id, data FROM events_v7 WHERE id BETWEEN ? AND ? ORDER BY id`, eventID(key, 0), eventID(key+1, 0)-1)
		if err != nil {
			return err
		}
		var first int64
		var chunk []byte
		var n int
		flush := func() error {
			if n == 0 {
				return nil
			}
			_, err := insert.Exec(first, chunk)
			chunk, n = chunk[:0], 0
			return err
		}
		for rows.Next() {
			var id int64
			var data []byte
			if err := rows.Scan(&id, &data); err != nil {
				rows.Close()
				return err
			}
			if n == chunkEvents || len(chunk) >= chunkBytes {
				if err := flush(); err != nil {
					rows.Close()
					return err
				}
			}
			if n == 0 {
				first = id
			} else {
				chunk = append(chunk, '\n')
			}
			chunk, n = append(chunk, data...), n+1
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if err := flush(); err != nil {
			return err
		}
	}
	_, err = tx.Exec(`DROP TABLE events_v7`)
	return err
}

// KeepFor makes the store delete, besides the runs beyond its count, the runs that have ended and
// were last written more than age ago, by this machine's clock: when a run is added. Zero, the
// default, keeps runs whatever their age.
func (s *Store) KeepFor(age time.Duration) {
	s.mu.Lock()
	s.maxAge = age
	s.mu.Unlock()
}

// Close closes the database, once the checkpoints begun are done.
func (s *Store) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.background.Wait()
	return s.db.Close()
}

// DefaultPath returns where serve keeps its database by default: baton/baton.db in the user's data
// directory ($XDG_DATA_HOME, else ~/.local/share; on macOS and Windows the per-user application
// data directory).
func DefaultPath() (string, error) {
	dir := os.Getenv("XDG_DATA_HOME")
	var err error
	switch {
	case dir != "":
	case runtime.GOOS == "darwin" || runtime.GOOS == "windows":
		dir, err = os.UserConfigDir()
	default:
		dir, err = os.UserHomeDir()
		dir = filepath.Join(dir, ".local", "share")
	}
	if err != nil {
		return "", fmt.Errorf("find the data directory: %w; choose a file with --db", err)
	}
	return filepath.Join(dir, "baton", "baton.db"), nil
}

// recoverRuns is Recover; it ends the runs left running by a process that stopped without ending them (a crash, a
// kill): each is marked interrupted, with a run.finished saying so after its last saved event.
// Only the process that writes runs calls it, at its start. It returns how many runs it ended.
func (s *Store) recoverRuns(ctx context.Context) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rows, err := s.db.QueryContext(ctx, `SELECT id FROM runs WHERE status = 'running'`)
	if err != nil {
		return 0, fmt.Errorf("recover runs: %w", err)
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return 0, fmt.Errorf("recover runs: %w", err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("recover runs: %w", err)
	}
	for _, id := range ids {
		if err := s.recoverRun(ctx, id); err != nil {
			return 0, err
		}
	}
	return len(ids), nil
}

// recoverRun ends run id interrupted after its last saved event. The caller holds s.mu.
func (s *Store) recoverRun(ctx context.Context, id string) error {
	tr, err := s.load(id)
	if err != nil {
		return fmt.Errorf("recover run %s: %w", id, err)
	}
	run, tally, end := live.StoppedEnd(tr)
	s.encoders[id] = newEncoder(tr.Events)
	return s.saveLocked(ctx, run, tally, nil, []traces.Event{end})
}

// notFound is the error for an unknown run id.
func notFound(id string) error { return traces.Errorf(traces.CodeNotFound, "run %q not found", id) }

// isNoRows reports whether err says a query found nothing.
func isNoRows(err error) bool { return errors.Is(err, sql.ErrNoRows) }
