package sqlite_test

import (
	"bytes"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/baton-dev/baton/internal/live"
	"github.com/baton-dev/baton/internal/sqlite"
	"github.com/baton-dev/baton/traces"
)

// TestMigrateFromVersion1: a database written before runs had their findings counted opens, gains
// the count (0 for the runs it holds), and lists by it.
func TestMigrateFromVersion1(t *testing.T) {
	testMigrateFrom(t, `DROP INDEX runs_by_saved; ALTER TABLE runs DROP COLUMN saved_at;
		ALTER TABLE runs DROP COLUMN findings; ALTER TABLE runs DROP COLUMN session; ALTER TABLE runs DROP COLUMN usage; DROP TABLE next_breakpoints; PRAGMA user_version = 1`)
}

// TestMigrateFromVersion2: a database written before runs said when they were last written opens,
// and its runs count as written at the upgrade: retention by age keeps them.
func TestMigrateFromVersion2(t *testing.T) {
	testMigrateFrom(t, `DROP INDEX runs_by_saved; ALTER TABLE runs DROP COLUMN saved_at; ALTER TABLE runs DROP COLUMN session;
		ALTER TABLE runs DROP COLUMN usage; DROP TABLE next_breakpoints; PRAGMA user_version = 2`)
}

// TestMigrateFromVersion3: a database written before runs kept their session's hash opens; its
// runs have none, and take one.
func TestMigrateFromVersion3(t *testing.T) {
	testMigrateFrom(t, `ALTER TABLE runs DROP COLUMN session; ALTER TABLE runs DROP COLUMN usage; DROP TABLE next_breakpoints; PRAGMA user_version = 3`)
}

// TestMigrateFromVersion4: a database written before runs kept their tokens by model opens, and
// its runs list with no usage: tokens, and no money.
func TestMigrateFromVersion4(t *testing.T) {
	testMigrateFrom(t, `ALTER TABLE runs DROP COLUMN usage; DROP TABLE next_breakpoints; PRAGMA user_version = 4`)
}

// TestMigrateFromVersion5: a database written before it kept breakpoints for apps' next runs
// opens, keeps none, and keeps them from then on, past a reopening.
func TestMigrateFromVersion5(t *testing.T) {
	path := testMigrateFrom(t, `DROP TABLE next_breakpoints; PRAGMA user_version = 5`)
	s, err := sqlite.Open(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	if points, err := s.NextBreakpoints("f"); err != nil || points != nil {
		t.Errorf("NextBreakpoints(f) = %q, %v: want none", points, err)
	}
	if err := s.SetNextBreakpoints("f", []string{"transfer:billing"}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if s, err = sqlite.Open(path, 0); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if points, err := s.NextBreakpoints("f"); err != nil || len(points) != 1 || points[0] != "transfer:billing" {
		t.Errorf("NextBreakpoints(f) once reopened = %q, %v: want transfer:billing", points, err)
	}
}

// TestMigrateFromVersion6: a database whose events were keyed by (run, seq) WITHOUT ROWID opens;
// its runs' events are copied to the rowid table, read back in order, take more events after
// them, are found by search, and go with their run.
func TestMigrateFromVersion6(t *testing.T) {
	testMigrateEvents(t, 300, downgradeEvents+`; PRAGMA user_version = 6`)
}

// TestMigrateFromVersion7: a database of an event a row and a text a search row opens; its runs'
// events, more than a chunk holds, are joined into chunks, read back in order, take more events
// after them, are found by search (a text with a newline too), and go with their run.
func TestMigrateFromVersion7(t *testing.T) {
	testMigrateEvents(t, 2500, downgradeSearch+`; PRAGMA user_version = 7`)
}

// testMigrateEvents makes a database of two runs of n events, takes it back to an earlier
// schema with downgrade, and checks what it holds once opened.
func testMigrateEvents(t *testing.T, n int, downgradeSQL string) {
	path := filepath.Join(t.TempDir(), "old.db")
	s, err := sqlite.Open(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	var events []traces.Event
	for i := range n {
		events = append(events, traces.Event{Seq: int64(i + 1), Time: start.Add(time.Duration(i) * time.Second), Kind: traces.KindMessage,
			Agent: "a", Message: &traces.Message{Role: "assistant", Content: fmt.Sprintf("old word %d", i+1)}})
		if i%100 == 6 {
			events[i].Message.Content = fmt.Sprintf("line one\nline two %d", i+1)
		}
	}
	var tally live.Tally
	for _, e := range events {
		tally.Add(e)
	}
	for _, id := range []string{"r1", "r2"} {
		if err := s.Create(tally.Apply(traces.Run{ID: id, Flow: "f", StartedAt: start, Status: traces.StatusRunning}), tally, nil, events); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	downgrade(t, path, downgradeSQL)

	if s, err = sqlite.Open(path, 0); err != nil {
		t.Fatalf("open a database of an earlier version: %v", err)
	}
	defer s.Close()
	next := traces.Event{Seq: int64(n + 1), Time: start.Add(time.Hour), Kind: traces.KindMessage, Agent: "a",
		Message: &traces.Message{Role: "assistant", Content: "new word"}}
	tally.Add(next)
	if err := s.Save(tally.Apply(traces.Run{ID: "r2", Flow: "f", StartedAt: start, Status: traces.StatusRunning}), tally, nil, []traces.Event{next}); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]int{"r1": n, "r2": n + 1} {
		tr, err := s.Load(id)
		if err != nil || len(tr.Events) != want {
			t.Fatalf("Load(%s) = %d events, %v: want %d", id, len(tr.Events), err, want)
		}
		for i, e := range tr.Events {
			if e.Seq != int64(i+1) {
				t.Fatalf("%s: event %d has seq %d", id, i, e.Seq)
			}
		}
		if got, want := tr.Events[n-1].Message.Content, fmt.Sprintf("old word %d", n); got != want {
			t.Errorf("%s: event %d says %q, want %q", id, n, got, want)
		}
	}
	for text, want := range map[string]int{"old word 150": 2, "one\nline two 207": 2, "new word": 1, "the old input": 2} {
		if p, err := s.List(live.RunQuery{Text: text}); err != nil || len(p.Runs) != want {
			t.Errorf("search %q = %+v, %v: want %d runs", text, p.Runs, err, want)
		}
	}
	if err := s.Delete("r1"); err != nil {
		t.Fatal(err)
	}
	if tr, err := s.Load("r2"); err != nil || len(tr.Events) != n+1 {
		t.Errorf("Load(r2) after deleting r1 = %d events, %v", len(tr.Events), err)
	}
	if p, err := s.List(live.RunQuery{Text: "old word 150"}); err != nil || len(p.Runs) != 1 || p.Runs[0].ID != "r2" {
		t.Errorf("search after deleting r1 = %+v, %v: want r2 alone", p.Runs, err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var copies int
	if err := db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE name IN ('search_content', 'events_v6', 'search_v6', 'events_v7')`).Scan(&copies); err != nil || copies != 0 {
		t.Errorf("%d tables of the index's text or the old tables left, %v: want none", copies, err)
	}
	// r2's events in chunks of 1024 (theirs are short), and the one saved after.
	var chunks int
	if err := db.QueryRow(`SELECT count(*) FROM events`).Scan(&chunks); err != nil || chunks != (n+1023)/1024+1 {
		t.Errorf("%d rows of events, %v: want %d", chunks, err, (n+1023)/1024+1)
	}
}

// downgradeSearch takes the search index back to its shape before version 8, once unchunk
// has taken the events back to theirs: a text a row, made again from the events' text (the run's
// input, which the test's runs share, at seq 0).
const downgradeSearch = `DROP TABLE search; DROP TABLE search_joined;
	CREATE VIRTUAL TABLE search USING fts5(body, tokenize = 'trigram', content = '', contentless_delete = 1);
	INSERT INTO search (rowid, body) SELECT (id >> 32) << 24, 'the old input' FROM events WHERE id & 0xffffffff = 1;
	INSERT INTO search (rowid, body) SELECT (id >> 32) << 24 | (id & 0xffffffff), json_extract(data, '$.message.content') FROM events
		WHERE json_extract(data, '$.message.content') IS NOT NULL`

// downgrade takes the database at path back to an earlier schema: its events to a row each, as
// before version 8, then the statements of sql.
func downgrade(t *testing.T, path, sql_ string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT id, data FROM events ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	var lines [][]byte
	for rows.Next() {
		var id int64
		var chunk []byte
		if err := rows.Scan(&id, &chunk); err != nil {
			t.Fatal(err)
		}
		for i, line := range bytes.Split(chunk, []byte("\n")) {
			ids, lines = append(ids, id+int64(i)), append(lines, line) // the tests' seqs have no gaps
		}
	}
	rows.Close()
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.Exec(`DELETE FROM events`); err != nil {
		t.Fatal(err)
	}
	for i, id := range ids {
		if _, err := tx.Exec(`INSERT INTO events (id, data) VALUES (?, ?)`, id, lines[i]); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tx.Exec(sql_); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

// downgradeEvents takes the events table and the search index back to their shape before
// version 7: the index, contentless since, is made again from the events' text (the run's
// input, which the test's runs share, at seq 0).
const downgradeEvents = downgradeSearch + `; CREATE TABLE events_old (run INTEGER NOT NULL, seq INTEGER NOT NULL, data BLOB NOT NULL,
	PRIMARY KEY (run, seq)) WITHOUT ROWID;
	INSERT INTO events_old SELECT id >> 32, id & 0xffffffff, data FROM events;
	DROP TABLE events; ALTER TABLE events_old RENAME TO events;
	CREATE VIRTUAL TABLE search_old USING fts5(body, tokenize = 'trigram');
	INSERT INTO search_old (rowid, body) SELECT run << 24, 'the old input' FROM events WHERE seq = 1;
	INSERT INTO search_old (rowid, body) SELECT run << 24 | seq, json_extract(data, '$.message.content') FROM events
		WHERE json_extract(data, '$.message.content') IS NOT NULL;
	DROP TABLE search; ALTER TABLE search_old RENAME TO search`

// testMigrateFrom makes a database of one run, takes it back to an earlier schema with downgrade
// (and its events table to theirs), and opens it again; it returns the database's path, closed.
func testMigrateFrom(t *testing.T, downgradeSQL string) string {
	path := filepath.Join(t.TempDir(), "old.db")
	s, err := sqlite.Open(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	events := []traces.Event{{Seq: 1, Time: start, Kind: traces.KindRunStarted, Run: &traces.RunMark{Status: traces.StatusRunning}}}
	var tally live.Tally
	tally.Add(events[0])
	if err := s.Create(tally.Apply(traces.Run{ID: "r-old", Flow: "f", StartedAt: start}), tally, nil, events); err != nil {
		t.Fatal(err)
	}
	s.Close()
	downgrade(t, path, downgradeEvents+"; "+downgradeSQL)

	s, err = sqlite.Open(path, 0)
	if err != nil {
		t.Fatalf("open a database of an earlier version: %v", err)
	}
	defer s.Close()
	s.KeepFor(time.Hour)
	if err := s.Create(tally.Apply(traces.Run{ID: "r-new", Flow: "f", StartedAt: start}), tally, nil, events); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete("r-new"); err != nil {
		t.Fatal(err)
	}
	p, err := s.List(live.RunQuery{})
	if err != nil || len(p.Runs) != 1 || p.Runs[0].ID != "r-old" || p.Runs[0].Findings != 0 || len(p.Runs[0].Usage) != 0 {
		t.Fatalf("List = %+v, %v: want r-old with no findings and no usage", p, err)
	}
	if p, err := s.List(live.RunQuery{Findings: true}); err != nil || len(p.Runs) != 0 {
		t.Errorf("runs with findings = %+v, %v: want none", p.Runs, err)
	}
	if h, err := s.SessionHash("r-old"); err != nil || h != nil {
		t.Errorf("SessionHash(r-old) = %x, %v: want none", h, err)
	}
	if err := s.SetSessionHash("r-old", []byte{1}); err != nil {
		t.Errorf("SetSessionHash(r-old): %v", err)
	}
	return path
}
