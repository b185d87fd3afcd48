package postgres

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

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
	ctx, cancel := waitCtx()
	defer cancel()
	_, tr, err := s.load(ctx, id)
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

// Recover ends the runs left running by a server that stopped without ending them (a crash, a
// kill), known by its lease having expired or been released (see Lease): each is marked
// interrupted, with a run.finished saying so after its last saved event. A server calls it at its
// start, holding its Claim, and its Lease on every heartbeat. It returns how many runs it ended.
func (s *Store) Recover(ctx context.Context) (int, error) {
	n, err := s.recoverRuns(ctx)
	return n, s.fault(err)
}

// TakeOver makes running run id this store's server's when the server recording it has stopped
// (its lease expired or was released), for an app that carries the run on here (live.Taker). It
// reports whether it did: false while that server is alive, or once the run has ended.
func (s *Store) TakeOver(id string) (bool, error) {
	ok, err := s.takeOver(id)
	return ok, s.fault(err)
}

// OwnerStopped reports whether run id is running and the server recording it has stopped: its
// lease expired or was released (live.Taker). It changes nothing.
func (s *Store) OwnerStopped(id string) (bool, error) {
	ok, err := s.ownerStopped(id)
	return ok, s.fault(err)
}

// Owner returns the address of the other live server that runs run id, or "" (live.Locator).
func (s *Store) Owner(id string) (string, error) {
	addr, err := s.owner(id)
	return addr, s.fault(err)
}

// CheckWrite fails when the database cannot be written, as a read-only standby or a user without
// the right cannot: for a server to refuse at its start what it could not do later. It writes the
// schema version again, which changes nothing.
func (s *Store) CheckWrite() error {
	ctx, cancel := ctx()
	defer cancel()
	_, err := s.pool.Exec(ctx, `UPDATE baton_schema SET version = version`)
	return s.fault(err)
}

// damaged marks an error of reading back what the database holds, which only a change behind
// Baton's back explains.
type damaged struct{ error }

func (d damaged) Unwrap() error { return d.error }

// How long a fault that may pass is worth waiting for: the server back, space freed, a
// conflicting transaction done.
const (
	retryDown = 10 * time.Second
	retryFull = 30 * time.Second
	retryBusy = 2 * time.Second
)

// fault returns err as a caller should see it: a fault of the database (the server unreachable
// or restarting, a full disk, a read-only standby, a missing right, damaged data) as a
// *traces.Error with CodeUnavailable whose message names the cause and what to do, and whose
// Retry says whether waiting helps; anything else as it is.
func (s *Store) fault(err error) error {
	if err == nil {
		return nil
	}
	var te *traces.Error
	if errors.As(err, &te) {
		return err
	}
	var dmg damaged
	var pe *pgconn.PgError
	var ne net.Error
	var ce *pgconn.ConnectError
	switch {
	case errors.As(err, &dmg):
		return s.unavailable(traces.NoRetry, "the database %s holds a run Baton cannot read back (%s): it was changed behind Baton's back;"+
			" the other runs can still be read", s.name, cause(err))
	case errors.As(err, &pe):
		return s.pgFault(pe, err)
	case errors.Is(err, context.DeadlineExceeded) && !errors.As(err, &ce):
		return s.unavailable(retryDown, "the database %s did not answer in time: check that PostgreSQL is up and reachable", s.name)
	case errors.As(err, &ce) || errors.As(err, &ne) || pgconn.Timeout(err):
		return s.unavailable(retryDown, "the database %s cannot be reached (%s): check that PostgreSQL is up and reachable", s.name, cause(err))
	}
	return err
}

// pgFault is fault for an error the server sent, by its SQLSTATE class and code.
func (s *Store) pgFault(pe *pgconn.PgError, err error) error {
	switch {
	case pe.Code == "53100": // disk_full
		return s.unavailable(retryFull, "the disk of the database %s is full: free some space, or keep fewer runs (--keep);"+
			" saved runs can still be read", s.name)
	case pe.Code == "25006": // read_only_sql_transaction
		return s.unavailable(traces.NoRetry, "the database %s is read-only (a standby?): point --db at the primary;"+
			" saved runs can still be read", s.name)
	case pe.Code == "42501": // insufficient_privilege
		return s.unavailable(traces.NoRetry, "the database user may not do this on %s (%s): grant it the rights on Baton's tables", s.name, pe.Message)
	case pe.Code == "40001" || pe.Code == "40P01" || pe.Code == "55P03": // serialization, deadlock, lock not available
		return s.unavailable(retryBusy, "the database %s is busy with another write", s.name)
	case strings.HasPrefix(pe.Code, "08") || strings.HasPrefix(pe.Code, "57P") || strings.HasPrefix(pe.Code, "53"):
		// connection exceptions, the server shutting down or starting, out of resources
		return s.unavailable(retryDown, "the database %s is not available (%s): check that PostgreSQL is up", s.name, pe.Message)
	case strings.HasPrefix(pe.Code, "XX"): // internal errors, data or index corrupted
		return s.unavailable(traces.NoRetry, "the database %s reports damage (%s): check the server's logs", s.name, pe.Message)
	}
	return err
}

func (s *Store) unavailable(retry time.Duration, format string, args ...any) error {
	return &traces.Error{Code: traces.CodeUnavailable, Retry: retry, Message: fmt.Sprintf(format, args...)}
}

// cause is what the server, the network or the decoder said, without what Baton was doing.
func cause(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Message
	}
	for u := errors.Unwrap(err); u != nil; u = errors.Unwrap(u) {
		err = u
	}
	return err.Error()
}

// isNoRows reports whether err says a query found nothing.
func isNoRows(err error) bool { return errors.Is(err, pgx.ErrNoRows) }

// isForeignKey reports whether err is a foreign key violation: a row of a run that is gone.
func isForeignKey(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23503"
}
