package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/baton-dev/baton/traces"
)

// Load returns the trace of run id as saved so far.
func (s *Store) Load(id string) (traces.Trace, error) {
	ctx := context.Background()
	var key int64
	var meta, tree []byte
	err := s.db.QueryRowContext(ctx, `SELECT key, meta, tree FROM runs WHERE id = ?`, id).Scan(&key, &meta, &tree)
	if isNoRows(err) {
		return traces.Trace{}, notFound(id)
	} else if err != nil {
		return traces.Trace{}, fmt.Errorf("load run %s: %w", id, err)
	}
	var tr traces.Trace
	if err := json.Unmarshal(meta, &tr.Run); err != nil {
		return traces.Trace{}, fmt.Errorf("load run %s: %w", id, err)
	}
	if err := json.Unmarshal(tree, &tr.Agents); err != nil {
		return traces.Trace{}, fmt.Errorf("load agents of run %s: %w", id, err)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT data FROM events WHERE run = ? ORDER BY seq`, key)
	if err != nil {
		return traces.Trace{}, fmt.Errorf("load events of run %s: %w", id, err)
	}
	defer rows.Close()
	var data [][]byte
	for rows.Next() {
		var d []byte
		if err := rows.Scan(&d); err != nil {
			return traces.Trace{}, fmt.Errorf("load events of run %s: %w", id, err)
		}
		data = append(data, d)
	}
	if err := rows.Err(); err != nil {
		return traces.Trace{}, fmt.Errorf("load events of run %s: %w", id, err)
	}
	if tr.Events, err = decodeEvents(data); err != nil {
		return traces.Trace{}, fmt.Errorf("load run %s: %w", id, err)
	}
	return tr, nil
}

// List returns one page of run summaries, newest first.
func (s *Store) List(q traces.RunQuery) (traces.RunPage, error) {
	if err := q.Check(); err != nil {
		return traces.RunPage{}, err
	}
	var where []string
	var args []any
	if q.Flow != "" {
		where, args = append(where, "flow = ?"), append(args, q.Flow)
	}
	if q.Status != "" {
		where, args = append(where, "status = ?"), append(args, string(q.Status))
	}
	if q.Conversation != "" {
		where, args = append(where, "conversation = ?"), append(args, q.Conversation)
	}
	if q.After != "" {
		startedNanos, id, err := traces.ParseCursor(q.After)
		if err != nil {
			return traces.RunPage{}, err
		}
		where, args = append(where, "(started_at < ? OR (started_at = ? AND id < ?))"), append(args, startedNanos, startedNanos, id)
	}
	if q.Text != "" {
		// A trigram phrase matches the text anywhere, case folded; quotes make any text a phrase.
		where = append(where, fmt.Sprintf("key IN (SELECT rowid >> %d FROM search WHERE search MATCH ?)", seqBits))
		args = append(args, `"`+strings.ReplaceAll(q.Text, `"`, `""`)+`"`)
	}
	query := `SELECT id, flow, model, status, conversation, started_at, ended_at, error, input_line,
		agents, transfers, tokens, events FROM runs`
	if len(where) > 0 {
		query += " WHERE " + strings.Join(where, " AND ")
	}
	query += " ORDER BY started_at DESC, id DESC LIMIT ?"
	args = append(args, q.Limit+1) // one more says whether a next page exists
	rows, err := s.db.QueryContext(context.Background(), query, args...)
	if err != nil {
		return traces.RunPage{}, fmt.Errorf("list runs: %w", err)
	}
	defer rows.Close()
	page := traces.RunPage{Runs: make([]traces.RunSummary, 0, q.Limit)}
	for rows.Next() {
		if len(page.Runs) == q.Limit {
			page.Next = traces.Cursor(page.Runs[len(page.Runs)-1].Run)
			break
		}
		var sum traces.RunSummary
		var started int64
		var ended sql.NullInt64
		r := &sum.Run
		if err := rows.Scan(&r.ID, &r.Flow, &r.Model, &r.Status, &r.Conversation, &started, &ended, &r.Error,
			&r.Input, &sum.Agents, &sum.Transfers, &sum.Tokens, &sum.Events); err != nil {
			return traces.RunPage{}, fmt.Errorf("list runs: %w", err)
		}
		r.StartedAt = time.Unix(0, started).UTC()
		if ended.Valid {
			end := time.Unix(0, ended.Int64).UTC()
			r.EndedAt = &end
		}
		page.Runs = append(page.Runs, sum)
	}
	if err := rows.Err(); err != nil {
		return traces.RunPage{}, fmt.Errorf("list runs: %w", err)
	}
	return page, nil
}

// Interrupted returns the id of the newest run that ended interrupted at interruptID, or "".
func (s *Store) Interrupted(interruptID string) (string, error) {
	var id string
	err := s.db.QueryRowContext(context.Background(), `SELECT id FROM runs WHERE status = 'interrupted'
		AND last_interrupt = ? ORDER BY started_at DESC LIMIT 1`, interruptID).Scan(&id)
	if isNoRows(err) {
		return "", nil
	} else if err != nil {
		return "", fmt.Errorf("find interrupted run: %w", err)
	}
	return id, nil
}
