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

// readBothWays reads data with its events array cut into three parts (each of at least 64
// bytes) and on one goroutine.
func readBothWays(t *testing.T, data []byte) (parts, one traces.Trace, partsErr, oneErr error) {
	t.Helper()
	restore := traces.ReadInParts(64, 3)
	parts, partsErr = traces.Unmarshal(data)
	restore()
	restore = traces.ReadInParts(64, 1)
	one, oneErr = traces.Unmarshal(data)
	restore()
	return parts, one, partsErr, oneErr
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
		parts, one, perr, oerr := readBothWays(t, data)
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
	parts, one, perr, oerr := readBothWays(t, mustMarshal(t, everywhere))
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
		_, _, perr, oerr := readBothWays(t, []byte(doc))
		if oerr == nil {
			t.Fatalf("%s: read in one without an error: the case is not malformed", name)
		}
		if fmt.Sprint(perr) != fmt.Sprint(oerr) {
			t.Errorf("%s: read in parts: %v\nin one: %v", name, perr, oerr)
		}
	}
}
