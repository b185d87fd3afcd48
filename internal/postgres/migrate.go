package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// migrations are the schema's versions: migrations[i] brings a database of version i to
// version i+1. A database records its version in baton_schema. Append to the list; never change
// an entry that has shipped.
var migrations = []string{
	// 1: runs, their events in the compact row form, and the trigram index of their text.
	`CREATE EXTENSION IF NOT EXISTS pg_trgm;
	CREATE TABLE baton_runs (
		key            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, -- the order runs were added in
		id             text NOT NULL UNIQUE,
		meta           bytea NOT NULL, -- the traces.Run as JSON, as Load returns it
		tree           bytea NOT NULL, -- the agents as JSON
		flow           text NOT NULL,
		model          text NOT NULL,
		status         text NOT NULL,
		conversation   text NOT NULL,
		started_at     bigint NOT NULL, -- Unix nanoseconds, as the run's clock says
		ended_at       bigint,          -- Unix nanoseconds
		error          text NOT NULL,
		input_line     text NOT NULL,
		agents         integer NOT NULL,
		transfers      integer NOT NULL,
		tokens         bigint NOT NULL,
		events         bigint NOT NULL,
		last_interrupt text NOT NULL,
		findings       integer NOT NULL
	);
	-- Lists go by key, most recently added first: each filter's index ends with it.
	CREATE INDEX baton_runs_by_flow ON baton_runs (flow, key);
	CREATE INDEX baton_runs_by_status ON baton_runs (status, key);
	CREATE INDEX baton_runs_by_conversation ON baton_runs (conversation, key) WHERE conversation <> '';
	CREATE INDEX baton_runs_by_interrupt ON baton_runs (last_interrupt) WHERE status = 'interrupted';
	CREATE INDEX baton_runs_with_findings ON baton_runs (key) WHERE findings > 0;
	CREATE TABLE baton_events (
		run  bigint NOT NULL REFERENCES baton_runs (key) ON DELETE CASCADE,
		seq  bigint NOT NULL,
		data bytea NOT NULL, -- the event's line of a trace file, as traces.EventEncoder writes it
		PRIMARY KEY (run, seq)
	);
	-- The text a search looks at: a run's input (seq 0) and what its events said (SearchText).
	CREATE TABLE baton_search (
		run  bigint NOT NULL REFERENCES baton_runs (key) ON DELETE CASCADE,
		seq  bigint NOT NULL,
		body text NOT NULL,
		PRIMARY KEY (run, seq)
	);
	CREATE INDEX baton_search_body ON baton_search USING gin (body gin_trgm_ops);`,
	// 2: when each run was last written, by Baton's clock, for retention by age (--keep-days);
	// the runs already there count from the upgrade.
	`ALTER TABLE baton_runs ADD COLUMN saved_at bigint NOT NULL DEFAULT (extract(epoch FROM clock_timestamp()) * 1e9)::bigint;
	ALTER TABLE baton_runs ALTER COLUMN saved_at DROP DEFAULT;
	CREATE INDEX baton_runs_by_saved ON baton_runs (saved_at) WHERE status <> 'running';`,
	// 3: leases, for several servers on one database (lease.go): each server's row, renewed by
	// its heartbeat (the database's clock), and the server writing each run; a run of an older
	// Baton has none, and counts as a stopped server's.
	`CREATE TABLE baton_servers (
		id        text PRIMARY KEY,
		address   text NOT NULL,
		heartbeat timestamptz NOT NULL
	);
	ALTER TABLE baton_runs ADD COLUMN owner text;
	CREATE INDEX baton_runs_running ON baton_runs (owner) WHERE status = 'running';`,
	// 4: the hash of the secret of each run's latest ingestion session (live.Store.SetSessionHash),
	// so that after a restart only that session's app goes on with the run; runs already there
	// have none.
	`ALTER TABLE baton_runs ADD COLUMN session bytea;`,
	// 5: each run's prompt and completion tokens by the model its calls named (live.StoredUsage),
	// which prices it in the list; runs already there have none, and list tokens with no money.
	`ALTER TABLE baton_runs ADD COLUMN usage bytea;`,
	// 6: each lease's own expiry in seconds (serve's --lease-expiry), which every server judges
	// it by; an older Baton's lease lasts the 30 s it always did.
	`ALTER TABLE baton_servers ADD COLUMN expiry double precision NOT NULL DEFAULT 30;`,
	// 7: the breakpoints kept for the next runs of each flow apps stream
	// (live.Store.SetNextBreakpoints), which every server on the database gives its apps' runs.
	`CREATE TABLE baton_next_breakpoints (
		flow   text PRIMARY KEY,
		points text[] NOT NULL
	);`,
}

// SchemaVersion is the version of the schema this Baton writes: its number of migrations.
var SchemaVersion = len(migrations)

// migrateLock is the advisory lock that migrations run under, so that servers started at once on
// a new database create its tables once.
const migrateLock int64 = 0x6261746f6e01 // "baton" 1

// migrate brings the database to SchemaVersion, in one transaction under migrateLock, and
// refuses a database of a later version than this Baton knows. A database already at this
// version is only read, so that a read-only one opens for reading.
func (s *Store) migrate(ctx context.Context) error {
	var exists bool
	if err := s.pool.QueryRow(ctx, `SELECT to_regclass('baton_schema') IS NOT NULL`).Scan(&exists); err != nil {
		return err
	}
	var version int
	if exists {
		err := s.pool.QueryRow(ctx, `SELECT version FROM baton_schema`).Scan(&version)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		if version == SchemaVersion {
			return nil
		}
	}
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, migrateLock); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS baton_schema (
		one     boolean PRIMARY KEY DEFAULT true CHECK (one),
		version integer NOT NULL)`); err != nil {
		return err
	}
	err = tx.QueryRow(ctx, `SELECT version FROM baton_schema`).Scan(&version)
	if errors.Is(err, pgx.ErrNoRows) {
		_, err = tx.Exec(ctx, `INSERT INTO baton_schema (version) VALUES (0)`)
	}
	if err != nil {
		return err
	}
	if version > SchemaVersion {
		return fmt.Errorf("the database has Baton's schema version %d; this Baton knows up to %d: run a newer Baton", version, SchemaVersion)
	}
	if version == SchemaVersion {
		return nil
	}
	for v := version; v < SchemaVersion; v++ {
		if _, err := tx.Exec(ctx, migrations[v]); err != nil {
			return fmt.Errorf("migrate the schema to version %d: %w", v+1, err)
		}
	}
	if _, err := tx.Exec(ctx, `UPDATE baton_schema SET version = $1`, SchemaVersion); err != nil {
		return err
	}
	return tx.Commit(ctx)
}
