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

	"github.com/baton-dev/baton/internal/live"
	"github.com/baton-dev/baton/traces"
)

// minEventBytes is less than any stored event takes: `{"seq":1,"time":"…","kind":"exit"}`.
const minEventBytes = 32

// load is Load; it returns the trace of run id as saved so far.
func (s *Store) load(id string) (traces.Trace, error) {
	ctx := context.Background()
	var key, count, size int64
	var meta, tree []byte
	err := s.db.QueryRowContext(ctx, `SELECT key, meta, tree, events, (SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size())
		FROM runs WHERE id = ?`, id).Scan(&key, &meta, &tree, &count, &size)
	if isNoRows(err) {
		return traces.Trace{}, notFound(id)
	} else if err != nil {
		return traces.Trace{}, fmt.Errorf("load run %s: %w", id, err)
	}
	var tr traces.Trace
	if err := json.Unmarshal(meta, &tr.Run); err != nil {
		return traces.Trace{}, damaged{fmt.Errorf("load run %s: %w", id, err)}
	}
	if err := json.Unmarshal(tree, &tr.Agents); err != nil {
		return traces.Trace{}, damaged{fmt.Errorf("load agents of run %s: %w", id, err)}
	}
	rows, err := s.db.QueryContext(ctx, `SELECT data FROM events WHERE id BETWEEN ? AND ? ORDER BY id`, eventID(key, 0), eventID(key+1, 0)-1)
	if err != nil {
		return traces.Trace{}, fmt.Errorf("load events of run %s: %w", id, err)
	}
	defer rows.Close()
	// Each chunk is decoded as it arrives, beside the reading of the next (see decodeEvents);
	// the run's count of events, as last saved, is how many there are to be: room is made for
	// them at once, so no more than the database's bytes could hold (one that was changed under
	// Baton could say anything).
	count = max(0, min(count, size/minEventBytes))
	var readErr error
	events, err := decodeEvents(int(count), func() ([]byte, bool) {
		if readErr != nil || !rows.Next() {
			return nil, false
		}
		var d []byte
		readErr = rows.Scan(&d)
		return d, readErr == nil
	})
	if readErr == nil {
		readErr = rows.Err()
	}
	if readErr != nil {
		return traces.Trace{}, fmt.Errorf("load events of run %s: %w", id, readErr)
	}
	if err != nil {
		// What Baton wrote and cannot read back was changed under it: the file is damaged,
		// whatever the decoder says of the event.
		return traces.Trace{}, damaged{fmt.Errorf("load run %s: %w", id, err)}
	}
	tr.Events = events
	return tr, nil
}

// list is List; it returns one page of run summaries, the most recently added first. Its cursor is the key
// of the page's last run.
func (s *Store) list(q live.RunQuery) (live.RunPage, error) {
	if err := q.Check(); err != nil {
		return live.RunPage{}, err
	}
	below := int64(math.MaxInt64 >> seqBits) // keys below this one
	if q.After != "" {
		k, err := strconv.ParseInt(q.After, 10, 64)
		if err != nil || k < 1 {
			return live.RunPage{}, live.BadCursor(q.After)
		}
		below = k
	}
	got, err := s.summaries(q, below)
	if err != nil {
		return live.RunPage{}, fmt.Errorf("list runs: %w", err)
	}
	page := live.RunPage{Runs: got.runs}
	if len(got.runs) > q.Limit {
		page.Runs = got.runs[:q.Limit]
		page.Next = strconv.FormatInt(got.keys[q.Limit-1], 10)
	}
	if page.Runs == nil {
		page.Runs = []live.RunSummary{}
	}
	return page, nil
}

// listed is runs and their keys, the most recently added first.
type listed struct {
	runs []live.RunSummary
	keys []int64
}

// summaryColumns are the columns of runs (as r) that a summary reads, in summaries' Scan order.
const summaryColumns = `r.key, r.id, r.flow, r.model, r.status, r.conversation, r.started_at, r.ended_at, r.error,
	r.input_line, r.agents, r.transfers, r.tokens, r.events, r.findings, r.usage`

// summaries returns up to q.Limit+1 runs with a key below below that pass q's filters, key
// descending. With a text, it walks the search index from the most recent row down, joined to
// each row's run, and stops at the run after the page: a common text reads a page's worth of
// rows, a rare one (or one that few runs of a flow hold) one pass over its matches, never more.
func (s *Store) summaries(q live.RunQuery, below int64) (listed, error) {
	var out listed
	var conds []string
	var args []any
	for _, f := range []struct{ col, val string }{{"flow", q.Flow}, {"status", string(q.Status)}, {"conversation", q.Conversation}} {
		if f.val != "" {
			conds, args = append(conds, "r."+f.col+" = ?"), append(args, f.val)
		}
	}
	filters := len(args) // the filters' values, which the text's query takes too
	if q.Findings {
		conds = append(conds, "r.findings > 0")
	}
	query := `SELECT ` + summaryColumns + ` FROM runs r WHERE ` + strings.Join(append(conds, "r.key < ?"), " AND ") +
		` ORDER BY r.key DESC LIMIT ?`
	args = append(args, below, q.Limit+1)
	if q.Text != "" {
		// A trigram phrase matches the text anywhere, case folded; quotes make any text a
		// phrase. CROSS JOIN keeps the index outside (SQLite never reorders it), and a unary
		// plus keeps each filter off its column's index: a run is looked up by its key.
		match := `"` + strings.ReplaceAll(q.Text, `"`, `""`) + `"`
		for i := range conds {
			conds[i] = "+" + conds[i]
		}
		if strings.Contains(q.Text, "\n") {
			// It would match across two texts of a row that joins them (schema).
			conds = append(conds, "search.rowid NOT IN (SELECT id FROM search_joined)")
		}
		query = `SELECT ` + summaryColumns + ` FROM search CROSS JOIN runs r ON r.key = search.rowid >> ` +
			strconv.Itoa(seqBits) + ` WHERE ` + strings.Join(append(conds, "search MATCH ?", "search.rowid < ?"), " AND ") +
			` ORDER BY search.rowid DESC`
		args = append(args[:filters], match, below<<seqBits)
	}
	rows, err := s.db.QueryContext(context.Background(), query, args...)
	if err != nil {
		return out, err
	}
	defer rows.Close()
	for rows.Next() && len(out.runs) <= q.Limit {
		var key, started int64
		var ended sql.NullInt64
		var sum live.RunSummary
		var usage []byte
		r := &sum.Run
		if err := rows.Scan(&key, &r.ID, &r.Flow, &r.Model, &r.Status, &r.Conversation, &started, &ended, &r.Error,
			&r.Input, &sum.Agents, &sum.Transfers, &sum.Tokens, &sum.Events, &sum.Findings, &usage); err != nil {
			return out, err
		}
		if sum.Usage, err = live.ParseUsage(usage); err != nil {
			return out, err
		}
		// A run's search rows are one id range: its matches come one after another.
		if n := len(out.keys); n > 0 && out.keys[n-1] == key {
			continue
		}
		r.StartedAt = time.Unix(0, started).UTC()
		if ended.Valid {
			end := time.Unix(0, ended.Int64).UTC()
			r.EndedAt = &end
		}
		out.runs, out.keys = append(out.runs, sum), append(out.keys, key)
	}
	return out, rows.Err()
}

// sessionHash is SessionHash.
func (s *Store) sessionHash(id string) ([]byte, error) {
	var hash []byte
	err := s.db.QueryRowContext(context.Background(), `SELECT session FROM runs WHERE id = ?`, id).Scan(&hash)
	if isNoRows(err) {
		return nil, notFound(id)
	} else if err != nil {
		return nil, fmt.Errorf("read the session of run %s: %w", id, err)
	}
	return hash, nil
}

// interrupted is Interrupted; it returns the id of the newest run that ended interrupted at interruptID, or "".
func (s *Store) interrupted(interruptID string) (string, error) {
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
