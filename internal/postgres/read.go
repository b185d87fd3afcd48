package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/baton-dev/baton/internal/live"
	"github.com/baton-dev/baton/traces"
)

// load is Load; it returns run id's key and its trace as saved so far.
func (s *Store) load(ctx context.Context, id string) (int64, traces.Trace, error) {
	var key int64
	var meta, tree []byte
	err := s.pool.QueryRow(ctx, `SELECT key, meta, tree FROM baton_runs WHERE id = $1`, text(id)).Scan(&key, &meta, &tree)
	if isNoRows(err) {
		return 0, traces.Trace{}, notFound(id)
	} else if err != nil {
		return 0, traces.Trace{}, fmt.Errorf("load run %s: %w", id, err)
	}
	var tr traces.Trace
	if err := json.Unmarshal(meta, &tr.Run); err != nil {
		return 0, traces.Trace{}, damaged{fmt.Errorf("load run %s: %w", id, err)}
	}
	if err := json.Unmarshal(tree, &tr.Agents); err != nil {
		return 0, traces.Trace{}, damaged{fmt.Errorf("load agents of run %s: %w", id, err)}
	}
	rows, err := s.pool.Query(ctx, `SELECT data FROM baton_events WHERE run = $1 ORDER BY seq`, key)
	if err != nil {
		return 0, traces.Trace{}, fmt.Errorf("load events of run %s: %w", id, err)
	}
	dec := traces.NewEventDecoder()
	var data []byte
	_, err = pgx.ForEachRow(rows, []any{&data}, func() error {
		e, err := dec.Decode(data)
		if err != nil {
			// What Baton wrote and cannot read back was changed behind its back.
			return damaged{fmt.Errorf("decode stored event %d: %w", len(tr.Events)+1, err)}
		}
		tr.Events = append(tr.Events, e)
		return nil
	})
	if err != nil {
		return 0, traces.Trace{}, fmt.Errorf("load events of run %s: %w", id, err)
	}
	return key, tr, nil
}

// list is List; it returns one page of run summaries, the most recently added first. Its cursor
// is the key of the page's last run.
func (s *Store) list(q live.RunQuery) (live.RunPage, error) {
	if err := q.Check(); err != nil {
		return live.RunPage{}, err
	}
	below := int64(math.MaxInt64)
	if q.After != "" {
		k, err := strconv.ParseInt(q.After, 10, 64)
		if err != nil || k < 1 {
			return live.RunPage{}, live.BadCursor(q.After)
		}
		below = k
	}
	ctx, cancel := waitCtx()
	defer cancel()
	runs, keys, err := s.summaries(ctx, q, below)
	if err != nil {
		return live.RunPage{}, fmt.Errorf("list runs: %w", err)
	}
	page := live.RunPage{Runs: runs}
	if len(runs) > q.Limit {
		page.Runs = runs[:q.Limit]
		page.Next = strconv.FormatInt(keys[q.Limit-1], 10)
	}
	if page.Runs == nil {
		page.Runs = []live.RunSummary{}
	}
	return page, nil
}

// summaries returns up to q.Limit+1 runs with a key below below that pass q's filters, key
// descending, with their keys. A text is a case-folded substring of the run's input or of a text
// of its events (ILIKE, which the trigram index serves), its % and _ taken literally.
func (s *Store) summaries(ctx context.Context, q live.RunQuery, below int64) ([]live.RunSummary, []int64, error) {
	conds, args := []string{"r.key < $1"}, []any{below}
	add := func(cond string, arg any) {
		args = append(args, arg)
		conds = append(conds, fmt.Sprintf(cond, len(args)))
	}
	for _, f := range []struct{ col, val string }{{"flow", q.Flow}, {"status", string(q.Status)}, {"conversation", q.Conversation}} {
		if f.val != "" {
			add("r."+f.col+" = $%d", text(f.val))
		}
	}
	if q.Findings {
		conds = append(conds, "r.findings > 0")
	}
	if q.Text != "" {
		add("EXISTS (SELECT 1 FROM baton_search s WHERE s.run = r.key AND s.body ILIKE $%d)", "%"+likeEscaper.Replace(text(q.Text))+"%")
	}
	args = append(args, q.Limit+1)
	rows, err := s.pool.Query(ctx, `SELECT r.key, r.id, r.flow, r.model, r.status, r.conversation, r.started_at,
		r.ended_at, r.error, r.input_line, r.agents, r.transfers, r.tokens, r.events, r.findings, r.usage
		FROM baton_runs r WHERE `+strings.Join(conds, " AND ")+` ORDER BY r.key DESC LIMIT $`+strconv.Itoa(len(args)), args...)
	if err != nil {
		return nil, nil, err
	}
	var out []live.RunSummary
	var keys []int64
	var key, started int64
	var ended *int64
	var sum live.RunSummary
	var usage []byte
	r := &sum.Run
	_, err = pgx.ForEachRow(rows, []any{&key, &r.ID, &r.Flow, &r.Model, &r.Status, &r.Conversation, &started, &ended,
		&r.Error, &r.Input, &sum.Agents, &sum.Transfers, &sum.Tokens, &sum.Events, &sum.Findings, &usage}, func() error {
		var err error
		if sum.Usage, err = live.ParseUsage(usage); err != nil {
			return err
		}
		r.StartedAt, r.EndedAt = time.Unix(0, started).UTC(), nil
		if ended != nil {
			end := time.Unix(0, *ended).UTC()
			r.EndedAt = &end
		}
		out, keys = append(out, sum), append(keys, key)
		return nil
	})
	return out, keys, err
}

// likeEscaper makes a text literal in a LIKE pattern, whose escape character is \.
var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// sessionHash is SessionHash.
func (s *Store) sessionHash(id string) ([]byte, error) {
	ctx, cancel := waitCtx()
	defer cancel()
	var hash []byte
	err := s.pool.QueryRow(ctx, `SELECT session FROM baton_runs WHERE id = $1`, text(id)).Scan(&hash)
	if isNoRows(err) {
		return nil, notFound(id)
	} else if err != nil {
		return nil, fmt.Errorf("read the session of run %s: %w", id, err)
	}
	return hash, nil
}

// interrupted is Interrupted; it returns the id of the newest run that ended interrupted at
// interruptID, or "".
func (s *Store) interrupted(interruptID string) (string, error) {
	ctx, cancel := waitCtx()
	defer cancel()
	var id string
	err := s.pool.QueryRow(ctx, `SELECT id FROM baton_runs WHERE status = 'interrupted' AND last_interrupt = $1
		ORDER BY key DESC LIMIT 1`, text(interruptID)).Scan(&id)
	if isNoRows(err) {
		return "", nil
	} else if err != nil {
		return "", fmt.Errorf("find interrupted run: %w", err)
	}
	return id, nil
}

// Tail returns run id as one snapshot of the database shows it: its metadata and agents, and its
// events with seq > after, decoded by dec, which has decoded the run's events through after (a
// new decoder for after 0): for a server that follows a run another one records (live.Tailer).
// The rows are read whole before any is decoded: a read that fails decodes nothing.
func (s *Store) Tail(id string, dec *traces.EventDecoder, after int64) (traces.Trace, error) {
	tr, err := s.tail(id, dec, after)
	return tr, s.fault(err)
}

func (s *Store) tail(id string, dec *traces.EventDecoder, after int64) (traces.Trace, error) {
	ctx, cancel := waitCtx()
	defer cancel()
	// One snapshot: the run's status and tree agree with its events.
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return traces.Trace{}, fmt.Errorf("read run %s: %w", id, err)
	}
	defer tx.Rollback(ctx)
	var key int64
	var meta, tree []byte
	err = tx.QueryRow(ctx, `SELECT key, meta, tree FROM baton_runs WHERE id = $1`, text(id)).Scan(&key, &meta, &tree)
	if isNoRows(err) {
		return traces.Trace{}, notFound(id)
	} else if err != nil {
		return traces.Trace{}, fmt.Errorf("read run %s: %w", id, err)
	}
	rows, err := tx.Query(ctx, `SELECT data FROM baton_events WHERE run = $1 AND seq > $2 ORDER BY seq`, key, after)
	if err != nil {
		return traces.Trace{}, fmt.Errorf("read events of run %s: %w", id, err)
	}
	data, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	if err != nil {
		return traces.Trace{}, fmt.Errorf("read events of run %s: %w", id, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return traces.Trace{}, fmt.Errorf("read run %s: %w", id, err)
	}
	var tr traces.Trace
	if err := json.Unmarshal(meta, &tr.Run); err != nil {
		return traces.Trace{}, damaged{fmt.Errorf("read run %s: %w", id, err)}
	}
	if err := json.Unmarshal(tree, &tr.Agents); err != nil {
		return traces.Trace{}, damaged{fmt.Errorf("read agents of run %s: %w", id, err)}
	}
	tr.Events = make([]traces.Event, 0, len(data))
	for _, d := range data {
		e, err := dec.Decode(d)
		if err != nil {
			return traces.Trace{}, damaged{fmt.Errorf("decode stored event %d of run %s: %w", after+int64(len(tr.Events))+1, id, err)}
		}
		tr.Events = append(tr.Events, e)
	}
	return tr, nil
}
