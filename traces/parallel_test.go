package traces_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/baton-dev/baton/internal/webtest"
	"github.com/baton-dev/baton/traces"
)

// inPartsAndInOne calls read with events read in three parts (each of at least 64 bytes), then
// with them read on one goroutine.
func inPartsAndInOne[T any](read func() (T, error)) (parts, one T, partsErr, oneErr error) {
	restore := traces.ReadInParts(64, 3)
	parts, partsErr = read()
	restore()
	restore = traces.ReadInParts(64, 1)
	one, oneErr = read()
	restore()
	return parts, one, partsErr, oneErr
}

// readBothWays reads data with its events array cut into three parts and on one goroutine.
func readBothWays(data []byte) (parts, one traces.Trace, partsErr, oneErr error) {
	return inPartsAndInOne(func() (traces.Trace, error) { return traces.Unmarshal(data) })
}

// TestUnmarshalInPartsReadsAsInOne: a large trace's events read in parts on several goroutines
// are the events read on one, whatever the file's layout: indented, with session values that
// look like events (where a cut falls inside an event), with "seq" in strings (a count too high)
// and spelled with escapes (too low).
func TestUnmarshalInPartsReadsAsInOne(t *testing.T) {
	lookalike := richTrace()
	for i := range lookalike.Events {
		if s := lookalike.Events[i].Session; s != nil {
			// An object after a comma that starts as an event does: a cut may fall there.
			s.Value = json.RawMessage(`[1, {"seq":2,"time":"2026-01-01T00:00:00Z","kind":"message"}, {"seq":3}]`)
		}
	}
	named := webtest.Large(300)
	named.Run.Model = "seq"
	indented := func(data []byte) []byte {
		var b bytes.Buffer
		if err := json.Indent(&b, data, "", "\t"); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	supervisor, err := os.ReadFile(supervisorFile)
	if err != nil {
		t.Fatal(err)
	}
	large := mustMarshal(t, webtest.Large(300))
	files := map[string][]byte{
		"rich":              mustMarshal(t, richTrace()),
		"growing":           mustMarshal(t, growingTrace(40)),
		"large":             large,
		"large indented":    indented(large),
		"large one line":    bytes.ReplaceAll(large, []byte("\n"), nil),
		"session lookalike": mustMarshal(t, lookalike),
		"seq in strings":    mustMarshal(t, named),
		"seq escaped":       bytes.ReplaceAll(large, []byte(`"seq"`), []byte(`"\u0073eq"`)),
		"version 1":         supervisor,
	}
	before := traces.PartsRead()
	for name, data := range files {
		parts, one, perr, oerr := readBothWays(data)
		if perr != nil || oerr != nil {
			t.Fatalf("%s: read in parts: %v; in one: %v", name, perr, oerr)
		}
		assertEqualTraces(t, parts, one)
		if cap(parts.Events) != len(parts.Events) {
			t.Errorf("%s: %d events in an array of %d", name, len(parts.Events), cap(parts.Events))
		}
	}
	// All were read in parts, but for the names spelled with escapes, where no cut is found.
	if got := traces.PartsRead() - before; got != int64(len(files))-1 {
		t.Errorf("%d of %d files were read in parts, want all but one", got, len(files))
	}

	// Where every cut falls inside an event, the part before it reads past it: the events are
	// read again on one goroutine.
	everywhere := richTrace()
	var value bytes.Buffer
	value.WriteString("[")
	for i := range 2000 {
		fmt.Fprintf(&value, `{"seq":%d},`, i+2)
	}
	value.WriteString(`{"seq":1}]`)
	for i := range everywhere.Events {
		if s := everywhere.Events[i].Session; s != nil {
			s.Value = json.RawMessage(value.Bytes())
		}
	}
	before = traces.PartsRead()
	parts, one, perr, oerr := readBothWays(mustMarshal(t, everywhere))
	if perr != nil || oerr != nil {
		t.Fatalf("cut inside events: read in parts: %v; in one: %v", perr, oerr)
	}
	assertEqualTraces(t, parts, one)
	if traces.PartsRead() != before {
		t.Errorf("a trace whose every cut fell inside an event was taken as read in parts")
	}
}

// TestUnmarshalInPartsSaysWhatIsWrong: a fault in any part of a large trace is reported as
// reading on one goroutine reports it, naming the same event, and nothing is read.
func TestUnmarshalInPartsSaysWhatIsWrong(t *testing.T) {
	large := string(mustMarshal(t, webtest.Large(300)))
	last := strings.LastIndex(large, `"kind":"message"`)
	cases := map[string]string{
		"unknown kind, last part":  large[:last] + `"kind":"mesage"` + large[last+len(`"kind":"message"`):],
		"unknown kind, first part": strings.Replace(large, `"kind":"message"`, `"kind":"mesage"`, 1),
		"syntax, last part":        large[:last] + `"kind":"message",,` + large[last+len(`"kind":"message"`):],
		"seq gap, middle":          strings.Replace(large, `{"seq":150,`, `{"seq":1500,`, 1),
		"unknown field, middle":    strings.Replace(large, `{"seq":150,`, `{"seq":150,"sequence":1,`, 1),
		"truncated":                large[:len(large)-40],
		"trailing comma":           strings.Replace(large, "\n  ]\n}", ",\n  ]\n}", 1),
	}
	for _, tc := range malformed {
		cases["malformed: "+tc.name] = tc.doc
	}
	for name, doc := range cases {
		_, _, perr, oerr := readBothWays([]byte(doc))
		if oerr == nil {
			t.Fatalf("%s: read in one without an error: the case is not malformed", name)
		}
		if fmt.Sprint(perr) != fmt.Sprint(oerr) {
			t.Errorf("%s: read in parts: %v\nin one: %v", name, perr, oerr)
		}
	}
}

// rowsOf returns the events of tr as a store keeps them: a row each, encoded in order.
func rowsOf(t testing.TB, tr traces.Trace) [][]byte {
	t.Helper()
	var enc traces.EventEncoder
	rows := make([][]byte, len(tr.Events))
	for i, e := range tr.Events {
		row, err := enc.AppendEvent(nil, e)
		if err != nil {
			t.Fatal(err)
		}
		rows[i] = row
	}
	return rows
}

// decodeRowsBothWays reads rows in three parts and on one goroutine.
func decodeRowsBothWays(rows [][]byte) (parts, one []traces.Event, partsErr, oneErr error) {
	return inPartsAndInOne(func() ([]traces.Event, error) { return traces.DecodeRows(rows) })
}

// TestDecodeRowsInPartsReadsAsInOne: a run's rows read in parts on several goroutines are the
// events recorded, as read on one, with input references that reach into an earlier part,
// session values and tool calls.
func TestDecodeRowsInPartsReadsAsInOne(t *testing.T) {
	for name, tr := range map[string]traces.Trace{"large": webtest.Large(3000), "rich": richTrace(), "growing": growingTrace(40)} {
		rows := rowsOf(t, tr)
		joined := bytes.Join(rows, nil)
		if name == "large" && (!bytes.Contains(joined, []byte(`"input_from"`)) || !bytes.Contains(joined, []byte(`"kind":"session`)) ||
			!bytes.Contains(joined, []byte(`"kind":"tool`))) {
			t.Fatalf("%s: no input references, session values or tool calls to read", name)
		}
		before := traces.PartsRead()
		parts, one, perr, oerr := decodeRowsBothWays(rows)
		if perr != nil || oerr != nil {
			t.Fatalf("%s: read in parts: %v; in one: %v", name, perr, oerr)
		}
		if traces.PartsRead() != before+1 {
			t.Fatalf("%s: the rows were not read in parts", name)
		}
		assertEqualTraces(t, traces.Trace{Run: tr.Run, Events: parts}, traces.Trace{Run: tr.Run, Events: one})
		assertEqualTraces(t, traces.Trace{Run: tr.Run, Agents: tr.Agents, Events: parts}, tr)
	}
}

// TestDecodeRowsInPartsSaysWhatIsWrong: a fault in any row, whether its part reads it or only
// the checking in order finds it, is reported as reading on one goroutine reports it.
func TestDecodeRowsInPartsSaysWhatIsWrong(t *testing.T) {
	rows := rowsOf(t, webtest.Large(300))
	n := len(rows)
	with := func(i int, row string) [][]byte {
		changed := append([][]byte(nil), rows...)
		changed[i] = []byte(row)
		return changed
	}
	cases := map[string][][]byte{
		"syntax, last part":  with(n-1, string(rows[n-1])+","),
		"syntax, first part": with(1, "{"),
		"seq gap, middle":    with(n/2, strings.Replace(string(rows[n/2]), fmt.Sprintf(`{"seq":%d,`, n/2+1), `{"seq":1,`, 1)),
		"row missing":        append(append([][]byte(nil), rows[:n/2]...), rows[n/2+1:]...),
		"unknown field":      with(n/3, strings.Replace(string(rows[n/3]), `{"seq"`, `{"sequence":1,"seq"`, 1)),
	}
	for name, rows := range cases {
		_, _, perr, oerr := decodeRowsBothWays(rows)
		if oerr == nil {
			t.Fatalf("%s: read in one without an error: the case is not malformed", name)
		}
		if fmt.Sprint(perr) != fmt.Sprint(oerr) {
			t.Errorf("%s: read in parts: %v\nin one: %v", name, perr, oerr)
		}
	}
}

// TestDecodeRowsFromAsTheyArrive: rows handed over a batch at a time (as a store reads them
// back) are the events DecodeRows reads, whatever the batches' sizes, and when the count of rows
// expected was off (too high, or too low: a run that grew since it was counted), read in parts
// all the same.
func TestDecodeRowsFromAsTheyArrive(t *testing.T) {
	tr := webtest.Large(3000)
	rows := rowsOf(t, tr)
	n := len(rows)
	restore := traces.ReadInParts(64, 3)
	defer restore()
	for _, tc := range []struct {
		count   int
		batches []int // their sizes, the last repeated to the end
		inParts bool
	}{
		{count: n, batches: []int{1}, inParts: true},
		{count: n, batches: []int{7, 1, 500, 1024}, inParts: true},
		{count: n + 100, batches: []int{300}, inParts: true},
		{count: n - 1, batches: []int{300}, inParts: true},
		{count: 0, batches: []int{300}, inParts: true},
	} {
		rest, sizes := rows, tc.batches
		before := traces.PartsRead()
		got, err := traces.DecodeRowsFrom(tc.count, func() [][]byte {
			size := sizes[0]
			if len(sizes) > 1 {
				sizes = sizes[1:]
			}
			batch := rest[:min(len(rest), size)]
			rest = rest[len(batch):]
			return batch
		})
		if err != nil {
			t.Fatalf("count %d of %d, batches %v: %v", tc.count, n, tc.batches, err)
		}
		if inParts := traces.PartsRead() != before; inParts != tc.inParts {
			t.Errorf("count %d of %d, batches %v: read in parts %v; want %v", tc.count, n, tc.batches, inParts, tc.inParts)
		}
		if len(got) != n {
			t.Fatalf("count %d of %d, batches %v: %d events", tc.count, n, tc.batches, len(got))
		}
		assertEqualTraces(t, traces.Trace{Run: tr.Run, Agents: tr.Agents, Events: got}, tr)
	}
}
