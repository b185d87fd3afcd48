package sqlite

import (
	"context"
	"errors"
	"fmt"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/baton-dev/baton/internal/live"
	"github.com/baton-dev/baton/traces"
)

// The Store's methods as the live.Store contract has them: each is its unexported twin with
// its error passed through fault, the one place that says what a database's faults mean.

// Create records a new run with its agents and events so far. It fails with CodeConflict when
// the id is taken. Then it deletes the oldest added ended runs beyond what the store keeps.
func (s *Store) Create(run traces.Run, tally live.Tally, agents []traces.Agent, events []traces.Event) error {
	return s.fault(s.create(run, tally, agents, events))
}

// Save records the next events of a created run, with its metadata and tally as of them, and its
// agents when agents is not nil.
func (s *Store) Save(run traces.Run, tally live.Tally, agents []traces.Agent, events []traces.Event) error {
	return s.fault(s.save(run, tally, agents, events))
}

// Load returns the trace of run id as saved so far.
func (s *Store) Load(id string) (traces.Trace, error) {
	tr, err := s.load(id)
	return tr, s.fault(err)
}

// List returns one page of run summaries, the most recently added first. Its cursor is the key
// of the page's last run.
func (s *Store) List(q live.RunQuery) (live.RunPage, error) {
	p, err := s.list(q)
	return p, s.fault(err)
}

// Interrupted returns the id of the newest run that ended interrupted at interruptID, or "".
func (s *Store) Interrupted(interruptID string) (string, error) {
	id, err := s.interrupted(interruptID)
	return id, s.fault(err)
}

// Delete removes run id and its events.
func (s *Store) Delete(id string) error { return s.fault(s.remove(id)) }

// SetSessionHash records hash as what proves who may go on writing run id.
func (s *Store) SetSessionHash(id string, hash []byte) error {
	return s.fault(s.setSessionHash(id, hash))
}

// SessionHash returns what SetSessionHash recorded for run id last, or nil.
func (s *Store) SessionHash(id string) ([]byte, error) {
	hash, err := s.sessionHash(id)
	return hash, s.fault(err)
}

// Recover ends the runs left running by a process that stopped without ending them (a crash, a
// kill): each is marked interrupted, with a run.finished saying so after its last saved event.
// Only the process that writes runs calls it, at its start, holding the database's Lock. It
// returns how many runs it ended.
func (s *Store) Recover(ctx context.Context) (int, error) {
	n, err := s.recoverRuns(ctx)
	return n, s.fault(err)
}

// CheckWrite fails when the database cannot be written, as a read-only file cannot: for a server
// to refuse at its start what it could not do later. It writes the schema version again, which
// changes nothing.
func (s *Store) CheckWrite() error {
	_, err := s.db.Exec(fmt.Sprintf(`PRAGMA user_version = %d`, schemaVersion))
	return s.fault(err)
}

// damaged marks an error of reading back what the database holds, which only a change to the
// file behind Baton's back explains.
type damaged struct{ error }

func (d damaged) Unwrap() error { return d.error }

// How long a fault that may pass is worth waiting for: space freed on a disk, another process's
// write, a flaky disk.
const (
	retryFull = 30 * time.Second
	retryBusy = 5 * time.Second
	retryIO   = 30 * time.Second
)

// fault returns err as a caller should see it: a fault of the database (a full disk, a read-only
// or damaged file, a lock held too long) as a *traces.Error with CodeUnavailable whose message
// names the cause and what to do, and whose Retry says whether waiting helps; anything else as it
// is. Runs the fault does not touch can still be read.
func (s *Store) fault(err error) error {
	if err == nil {
		return nil
	}
	var dmg damaged
	var se *sqlite.Error
	code := 0
	if errors.As(err, &se) {
		code = se.Code() & 0xff // the primary code of an extended one
	}
	switch {
	case errors.As(err, &dmg) || code == sqlite3.SQLITE_CORRUPT || code == sqlite3.SQLITE_NOTADB:
		return s.unavailable(traces.NoRetry, "the database %s is damaged (%s): the runs in its damaged part cannot be read, the others can;"+
			" to save what it holds, stop Baton and run: sqlite3 %s .recover | sqlite3 recovered.db", s.path, cause(err), s.path)
	case code == sqlite3.SQLITE_FULL:
		return s.unavailable(retryFull, "the disk of the database %s is full: free some space, or keep fewer runs (--keep);"+
			" saved runs can still be read", s.path)
	case code == sqlite3.SQLITE_READONLY:
		return s.unavailable(traces.NoRetry, "the database %s is read-only: make the file and its folder writable by this user,"+
			" then start Baton again; saved runs can still be read", s.path)
	case code == sqlite3.SQLITE_BUSY || code == sqlite3.SQLITE_LOCKED:
		return s.unavailable(retryBusy, "the database %s is busy with another process's write", s.path)
	case code == sqlite3.SQLITE_IOERR || code == sqlite3.SQLITE_CANTOPEN:
		return s.unavailable(retryIO, "the database %s could not be read or written (%s): check its disk", s.path, cause(err))
	}
	return err
}

func (s *Store) unavailable(retry time.Duration, format string, args ...any) error {
	return &traces.Error{Code: traces.CodeUnavailable, Retry: retry, Message: fmt.Sprintf(format, args...)}
}

// cause is what SQLite (or the decoder) said, without what Baton was doing.
func cause(err error) string {
	var se *sqlite.Error
	if errors.As(err, &se) {
		if s, ok := sqlite.ErrorCodeString[se.Code()]; ok {
			return s
		}
		return se.Error()
	}
	for u := errors.Unwrap(err); u != nil; u = errors.Unwrap(u) {
		err = u
	}
	return err.Error()
}
