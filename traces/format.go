package traces

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"unicode/utf8"
)

// FormatName and FormatVersion identify Baton's trace file format; see docs/trace-format.md.
// A reader of version N must keep reading every version up to N.
const (
	FormatName    = "baton.trace"
	FormatVersion = 2
)

// envelope is what a trace file holds before its events.
type envelope struct {
	Format  string  `json:"format"`
	Version int     `json:"version"`
	Run     Run     `json:"run"`
	Agents  []Agent `json:"agents"`
}

// Marshal returns t in the current format: the envelope indented, then one event a line, in the
// compact form (see EventEncoder), ending in a newline. The same trace always gives the same
// bytes.
func Marshal(t Trace) ([]byte, error) {
	// Written into blocks joined once at the end: one growing buffer would copy the whole file
	// at each growth.
	var blocks [][]byte
	if err := encodeTrace(t, nil, func(b []byte) []byte {
		blocks = append(blocks, b)
		return nil
	}); err != nil {
		return nil, err
	}
	return slices.Concat(blocks...), nil
}

// Encode writes t to w as Marshal makes it, a block of about a megabyte at a time: a trace of a
// million events is never whole in memory as text.
func Encode(w io.Writer, t Trace) error { return EncodeEvents(w, t, nil) }

// EncodeEvents is Encode of a trace whose events after t.Events come from next (when not nil),
// in order, a batch a call, until it returns none or an error: a trace of a million events need
// never be whole in memory at all. The events next returns are read before its next call.
func EncodeEvents(w io.Writer, t Trace, next func() ([]Event, error)) error {
	var werr error
	err := encodeTrace(t, next, func(b []byte) []byte {
		if werr == nil {
			_, werr = w.Write(b)
		}
		return b[:0]
	})
	if err != nil {
		return err
	}
	if werr != nil {
		return fmt.Errorf("write trace %s: %w", t.Run.ID, werr)
	}
	return nil
}

const encodeBlock = 1 << 20

// encodeTrace makes the file of t, with the events next gives after t.Events (when next is not
// nil), in blocks of about encodeBlock bytes, handing each to flush, which returns the empty
// block to write the next into, or nil for a new one.
func encodeTrace(t Trace, next func() ([]Event, error), flush func([]byte) []byte) error {
	env := envelope{Format: FormatName, Version: FormatVersion, Run: t.Run, Agents: t.Agents}
	if env.Agents == nil {
		env.Agents = []Agent{}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false) // keep < > & readable: a trace is data, not a page
	if err := enc.Encode(env); err != nil {
		return fmt.Errorf("marshal trace %s: %w", t.Run.ID, err)
	}
	batch := t.Events
	more := func() error {
		var err error
		for len(batch) == 0 && next != nil && err == nil {
			if batch, err = next(); len(batch) == 0 {
				next = nil
			}
		}
		if err != nil {
			return fmt.Errorf("marshal trace %s: %w", t.Run.ID, err)
		}
		return nil
	}
	if err := more(); err != nil {
		return err
	}
	cur := append(make([]byte, 0, encodeBlock), bytes.TrimSuffix(buf.Bytes(), []byte("\n}\n"))...)
	if len(batch) == 0 {
		flush(append(cur, ",\n  \"events\": []\n}\n"...))
		return nil
	}
	cur = append(cur, ",\n  \"events\": [\n"...)
	var events EventEncoder
	for first := true; len(batch) > 0; {
		for i := range batch {
			if len(cur) > encodeBlock-encodeBlock/8 {
				if cur = flush(cur); cur == nil {
					cur = make([]byte, 0, encodeBlock)
				}
			}
			if !first {
				cur = append(cur, ",\n"...)
			}
			first = false
			var err error
			cur = append(cur, "    "...)
			if cur, err = events.AppendEvent(cur, batch[i]); err != nil {
				return fmt.Errorf("marshal trace %s: %w", t.Run.ID, err)
			}
		}
		batch = nil
		if err := more(); err != nil {
			return err
		}
	}
	flush(append(cur, "\n  ]\n}\n"...))
	return nil
}

// Unmarshal reads a trace file of any supported version and checks it, in one pass: every
// problem is an *Error with CodeInvalid whose message names the field at fault (and, for what
// JSON itself gets wrong, the line and column). Field names must be spelled exactly as the format
// spells them, once each. Session values come back compacted, as Marshal writes them, and inputs
// in full, so a trace read back equals the trace written. What a recording shares comes back
// shared (equal strings a few thousand events apart or closer, run paths, a model's reply and the
// message event that repeats it, inputs' messages), and the events' short strings are packed side
// by side in blocks of a few kilobytes, so that it takes no more memory than the run recorded
// live: read the events, never change them. A string kept after the trace is dropped keeps its
// block: copy it (strings.Clone) to keep it long alone. A large file's events are read on several
// cores (see parallel.go).
func Unmarshal(data []byte) (Trace, error) {
	d := &decoder{data: data, what: "trace"}
	var t Trace
	var seen [5]bool // format, version, run, agents, events
	var unknown string
	eventsAt := -1
	err := d.document(func() error {
		return d.members(func(key []byte, keyAt int) error {
			name := string(key)
			i := envelopeField(name)
			if i < 0 {
				if unknown == "" {
					unknown = name
				}
				return d.skip()
			}
			if seen[i] {
				return d.fail(keyAt, fmt.Sprintf("field %q appears twice", name))
			}
			seen[i] = true
			d.path = append(d.path[:0], pathStep{name: name})
			switch name {
			case "format":
				return d.formatName()
			case "version":
				return d.formatVersion()
			case "run":
				return d.value(reflectValue(&t.Run))
			case "agents":
				if c, err := d.peek(); err == nil && c == 'n' {
					return Errorf(CodeInvalid, "trace field \"agents\" is null: want an array, [] when empty")
				}
				return d.value(reflectValue(&t.Agents))
			}
			if d.version == 0 { // the version comes later: read the events once it is known
				eventsAt = d.pos
				return d.skip()
			}
			return d.events(&t)
		})
	})
	switch {
	case err != nil:
		return Trace{}, err
	case !seen[0]:
		return Trace{}, Errorf(CodeInvalid, "trace has no \"format\" field: want %q", FormatName)
	case !seen[1]:
		return Trace{}, Errorf(CodeInvalid, "trace has no \"version\" field")
	case !seen[3]:
		return Trace{}, Errorf(CodeInvalid, "trace has no \"agents\" field: want an array, [] when empty")
	case !seen[4]:
		return Trace{}, Errorf(CodeInvalid, "trace has no \"events\" field: want an array, [] when empty")
	case unknown != "":
		d.path = d.path[:0]
		return Trace{}, d.unknown(unknown)
	}
	if eventsAt >= 0 {
		d.pos, d.path = eventsAt, append(d.path[:0], pathStep{name: "events"})
		if err := d.events(&t); err != nil {
			return Trace{}, err
		}
	}
	if err := validateRun(t); err != nil {
		return Trace{}, err
	}
	return t, nil
}

// envelopeField numbers the fields of a trace file's top level; -1 for any other name.
func envelopeField(name string) int {
	switch name {
	case "format":
		return 0
	case "version":
		return 1
	case "run":
		return 2
	case "agents":
		return 3
	case "events":
		return 4
	}
	return -1
}

// formatName reads the "format" field, which must name Baton's format.
func (d *decoder) formatName() error {
	c, err := d.peek()
	if err != nil {
		return err
	}
	if c != '"' {
		return Errorf(CodeInvalid, "trace field \"format\" holds a JSON %s, want a string", jsonKindAt(c))
	}
	name, err := d.str()
	if err != nil {
		return err
	}
	if name != FormatName {
		return Errorf(CodeInvalid, "trace format is %q, want %q", name, FormatName)
	}
	return nil
}

// formatVersion reads the "version" field, which must be a version this Baton reads.
func (d *decoder) formatVersion() error {
	c, err := d.peek()
	if err != nil {
		return err
	}
	if c != '-' && (c < '0' || c > '9') {
		return Errorf(CodeInvalid, "trace field \"version\" holds a JSON %s, want an integer", jsonKindAt(c))
	}
	num, err := d.number()
	if err != nil {
		return err
	}
	v, perr := strconv.ParseInt(string(num), 10, 64)
	if perr != nil {
		return Errorf(CodeInvalid, "trace field \"version\" is %s, want an integer", num)
	}
	if v < 1 || v > FormatVersion {
		return Errorf(CodeInvalid, "trace version %d is not supported: this Baton reads versions 1 to %d", v, FormatVersion)
	}
	d.version = int(v)
	return nil
}

// events reads the "events" array, checking each event after the ones before it as Validate
// does and resolving its input references.
func (d *decoder) events(t *Trace) error {
	c, err := d.peek()
	if err != nil {
		return err
	}
	if c == 'n' {
		return Errorf(CodeInvalid, "trace field \"events\" is null: want an array, [] when empty")
	}
	if c != '[' {
		return d.typeError(c, "an array")
	}
	st := newEventState()
	st.read = int64(len(d.data))
	// The events' strings live as long as the trace, together: pack them.
	d.pack = new(stringPack)
	// Read into one array made once: a growing slice, or chunks joined at the end, would copy
	// every event (200 bytes each, 0.6 s of a million) and hold two copies at once.
	events := make([]Event, 0, eventsIn(d.data[d.pos:]))
	d.recent = newStringTable(min(cap(events)/4, recentBuckets), d.pack)
	for s := range d.kept { // the run's and the agents' strings, which the events repeat
		d.recent.put(s)
	}
	if read, refs, end, ok := d.parallelEvents(events); ok {
		st.validated = true // by the parts, each event as it was read
		for i := range read {
			d.path = append(d.path[:1], pathStep{index: i})
			r := refs(i)
			if err := st.accept(i, &read[i], &r); err != nil {
				return err
			}
		}
		d.pos = end + 1 // past ']'
		t.Events = read[:st.n:st.n]
		return nil
	}
	err = d.elements(func(i int) error {
		if i == len(events) {
			events = append(events, Event{}) // more than eventsIn counted: grows as append does
		}
		e := &events[i]
		d.path = append(d.path[:1], pathStep{index: i})
		d.refs = [2]inputRef{}
		if err := d.event(e); err != nil {
			return err
		}
		return st.accept(i, e, &d.refs)
	})
	if err != nil || st.n == 0 {
		return err
	}
	t.Events = events[:st.n:st.n]
	return nil
}

// minEventJSON bounds how many events eventsIn counts in a file: about one per 48 bytes, the
// size of a small event ({"seq":1,"time":"…","kind":"…"}). Were a file's events smaller, its
// array grows as it is read.
const minEventJSON = 48

// eventsIn returns about how many events the "events" array at the start of data holds: how many
// times "seq", a field of each event, occurs in it (more when a string is "seq"; fewer only
// when a file spells the name with escapes, and then the array grows), at most
// len(data)/minEventJSON, so that the array made from it takes at most about 4 times the file's
// size, well within what a file may make its inputs cost (ExpandPerByte).
func eventsIn(data []byte) int {
	return min(seqCount(data), len(data)/minEventJSON)
}

// seqCount counts "seq" in data by its 'q', rare in JSON (bytes.Count stops at every quote): a
// tenth of the time.
func seqCount(data []byte) int {
	n := 0
	for i := 0; ; {
		q := bytes.IndexByte(data[i:], 'q')
		if q < 0 {
			break
		}
		i += q + 1
		if i >= 4 && i < len(data) && string(data[i-4:i+1]) == `"seq"` {
			n++
		}
	}
	return n
}

// DecodeJSON reads data, one JSON object, into v (a pointer to a struct made of the format's
// types, such as a request carrying events) the way Unmarshal reads a trace file: field names
// spelled exactly and once, no unknown field, each value of the right JSON type, times in RFC
// 3339. Events are read in the form of format version 1: in full, with no input references. It
// checks nothing else; check what it read with Validate or ValidateEvent. what names the document
// in messages ("request body"). Every problem is an *Error with CodeInvalid naming the field.
func DecodeJSON(data []byte, what string, v any) error {
	d := &decoder{data: data, what: what, version: 1}
	rv := reflect.ValueOf(v).Elem()
	return d.document(func() error { return d.object(planOf(rv.Type()).fields, rv.Addr().UnsafePointer()) })
}

// document reads data as one JSON object, with obj reading its members, and nothing after it.
func (d *decoder) document(obj func() error) error {
	c, err := d.peek()
	if err != nil {
		return err
	}
	if c != '{' {
		if err := d.skip(); err != nil {
			return err
		}
		return Errorf(CodeInvalid, "%s cannot be read: it is a JSON %s, want an object", d.what, jsonKindAt(c))
	}
	if err := obj(); err != nil {
		return err
	}
	if !d.atEnd() {
		return Errorf(CodeInvalid, "%s has data after its closing brace", d.what)
	}
	return nil
}

// jsonKindAt names the JSON type of a value that starts with c, or "" when none does.
func jsonKindAt(c byte) string {
	switch {
	case c == '{':
		return "object"
	case c == '[':
		return "array"
	case c == '"':
		return "string"
	case c == 't' || c == 'f':
		return "bool"
	case c == 'n':
		return "null"
	case c == '-' || c >= '0' && c <= '9':
		return "number"
	}
	return ""
}

// reflectValue is the settable value p points to.
func reflectValue(p any) reflect.Value { return reflect.ValueOf(p).Elem() }

// compactValue returns v as Marshal writes it: compact, HTML-escaped, and null when absent. The
// decoder keeps a raw value's spacing, so without this a trace read from an indented file would
// differ from the same trace read back after Marshal.
func compactValue(v json.RawMessage) json.RawMessage {
	if len(v) == 0 {
		return json.RawMessage("null")
	}
	if plainCompact(v) {
		return bytes.Clone(v) // a copy, not to keep the whole document alive
	}
	out, err := json.Marshal(v)
	if err != nil {
		// Unreachable for a value the decoder accepted; keep it rather than lose it.
		return v
	}
	return out
}

// plainCompact reports whether the checked JSON value v is as Marshal writes it already: ASCII
// with no space to remove and nothing to escape.
func plainCompact(v []byte) bool {
	for _, c := range v {
		if c <= ' ' || c >= utf8.RuneSelf || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// position turns a byte offset into data into "line L, column C".
func position(data []byte, offset int64) string {
	line, col := 1, 1
	for _, b := range data[:max(0, min(int(offset), len(data)))] {
		if b == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return fmt.Sprintf("line %d, column %d", line, col)
}
