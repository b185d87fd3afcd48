package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
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

// List returns one page of run summaries, the most recently added first. Its cursor is the key
// of the page's last run.
func (s *Store) List(q traces.RunQuery) (traces.RunPage, error) {
	if err := q.Check(); err != nil {
		return traces.RunPage{}, err
	}
	below := int64(math.MaxInt64 >> seqBits) // keys below this one
	if q.After != "" {
		k, err := strconv.ParseInt(q.After, 10, 64)
		if err != nil || k < 1 {
			return traces.RunPage{}, traces.BadCursor(q.After)
		}
		below = k
	}
	var got listed
	var err error
	if q.Text == "" {
		err = s.summaries(&got, q, "key < ?", []any{below}, q.Limit+1)
	} else {
		err = s.search(&got, q, below)
	}
	if err != nil {
		return traces.RunPage{}, fmt.Errorf("list runs: %w", err)
	}
	page := traces.RunPage{Runs: got.runs}
	if len(got.runs) > q.Limit {
		page.Runs = got.runs[:q.Limit]
		page.Next = strconv.FormatInt(got.keys[q.Limit-1], 10)
	}
	if page.Runs == nil {
		page.Runs = []traces.RunSummary{}
	}
	return page, nil
}

// listed is runs and their keys, the most recently added first.
type listed struct {
	runs []traces.RunSummary
	keys []int64
}

// summaries adds to out up to limit runs, key descending, that pass q's filters and where.
func (s *Store) summaries(out *listed, q traces.RunQuery, where string, args []any, limit int) error {
	conds := []string{where}
	for _, f := range []struct{ col, val string }{{"flow", q.Flow}, {"status", string(q.Status)}, {"conversation", q.Conversation}} {
		if f.val != "" {
			conds, args = append(conds, f.col+" = ?"), append(args, f.val)
		}
	}
	rows, err := s.db.QueryContext(context.Background(), `SELECT key, id, flow, model, status, conversation, started_at,
		ended_at, error, input_line, agents, transfers, tokens, events FROM runs WHERE `+strings.Join(conds, " AND ")+
		` ORDER BY key DESC LIMIT ?`, append(args, limit)...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var key, started int64
		var ended sql.NullInt64
		var sum traces.RunSummary
		r := &sum.Run
		if err := rows.Scan(&key, &r.ID, &r.Flow, &r.Model, &r.Status, &r.Conversation, &started, &ended, &r.Error,
			&r.Input, &sum.Agents, &sum.Transfers, &sum.Tokens, &sum.Events); err != nil {
			return err
		}
		r.StartedAt = time.Unix(0, started).UTC()
		if ended.Valid {
			end := time.Unix(0, ended.Int64).UTC()
			r.EndedAt = &end
		}
		out.runs, out.keys = append(out.runs, sum), append(out.keys, key)
	}
	return rows.Err()
}

// firstChunk is how many matching runs search looks at first; each next chunk is 4 times larger.
const firstChunk = 64

// search adds to out up to q.Limit+1 runs with a key below below whose input or messages hold
// q.Text and that pass q's filters. It walks the index from the most recent run down, a chunk
// of matching runs at a time, so a common text stops after a page of runs instead of collecting
// every match, and a rare one reads only its few matches.
func (s *Store) search(out *listed, q traces.RunQuery, below int64) error {
	// A trigram phrase matches the text anywhere, case folded; quotes make any text a phrase.
	match := `"` + strings.ReplaceAll(q.Text, `"`, `""`) + `"`
	for chunk := firstChunk; ; chunk *= 4 {
		keys, err := s.matches(match, below, chunk)
		if err != nil || len(keys) == 0 {
			return err
		}
		in := strings.TrimSuffix(strings.Repeat("?,", len(keys)), ",")
		args := make([]any, len(keys))
		for i, k := range keys {
			args[i] = k
		}
		if err := s.summaries(out, q, "key IN ("+in+")", args, q.Limit+1-len(out.runs)); err != nil {
			return err
		}
		if len(out.runs) > q.Limit || len(keys) < chunk {
			return nil
		}
		below = keys[len(keys)-1]
	}
}

// matches returns up to n distinct keys of runs below below with a search row that matches,
// descending.
func (s *Store) matches(match string, below int64, n int) ([]int64, error) {
	rows, err := s.db.QueryContext(context.Background(),
		`SELECT rowid FROM search WHERE search MATCH ? AND rowid < ? ORDER BY rowid DESC`, match, below<<seqBits)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var keys []int64
	for rows.Next() {
		var rowid int64
		if err := rows.Scan(&rowid); err != nil {
			return nil, err
		}
		// A run's rows are one id range: its matches come one after another.
		if key := rowid >> seqBits; len(keys) == 0 || keys[len(keys)-1] != key {
			if len(keys) == n {
				break
			}
			keys = append(keys, key)
		}
	}
	return keys, rows.Err()
}

// Interrupted returns the id of the newest run that ended interrupted at interruptID, or "".
func (s *Store) Interrupted(interruptID string) (string, error) {
	var id string
	err := s.db.QueryRowContext(context.Background(), `SELECT id FROM runs WHERE status = 'interrupted'
		AND last_interrupt = ? ORDER BY key DESC LIMIT 1`, interruptID).Scan(&id)
	if isNoRows(err) {
		return "", nil
	} else if err != nil {
		return "", fmt.Errorf("find interrupted run: %w", err)
	}
	return id, nil
}
