package postgres

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/baton-dev/baton/internal/live"
	"github.com/baton-dev/baton/traces"
)

// retainLock is the advisory lock that deletions by retention take, so that servers adding runs
// at once delete the same old runs one after the other, not into a deadlock.
const retainLock int64 = 0x6261746f6e02 // "baton" 2

// startEvents is the most events a run has when it starts: a create of more is an imported trace.
const startEvents = 1000

// create is Create; it records a new run with its agents and events so far, failing with
// CodeConflict when the id is taken, then deletes the oldest added ended runs beyond what the
// store keeps.
func (s *Store) create(run traces.Run, tally live.Tally, agents []traces.Agent, events []traces.Event) (err error) {
	w := s.writerOf(run.ID)
	defer w.mu.Unlock()
	defer func() {
		if err != nil && !w.ready {
			s.forget(run.ID, w) // made for this call: a run of that id, if any, is written elsewhere
		}
	}()
	timeout := opTimeout
	if len(events) <= startEvents {
		timeout = waitTimeout // a run starting, not a trace imported
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	meta, tree, err := live.StoredMeta(run, agents)
	if err != nil {
		return err
	}
	if tree == nil {
		tree = []byte("[]")
	}
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("create run %s: %w", run.ID, err)
	}
	defer tx.Rollback(ctx)
	var key int64
	err = tx.QueryRow(ctx, `INSERT INTO baton_runs (id, meta, tree, flow, model, status, conversation, started_at,
		ended_at, error, input_line, agents, transfers, tokens, events, last_interrupt, findings, saved_at, owner, usage)
		VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18,$19,$20) ON CONFLICT (id) DO NOTHING RETURNING key`,
		text(run.ID), meta, tree, text(run.Flow), text(run.Model), string(run.Status), text(run.Conversation),
		run.StartedAt.UnixNano(), live.StoredEnd(run), text(run.Error), text(live.FirstLine(run.Input)), tally.Agents,
		tally.Transfers, tally.Tokens, tally.Events, text(tally.LastInterrupt), tally.Findings, time.Now().UnixNano(), s.server,
		live.StoredUsage(tally)).Scan(&key)
	if isNoRows(err) {
		return traces.Errorf(traces.CodeConflict, "run %q already exists", run.ID)
	} else if err != nil {
		return fmt.Errorf("create run %s: %w", run.ID, err)
	}
	var enc traces.EventEncoder
	b := &pgx.Batch{}
	b.Queue(`INSERT INTO baton_search (run, seq, body) VALUES ($1, 0, $2)`, key, text(run.Input))
	if err := queueEvents(b, key, s.server, &enc, events); err != nil {
		return err
	}
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("create run %s: %w", run.ID, err)
	}
	if err := s.retain(ctx, tx, key); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("create run %s: %w", run.ID, err)
	}
	if run.Status.Ended() {
		s.forget(run.ID, w)
	} else {
		w.ready, w.key, w.enc = true, key, enc
	}
	return nil
}

// save is Save; it records the next events of a created run, with its metadata and tally as of
// them, and its agents when agents is not nil: one round trip to the server, one transaction.
// The run becomes this store's (its owner); but a run this store has been writing that another
// server took over meanwhile (this one's lease expired, see Lease) is not written: CodeConflict.
func (s *Store) save(run traces.Run, tally live.Tally, agents []traces.Agent, events []traces.Event) (err error) {
	w := s.writerOf(run.ID)
	defer w.mu.Unlock()
	ctx, cancel := ctx()
	defer cancel()
	defer func() {
		if err != nil {
			// The encoder may be ahead of the database: rebuild it next time.
			w.ready = false
		}
		if err != nil || run.Status.Ended() {
			s.forget(run.ID, w) // an ended run needs it no more (a resume rebuilds it)
		}
	}()
	held := w.ready
	if !w.ready {
		key, tr, err := s.load(ctx, run.ID)
		if err != nil {
			return err
		}
		w.key, w.enc = key, traces.EventEncoder{}
		if err := replay(&w.enc, tr.Events); err != nil {
			return err
		}
		w.ready = true
		// A write that failed may have been committed all the same, its answer lost (the
		// database stalled, or the connection broke as it committed): what the database has
		// is not written twice.
		if n := len(tr.Events); n > 0 {
			events = slices.DeleteFunc(slices.Clone(events), func(e traces.Event) bool { return e.Seq <= tr.Events[n-1].Seq })
		}
	}
	meta, tree, err := live.StoredMeta(run, agents)
	if err != nil {
		return err
	}
	b := &pgx.Batch{}
	update := b.Queue(`UPDATE baton_runs SET meta = $1, tree = coalesce($2, tree), status = $3, started_at = $4,
		ended_at = $5, error = $6, agents = $7, transfers = $8, tokens = $9, events = $10, last_interrupt = $11,
		findings = $12, saved_at = $13, owner = $15, usage = $17 WHERE key = $14 AND (owner = $15 OR NOT $16)`,
		meta, tree, string(run.Status), run.StartedAt.UnixNano(), live.StoredEnd(run), text(run.Error), tally.Agents,
		tally.Transfers, tally.Tokens, tally.Events, text(tally.LastInterrupt), tally.Findings, time.Now().UnixNano(), w.key,
		s.server, held, live.StoredUsage(tally))
	var updated int64
	update.Exec(func(tag pgconn.CommandTag) error { updated = tag.RowsAffected(); return nil })
	if err := queueEvents(b, w.key, s.server, &w.enc, events); err != nil {
		return err
	}
	// A batch is one implicit transaction: nothing of a failed one is kept.
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		if updated == 0 && isForeignKey(err) {
			return notFound(run.ID) // deleted while its events came
		}
		return fmt.Errorf("save run %s: %w", run.ID, err)
	}
	if updated == 0 {
		return s.lost(ctx, run.ID, w.key)
	}
	return nil
}

// lost is the error of a save of run id (key) that wrote nothing: the run deleted, or taken over.
func (s *Store) lost(ctx context.Context, id string, key int64) error {
	var n int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM baton_runs WHERE key = $1`, key).Scan(&n); err != nil {
		return fmt.Errorf("save run %s: %w", id, err)
	}
	if n == 0 {
		return notFound(id)
	}
	return traces.Errorf(traces.CodeConflict, "run %q was ended by another baton serve: this one's lease on the database"+
		" expired (it could not renew it for %s), so its running runs were taken for a stopped server's", id, time.Duration(s.expiry.Load()))
}

// queueEvents queues the inserts of events of run key, encoded by enc, and of their text for
// search, each one statement whatever the number of events; none when the run's owner is not
// owner (taken over, see save).
func queueEvents(b *pgx.Batch, key int64, owner string, enc *traces.EventEncoder, events []traces.Event) error {
	if len(events) == 0 {
		return nil
	}
	seqs := make([]int64, len(events))
	data := make([][]byte, len(events))
	var textSeqs []int64
	var bodies []string
	for i, e := range events {
		d, err := enc.AppendEvent(nil, e)
		if err != nil {
			return err // it names the event
		}
		seqs[i], data[i] = e.Seq, d
		if t := live.SearchText(e); t != "" {
			textSeqs, bodies = append(textSeqs, e.Seq), append(bodies, text(t))
		}
	}
	const owned = ` WHERE EXISTS (SELECT 1 FROM baton_runs WHERE key = $1 AND owner = $4)`
	b.Queue(`INSERT INTO baton_events (run, seq, data) SELECT $1, * FROM unnest($2::bigint[], $3::bytea[])`+owned, key, seqs, data, owner)
	if len(bodies) > 0 {
		b.Queue(`INSERT INTO baton_search (run, seq, body) SELECT $1, * FROM unnest($2::bigint[], $3::text[])`+owned, key, textSeqs, bodies, owner)
	}
	b.Queue(`SELECT pg_notify('`+EventsChannel+`', id || ' ' || $3) FROM baton_runs WHERE key = $1 AND owner = $2`,
		key, owner, strconv.FormatInt(events[len(events)-1].Seq, 10))
	return nil
}

// EventsChannel is the channel of PostgreSQL's NOTIFY on which each commit of a run's events
// announces them, to the servers sharing the database: "RUN-ID LAST-SEQ", the run's id and the
// seq of the last event committed, sent when (and only if) the transaction commits, in commit
// order. A server LISTENing reads the run's rows after the seq it has.
const EventsChannel = "baton_events"

// replay brings enc to where it was after encoding earlier, a run's events so far: only the
// references it remembers matter, the bytes were stored once.
func replay(enc *traces.EventEncoder, earlier []traces.Event) error {
	var scratch []byte
	for _, e := range earlier {
		var err error
		if scratch, err = enc.AppendEvent(scratch[:0], e); err != nil {
			return err // it names the event
		}
	}
	return nil
}

// remove is Delete; it removes run id, its events and its search rows.
func (s *Store) remove(id string) error {
	s.forget(id, nil)
	ctx, cancel := waitCtx()
	defer cancel()
	tag, err := s.pool.Exec(ctx, `DELETE FROM baton_runs WHERE id = $1`, text(id))
	if err != nil {
		return fmt.Errorf("delete run %s: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return notFound(id)
	}
	return nil
}

// setSessionHash is SetSessionHash.
func (s *Store) setSessionHash(id string, hash []byte) error {
	ctx, cancel := waitCtx()
	defer cancel()
	tag, err := s.pool.Exec(ctx, `UPDATE baton_runs SET session = $1 WHERE id = $2`, hash, text(id))
	if err != nil {
		return fmt.Errorf("record the session of run %s: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return notFound(id)
	}
	return nil
}

// retain deletes, in tx, the oldest added runs that have ended beyond the newest s.keep, and those
// that ended and were last written more than KeepFor's age ago; never added, the run just added.
func (s *Store) retain(ctx context.Context, tx pgx.Tx, added int64) error {
	offset, before := int64(s.keep), int64(math.MinInt64) // no run is beyond these
	if offset < 0 {
		offset = math.MaxInt64
	}
	if age := time.Duration(s.maxAge.Load()); age > 0 {
		before = time.Now().Add(-age).UnixNano()
	}
	if s.keep < 0 && before == math.MinInt64 {
		return nil
	}
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, retainLock); err != nil {
		return fmt.Errorf("retain runs: %w", err)
	}
	_, err := tx.Exec(ctx, `DELETE FROM baton_runs WHERE status <> 'running' AND key <> $1 AND (
		key IN (SELECT key FROM baton_runs ORDER BY key DESC OFFSET $2) OR saved_at < $3)`, added, offset, before)
	if err != nil {
		return fmt.Errorf("retain runs: %w", err)
	}
	return nil
}

// text returns s as a PostgreSQL text value can hold it: valid UTF-8 without NUL, which a Go
// string need not be. What is exact (a run's metadata, its events) is kept as bytes; text
// columns are what lists show and searches look at.
func text(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.ReplaceAll(s, "\x00", "")
}
