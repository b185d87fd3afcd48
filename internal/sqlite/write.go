package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/baton-dev/baton/internal/live"
	"github.com/baton-dev/baton/traces"
)

// create is Create; it records a new run with its agents and events so far. It fails with CodeConflict when
// the id is taken. Then it deletes the oldest added ended runs beyond what the store keeps.
func (s *Store) create(run traces.Run, tally live.Tally, agents []traces.Agent, events []traces.Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ctx := context.Background()
	tx, done, err := s.begin(ctx, len(events) >= pipelineEvents)
	if err != nil {
		return fmt.Errorf("create run %s: %w", run.ID, err)
	}
	defer done()
	defer tx.Rollback()
	var taken int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM runs WHERE id = ?`, run.ID).Scan(&taken); err != nil {
		return fmt.Errorf("create run %s: %w", run.ID, err)
	}
	if taken > 0 {
		return traces.Errorf(traces.CodeConflict, "run %q already exists", run.ID)
	}
	meta, tree, err := live.StoredMeta(run, agents)
	if err != nil {
		return err
	}
	if tree == nil {
		tree = []byte("[]")
	}
	var key int64
	err = tx.QueryRowContext(ctx, `INSERT INTO runs (id, meta, tree, flow, model, status, conversation, started_at,
		ended_at, error, input_line, agents, transfers, tokens, events, last_interrupt, findings, saved_at, usage)
		VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) RETURNING key`,
		run.ID, meta, tree, run.Flow, run.Model, string(run.Status), run.Conversation, run.StartedAt.UnixNano(),
		live.StoredEnd(run), run.Error, live.FirstLine(run.Input), tally.Agents, tally.Transfers, tally.Tokens, tally.Events,
		tally.LastInterrupt, tally.Findings, time.Now().UnixNano(), live.StoredUsage(tally)).Scan(&key)
	if err != nil {
		return fmt.Errorf("create run %s: %w", run.ID, err)
	}
	enc := newEncoder(nil)
	if err := insertEvents(ctx, tx, key, enc, events); err != nil {
		return fmt.Errorf("create run %s: %w", run.ID, err)
	}
	// After the events: see insertEvents.
	if _, err := tx.ExecContext(ctx, `INSERT INTO search (rowid, body) VALUES (?, ?)`, key<<seqBits, run.Input); err != nil {
		return fmt.Errorf("create run %s: %w", run.ID, err)
	}
	if err := s.retain(ctx, tx, key); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("create run %s: %w", run.ID, err)
	}
	if !run.Status.Ended() {
		s.encoders[run.ID] = enc
	}
	return nil
}

// begin begins a write. One of many events (an import) leaves the WAL's checkpoint, which
// copies what the commit wrote into the database file (about a second for a million events), to
// a goroutine of the store's after the commit (checkpointLater), rather than making the commit
// do it (SQLite's autocheckpoint, at 1,000 pages): the transaction's connection has it off until
// done. The commit is as durable either way: it is in the WAL.
func (s *Store) begin(ctx context.Context, large bool) (tx *sql.Tx, done func(), err error) {
	if !large || s.path == Memory {
		tx, err := s.db.BeginTx(ctx, nil)
		return tx, func() {}, err
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return nil, nil, err
	}
	if _, err := conn.ExecContext(ctx, `PRAGMA wal_autocheckpoint = 0`); err != nil {
		conn.Close()
		return nil, nil, err
	}
	if tx, err = conn.BeginTx(ctx, nil); err != nil {
		conn.Close()
		return nil, nil, err
	}
	return tx, func() {
		if _, err := conn.ExecContext(ctx, fmt.Sprintf(`PRAGMA wal_autocheckpoint = %d`, autocheckpoint)); err != nil {
			conn.Raw(func(any) error { return driver.ErrBadConn }) // not back to the pool without it
		}
		conn.Close()
		s.checkpointLater()
	}, nil
}

// autocheckpoint is SQLite's default wal_autocheckpoint, in pages.
const autocheckpoint = 1000

// checkpointLater copies the WAL into the database file on a goroutine of its own, which Close
// waits for. PASSIVE: it waits for no reader or writer, and copies what it can. The caller
// holds s.mu.
func (s *Store) checkpointLater() {
	if s.closed {
		return // a write after Close fails anyway
	}
	s.background.Go(func() {
		s.db.Exec(`PRAGMA wal_checkpoint(PASSIVE)`) // on failure, the next commits' autocheckpoint does it
	})
}

// save is Save; it records the next events of a created run, with its metadata and tally as of them, and its
// agents when agents is not nil.
func (s *Store) save(run traces.Run, tally live.Tally, agents []traces.Agent, events []traces.Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.saveLocked(context.Background(), run, tally, agents, events)
}

// saveLocked is Save for a caller that holds s.mu.
func (s *Store) saveLocked(ctx context.Context, run traces.Run, tally live.Tally, agents []traces.Agent, events []traces.Event) (err error) {
	enc := s.encoders[run.ID]
	defer func() {
		if err != nil || run.Status.Ended() {
			// A failed write leaves the encoder's state ahead of the database: rebuild it
			// next time. An ended run needs it no more (a resume rebuilds it).
			delete(s.encoders, run.ID)
		}
	}()
	if enc == nil {
		tr, err := s.load(run.ID)
		if err != nil {
			return err
		}
		enc = newEncoder(tr.Events)
		s.encoders[run.ID] = enc
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("save run %s: %w", run.ID, err)
	}
	defer tx.Rollback()
	meta, tree, err := live.StoredMeta(run, agents)
	if err != nil {
		return err
	}
	var key int64
	err = tx.QueryRowContext(ctx, `UPDATE runs SET meta = ?, tree = coalesce(?, tree), status = ?, started_at = ?,
		ended_at = ?, error = ?, agents = ?, transfers = ?, tokens = ?, events = ?, last_interrupt = ?, findings = ?,
		saved_at = ?, usage = ? WHERE id = ? RETURNING key`,
		meta, tree, string(run.Status), run.StartedAt.UnixNano(), live.StoredEnd(run), run.Error, tally.Agents,
		tally.Transfers, tally.Tokens, tally.Events, tally.LastInterrupt, tally.Findings, time.Now().UnixNano(), live.StoredUsage(tally), run.ID).Scan(&key)
	if isNoRows(err) {
		return notFound(run.ID)
	} else if err != nil {
		return fmt.Errorf("save run %s: %w", run.ID, err)
	}
	if err := insertEvents(ctx, tx, key, enc, events); err != nil {
		return fmt.Errorf("save run %s: %w", run.ID, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("save run %s: %w", run.ID, err)
	}
	return nil
}

// insertEvents stores events of run key, encoded by enc, in chunks of consecutive events (one
// row each: a million-event import writes a few thousand rows, where a row an event spent more
// time on SQLite's B-tree than on the bytes), and indexes their text for search, each distinct
// text once (see eventBatch.encode). For a run of many events (an import), the chunks are encoded on
// another goroutine while SQLite writes the ones before them. The search rows go after every
// event: once written to in the transaction, the search index (FTS5) writes its pending terms to
// disk at each statement that opens a savepoint.
func insertEvents(ctx context.Context, tx *sql.Tx, key int64, enc *encoder, events []traces.Event) (err error) {
	if len(events) == 0 {
		return nil
	}
	if key >= 1<<(63-eventBits) {
		return fmt.Errorf("run key %d is past the %d runs a database can have held", key, int64(1)<<(63-eventBits))
	}
	insert, err := tx.PrepareContext(ctx, `INSERT OR FAIL INTO events (id, data) VALUES (?, ?)`)
	if err != nil {
		return fmt.Errorf("insert events: %w", err)
	}
	defer insert.Close()
	var index []searchRow
	// SQLite copies a chunk's bytes: its buffer goes back to be filled again, unlike a new
	// one of chunkBytes neither cleared nor grown to size.
	free := make(chan []byte, 8)
	write := func(b *eventBatch) error {
		if _, err := insert.ExecContext(ctx, eventID(key, b.events[0].Seq), b.data); err != nil {
			return fmt.Errorf("insert events %d to %d: %w", b.events[0].Seq, b.events[len(b.events)-1].Seq, err)
		}
		index = append(index, b.index...)
		select {
		case free <- b.data[:0]:
		default:
		}
		return nil
	}
	seen := make(map[string]struct{})
	next := func(rest []traces.Event) *eventBatch {
		b := &eventBatch{}
		select {
		case b.data = <-free:
		default:
			if len(events) >= pipelineEvents { // else a chunk is as small as the events saved
				b.data = make([]byte, 0, 2*chunkBytes)
			}
		}
		b.err = b.encode(enc, key, rest, seen)
		return b
	}
	if len(events) < pipelineEvents {
		for rest := events; len(rest) > 0; {
			b := next(rest)
			if b.err != nil {
				return b.err
			}
			if err := write(b); err != nil {
				return err
			}
			rest = rest[len(b.events):]
		}
	} else {
		batches := make(chan *eventBatch, 4)
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() {
			defer close(batches)
			for rest := events; len(rest) > 0; {
				b := next(rest)
				select {
				case batches <- b:
				case <-stop:
					return
				}
				if b.err != nil {
					return
				}
				rest = rest[len(b.events):]
			}
		})
		// The encoder is the store's, which goes on with it after: let its goroutine end first.
		defer wg.Wait()
		defer close(stop)
		for b := range batches {
			if b.err != nil {
				return b.err
			}
			if err := write(b); err != nil {
				return err
			}
		}
	}
	if len(index) == 0 {
		return nil
	}
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO search (rowid, body) VALUES (?, ?)`)
	if err != nil {
		return fmt.Errorf("index events: %w", err)
	}
	defer stmt.Close()
	for _, r := range index {
		if _, err := stmt.ExecContext(ctx, r.id, r.text); err != nil {
			return fmt.Errorf("index event %d: %w", r.id&(1<<seqBits-1), err)
		}
	}
	// The joined rows' ids, after the index: a many-row statement would flush it (see above).
	joined := &bulkInsert{ctx: ctx, tx: tx, head: `INSERT INTO search_joined (id) VALUES `, cols: 1, rows: insertRows}
	defer joined.close()
	for _, r := range index {
		if r.joined {
			if err := joined.add(r.id); err != nil {
				return fmt.Errorf("index events: %w", err)
			}
		}
	}
	if err := joined.flush(); err != nil {
		return fmt.Errorf("index events: %w", err)
	}
	return nil
}

const (
	// insertRows is how many rows one INSERT writes: one statement a row spent as much time
	// getting each row to SQLite as SQLite spent writing it.
	insertRows = 64
	// chunkEvents and chunkBytes bound a chunk of events: it ends at chunkEvents events, or at
	// the event that takes it to chunkBytes bytes.
	chunkEvents = 1024
	chunkBytes  = 256 << 10
	// pipelineEvents is how many events make insertEvents encode them on a goroutine of their
	// own, a chunk at a time.
	pipelineEvents = 4096
)

// eventBatch is one chunk: consecutive events, the row stored for them, and the search rows of
// their texts.
type eventBatch struct {
	events []traces.Event
	data   []byte // each event's line, joined by newlines
	index  []searchRow
	err    error
}

// searchRow is a row of the search index: its id (the run's key and the seq of its first text's
// event) and body, and whether it joins several texts.
type searchRow struct {
	id     int64
	text   string
	joined bool
}

// encode makes the batch the chunk that begins with events[0] of run key, its events coming after
// the ones enc encoded, and indexes their texts; seen holds the texts already indexed by this write.
func (b *eventBatch) encode(enc *encoder, key int64, events []traces.Event, seen map[string]struct{}) error {
	var joined strings.Builder
	var joinedID int64
	texts := 0 // in joined
	for i, e := range events {
		if i == chunkEvents || len(b.data) >= chunkBytes {
			break
		}
		if e.Seq <= enc.last || e.Seq >= 1<<eventBits {
			return fmt.Errorf("insert event %d: a run's events are numbered from 1 to %d, each after the one before (%d)",
				e.Seq, int64(1)<<eventBits-1, enc.last)
		}
		if i > 0 {
			b.data = append(b.data, '\n')
		}
		var err error
		if b.data, err = enc.append(b.data, e); err != nil {
			return err
		}
		b.events = events[:i+1]
		text := live.SearchText(e)
		if text == "" || e.Seq >= 1<<seqBits {
			continue
		}
		if _, ok := seen[text]; ok {
			continue
		}
		seen[text] = struct{}{}
		id := key<<seqBits | e.Seq
		if strings.IndexByte(text, '\n') >= 0 {
			b.index = append(b.index, searchRow{id: id, text: text})
			continue
		}
		if texts == 0 {
			joinedID = id
		} else {
			joined.WriteByte('\n')
		}
		joined.WriteString(text)
		texts++
	}
	if texts > 0 {
		b.index = append(b.index, searchRow{id: joinedID, text: joined.String(), joined: texts > 1})
	}
	// In id order: FTS5 writes its pending terms to disk before a row whose id is below the last one's.
	slices.SortFunc(b.index, func(x, y searchRow) int { return cmp.Compare(x.id, y.id) })
	return nil
}

// bulkInsert inserts rows of cols values into a table, insertRows to a statement.
type bulkInsert struct {
	ctx  context.Context
	tx   *sql.Tx
	head string // the statement up to VALUES
	cols int
	rows int       // rows a statement
	full *sql.Stmt // for rows rows; prepared when first needed
	args []any
}

// add inserts a row of b.cols values, or keeps it for the next statement.
func (b *bulkInsert) add(values ...any) error {
	b.args = append(b.args, values...)
	if len(b.args) < b.cols*b.rows {
		return nil
	}
	if b.full == nil {
		stmt, err := b.tx.PrepareContext(b.ctx, b.statement(b.rows))
		if err != nil {
			return err
		}
		b.full = stmt
	}
	_, err := b.full.ExecContext(b.ctx, b.args...)
	b.args = b.args[:0]
	return err
}

// flush inserts the rows kept.
func (b *bulkInsert) flush() error {
	if len(b.args) == 0 {
		return nil
	}
	_, err := b.tx.ExecContext(b.ctx, b.statement(len(b.args)/b.cols), b.args...)
	b.args = b.args[:0]
	return err
}

// statement is the INSERT of rows rows.
func (b *bulkInsert) statement(rows int) string {
	row := "(" + strings.Repeat("?,", b.cols-1) + "?)"
	return b.head + strings.Repeat(row+",", rows-1) + row
}

func (b *bulkInsert) close() {
	if b.full != nil {
		b.full.Close()
	}
}

// remove is Delete; it removes run id and its events.
func (s *Store) remove(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ctx := context.Background()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("delete run %s: %w", id, err)
	}
	defer tx.Rollback()
	var key int64
	if err := tx.QueryRowContext(ctx, `SELECT key FROM runs WHERE id = ?`, id).Scan(&key); isNoRows(err) {
		return notFound(id)
	} else if err != nil {
		return fmt.Errorf("delete run %s: %w", id, err)
	}
	if err := deleteRun(ctx, tx, key); err != nil {
		return fmt.Errorf("delete run %s: %w", id, err)
	}
	delete(s.encoders, id)
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("delete run %s: %w", id, err)
	}
	return nil
}

// setSessionHash is SetSessionHash.
func (s *Store) setSessionHash(id string, hash []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	res, err := s.db.ExecContext(context.Background(), `UPDATE runs SET session = ? WHERE id = ?`, hash, id)
	if err != nil {
		return fmt.Errorf("record the session of run %s: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("record the session of run %s: %w", id, err)
	} else if n == 0 {
		return notFound(id)
	}
	return nil
}

// deleteRun removes run key, its events and its search rows.
func deleteRun(ctx context.Context, tx *sql.Tx, key int64) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM events WHERE id BETWEEN ? AND ?`, eventID(key, 0), eventID(key+1, 0)-1); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM search WHERE rowid BETWEEN ?1 AND ?2; DELETE FROM search_joined WHERE id BETWEEN ?1 AND ?2`,
		key<<seqBits, (key+1)<<seqBits-1); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `DELETE FROM runs WHERE key = ?`, key)
	return err
}

// retain deletes the oldest added runs that have ended beyond the newest s.keep, and those that
// ended and were last written before s.maxAge ago; never added, the run just added. The caller
// holds s.mu.
func (s *Store) retain(ctx context.Context, tx *sql.Tx, added int64) error {
	offset, before := int64(s.keep), int64(math.MinInt64) // no run is beyond these
	if offset < 0 {
		offset = math.MaxInt64
	}
	if s.maxAge > 0 {
		before = time.Now().Add(-s.maxAge).UnixNano()
	}
	if s.keep < 0 && s.maxAge <= 0 {
		return nil
	}
	rows, err := tx.QueryContext(ctx, `SELECT key FROM runs WHERE status != 'running' AND key != ? AND (
		key IN (SELECT key FROM runs ORDER BY key DESC LIMIT -1 OFFSET ?) OR saved_at < ?)`, added, offset, before)
	if err != nil {
		return fmt.Errorf("retain runs: %w", err)
	}
	var keys []int64
	for rows.Next() {
		var k int64
		if err := rows.Scan(&k); err != nil {
			rows.Close()
			return fmt.Errorf("retain runs: %w", err)
		}
		keys = append(keys, k)
	}
	rows.Close()
	for _, k := range keys {
		if err := deleteRun(ctx, tx, k); err != nil {
			return fmt.Errorf("retain runs: %w", err)
		}
	}
	return nil
}
