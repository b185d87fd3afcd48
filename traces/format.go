package traces

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// FormatName and FormatVersion identify Baton's trace file format; see docs/trace-format.md.
// A reader of version N must keep reading every version up to N.
const (
	FormatName    = "baton.trace"
	FormatVersion = 1
)

// file is the on-disk envelope of a trace.
type file struct {
	Format  string  `json:"format"`
	Version int     `json:"version"`
	Run     Run     `json:"run"`
	Agents  []Agent `json:"agents"`
	Events  []Event `json:"events"`
}

// Marshal returns t in the current format, indented, ending in a newline. The same trace always
// gives the same bytes.
func Marshal(t Trace) ([]byte, error) {
	f := file{Format: FormatName, Version: FormatVersion, Run: t.Run, Agents: t.Agents, Events: t.Events}
	if f.Agents == nil {
		f.Agents = []Agent{}
	}
	if f.Events == nil {
		f.Events = []Event{}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false) // keep < > & readable: a trace is data, not a page
	if err := enc.Encode(f); err != nil {
		return nil, fmt.Errorf("marshal trace %s: %w", t.Run.ID, err)
	}
	return buf.Bytes(), nil
}

// Unmarshal reads a trace file of any supported version and checks it. Every problem is an
// *Error with CodeInvalid whose message names the field at fault. Field names must be spelled
// exactly as the format spells them. Session values come back compacted, as Marshal writes them,
// so a trace read back equals the trace written.
func Unmarshal(data []byte) (Trace, error) {
	doc, err := readObject(data, "trace")
	if err != nil {
		return Trace{}, err
	}
	version, err := formatVersion(doc)
	if err != nil {
		return Trace{}, err
	}
	var f file
	if unknown, err := decodeExact(data, doc, &f); unknown != "" {
		return Trace{}, Errorf(CodeInvalid, "trace has an unknown field %q: format version %d has no such field", unknown, version)
	} else if err != nil {
		return Trace{}, Errorf(CodeInvalid, "trace does not match format version %d: %s", version, jsonProblem(data, err))
	}
	t := Trace{Run: f.Run, Agents: f.Agents, Events: f.Events}
	CompactSessionValues(t.Events)
	if err := Validate(t); err != nil {
		return Trace{}, err
	}
	return t, nil
}

// DecodeJSON reads data, one JSON object, into v (a pointer to a struct made of the format's
// types, such as a request carrying events) the way Unmarshal reads a trace file: field names
// spelled exactly, no unknown field, each value of the right JSON type, times in RFC 3339. It
// checks nothing else; check what it read with Validate or ValidateEvent. what names the document
// in messages ("request body"). Every problem is an *Error with CodeInvalid naming the field.
func DecodeJSON(data []byte, what string, v any) error {
	doc, err := readObject(data, what)
	if err != nil {
		return err
	}
	if unknown, err := decodeExact(data, doc, v); unknown != "" {
		return Errorf(CodeInvalid, "%s has an unknown field %q", what, unknown)
	} else if err != nil {
		return Errorf(CodeInvalid, "%s: %s", what, jsonProblem(data, err))
	}
	return nil
}

// decodeExact decodes data, whose parse is doc, into v. It returns the path of a field v has no
// place for, if any, and otherwise the decoder's error.
func decodeExact(data []byte, doc map[string]any, v any) (unknown string, err error) {
	// encoding/json matches names case-insensitively and does not say where an unknown field
	// is, so look for unknown names first, exactly and with a path.
	if path := unknownField(doc, reflect.TypeOf(v), ""); path != "" {
		return path, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return "", dec.Decode(v)
}

// CompactSessionValues rewrites the session values of events as Marshal writes them (see
// compactValue), so that events read from any JSON equal the same events read back after Marshal.
func CompactSessionValues(events []Event) {
	for _, e := range events {
		if e.Session != nil {
			e.Session.Value = compactValue(e.Session.Value)
		}
	}
}

// readObject parses data, which must hold exactly one JSON object; what names it in messages.
func readObject(data []byte, what string) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, Errorf(CodeInvalid, "%s cannot be read: %s", what, jsonProblem(data, err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, Errorf(CodeInvalid, "%s has data after its closing brace", what)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, Errorf(CodeInvalid, "%s cannot be read: it is a JSON %s, want an object", what, jsonKindOf(v))
	}
	return obj, nil
}

// formatVersion checks doc's format name and returns its version when this Baton reads it.
func formatVersion(doc map[string]any) (int, error) {
	format, ok := doc["format"]
	if !ok {
		return 0, Errorf(CodeInvalid, "trace has no \"format\" field: want %q", FormatName)
	}
	name, ok := format.(string)
	if !ok {
		return 0, Errorf(CodeInvalid, "trace field \"format\" holds a JSON %s, want a string", jsonKindOf(format))
	}
	if name != FormatName {
		return 0, Errorf(CodeInvalid, "trace format is %q, want %q", name, FormatName)
	}
	version, ok := doc["version"]
	if !ok {
		return 0, Errorf(CodeInvalid, "trace has no \"version\" field")
	}
	num, ok := version.(json.Number)
	if !ok {
		return 0, Errorf(CodeInvalid, "trace field \"version\" holds a JSON %s, want an integer", jsonKindOf(version))
	}
	v, err := num.Int64()
	if err != nil {
		return 0, Errorf(CodeInvalid, "trace field \"version\" is %s, want an integer", num)
	}
	if v < 1 || v > FormatVersion {
		return 0, Errorf(CodeInvalid, "trace version %d is not supported: this Baton reads versions 1 to %d", v, FormatVersion)
	}
	return int(v), nil
}

// unknownField returns the path (like "events[3].colour") of a field of v that typ has no JSON
// field for, the least such path in string order when there are several, or "". Values of the
// wrong type are left to the decoder.
func unknownField(v any, typ reflect.Type, path string) string {
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	var least string
	note := func(p string) {
		if p != "" && (least == "" || p < least) {
			least = p
		}
	}
	switch v := v.(type) {
	case map[string]any:
		if typ.Kind() != reflect.Struct || typ == reflect.TypeFor[time.Time]() {
			return ""
		}
		fields := jsonFields(typ)
		for name, x := range v {
			at := name
			if path != "" {
				at = path + "." + name
			}
			if ft, ok := fields[name]; ok {
				note(unknownField(x, ft, at))
			} else {
				note(at)
			}
		}
	case []any:
		if typ.Kind() != reflect.Slice || typ == reflect.TypeFor[json.RawMessage]() {
			return ""
		}
		for i, x := range v {
			note(unknownField(x, typ.Elem(), path+"["+strconv.Itoa(i)+"]"))
		}
	}
	return least
}

// fieldCache maps a struct type to its JSON field names and types.
var fieldCache sync.Map // reflect.Type -> map[string]reflect.Type

// jsonFields returns the JSON names of typ's fields with their types.
func jsonFields(typ reflect.Type) map[string]reflect.Type {
	if m, ok := fieldCache.Load(typ); ok {
		return m.(map[string]reflect.Type)
	}
	m := make(map[string]reflect.Type, typ.NumField())
	for i := range typ.NumField() {
		f := typ.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.IsExported() && name != "-" && name != "" {
			m[name] = f.Type
		}
	}
	fieldCache.Store(typ, m)
	return m
}

// jsonKindOf names the JSON type of a value decoded into an any.
func jsonKindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case json.Number, float64:
		return "number"
	case bool:
		return "bool"
	case []any:
		return "array"
	}
	return "object"
}

// compactValue returns v as Marshal writes it: compact, HTML-escaped, and null when absent. The
// decoder keeps a raw value's spacing, so without this a trace read from an indented file would
// differ from the same trace read back after Marshal.
func compactValue(v json.RawMessage) json.RawMessage {
	if len(v) == 0 {
		return json.RawMessage("null")
	}
	out, err := json.Marshal(v)
	if err != nil {
		// Unreachable for a value the decoder accepted; keep it rather than lose it.
		return v
	}
	return out
}

// Validate checks what the JSON shape cannot: a run id, known statuses and kinds, sequence numbers
// 1, 2, 3... with no gaps, exactly the payload each kind requires (see ValidateEvent), agents
// named once, and nothing after a run.finished except where an interrupted run was resumed: a
// run.finished whose status is interrupted may be followed by a resumed event and the rest of the
// run. Every problem is an *Error with CodeInvalid.
func Validate(t Trace) error {
	if t.Run.ID == "" {
		return Errorf(CodeInvalid, "run.id is empty")
	}
	if !t.Run.Status.Valid() {
		return Errorf(CodeInvalid, "run.status %q is not one of running, completed, failed, interrupted, canceled", t.Run.Status)
	}
	if err := ValidateAgents(t.Agents); err != nil {
		return err
	}
	for i, e := range t.Events {
		if want := int64(i + 1); e.Seq != want {
			return Errorf(CodeInvalid, "events[%d].seq is %d, want %d: sequence numbers start at 1 with no gaps", i, e.Seq, want)
		}
		if err := ValidateEvent(i, e); err != nil {
			return err
		}
		if i > 0 && !mayFollow(t.Events[i-1], e) {
			return Errorf(CodeInvalid, "events[%d] (%s) comes after run.finished: only a run that finished interrupted goes on, and then with a resumed event", i, e.Kind)
		}
	}
	return nil
}

// mayFollow reports whether e may come right after prev: anything may, except after a
// run.finished, where only a resumed event after an interrupted finish may.
func mayFollow(prev, e Event) bool {
	if prev.Kind != KindRunFinished {
		return true
	}
	return prev.Run != nil && prev.Run.Status == StatusInterrupted && e.Kind == KindResumed
}

// ValidateAgents checks that every agent has a name and no two share one; messages name
// agents[i]. Every problem is an *Error with CodeInvalid.
func ValidateAgents(agents []Agent) error {
	seen := make(map[string]bool, len(agents))
	for i, a := range agents {
		if a.Name == "" {
			return Errorf(CodeInvalid, "agents[%d].name is empty", i)
		}
		if seen[a.Name] {
			return Errorf(CodeInvalid, "agents[%d]: agent %q appears twice", i, a.Name)
		}
		seen[a.Name] = true
	}
	return nil
}

// ValidateEvent checks one event, the i-th of its list (messages name it events[i]): its kind is
// known and it carries exactly the payload its kind requires (see PayloadField), with a known
// status when that payload is a run mark and a count of at least 1 on lost. Its seq and its place in the run are the caller's to
// check. Every problem is an *Error with CodeInvalid.
func ValidateEvent(i int, e Event) error {
	if !e.Kind.Known() {
		return Errorf(CodeInvalid, "events[%d].kind %q is not a known event kind", i, e.Kind)
	}
	want := PayloadField(e.Kind)
	set := setPayloads(e)
	if !slices.Contains(set, want) {
		return Errorf(CodeInvalid, "events[%d] (%s) has no %q payload", i, e.Kind, want)
	}
	for _, field := range set {
		if field != want {
			return Errorf(CodeInvalid, "events[%d] (%s) also has a %q payload: a %s event carries only %q", i, e.Kind, field, e.Kind, want)
		}
	}
	if e.Run != nil && !e.Run.Status.Valid() {
		return Errorf(CodeInvalid, "events[%d].run.status %q is not one of running, completed, failed, interrupted, canceled", i, e.Run.Status)
	}
	if e.Transfer != nil && e.Transfer.Outcome != "" && e.Transfer.Outcome != TransferFailed {
		return Errorf(CodeInvalid, "events[%d].transfer.outcome %q is not %q (or absent, for a transfer made)", i, e.Transfer.Outcome, TransferFailed)
	}
	if m := e.AgentTool; m != nil && m.InputMode != "" && m.InputMode != AgentToolInputRequest && m.InputMode != AgentToolInputFullHistory {
		return Errorf(CodeInvalid, "events[%d].agenttool.input_mode %q is not %q or %q", i, m.InputMode, AgentToolInputRequest, AgentToolInputFullHistory)
	}
	if e.Lost != nil && e.Lost.Count < 1 {
		return Errorf(CodeInvalid, "events[%d].lost.count is %d: a lost event stands for at least 1 dropped event", i, e.Lost.Count)
	}
	return nil
}

// PayloadField returns the JSON name of the payload field an event of kind k carries, or "" for
// an unknown kind.
func PayloadField(k Kind) string {
	switch k {
	case KindRunStarted, KindRunFinished:
		return "run"
	case KindAgentStarted, KindAgentFinished:
		return "agent_run"
	case KindModelStarted, KindModelFinished:
		return "model"
	case KindToolStarted, KindToolFinished:
		return "tool"
	case KindMessage:
		return "message"
	case KindTransfer:
		return "transfer"
	case KindAgentToolEnter, KindAgentToolExit:
		return "agenttool"
	case KindSessionSet:
		return "session"
	case KindInterrupted, KindResumed:
		return "interrupt"
	case KindExit:
		return "exit"
	case KindBreakLoop:
		return "breakloop"
	case KindError:
		return "error"
	case KindLost:
		return "lost"
	}
	return ""
}

// setPayloads returns the JSON names of e's payload fields that are set.
func setPayloads(e Event) []string {
	var set []string
	for _, p := range []struct {
		field string
		isSet bool
	}{
		{"run", e.Run != nil}, {"agent_run", e.AgentRun != nil}, {"model", e.Model != nil},
		{"tool", e.Tool != nil}, {"message", e.Message != nil}, {"transfer", e.Transfer != nil},
		{"agenttool", e.AgentTool != nil}, {"session", e.Session != nil},
		{"interrupt", e.Interrupt != nil}, {"exit", e.Exit != nil},
		{"breakloop", e.BreakLoop != nil}, {"error", e.Error != nil}, {"lost", e.Lost != nil},
	} {
		if p.isSet {
			set = append(set, p.field)
		}
	}
	return set
}

// jsonProblem describes a decoding error for the person who wrote the file: what is wrong, and
// where. It never shows Go type names.
func jsonProblem(data []byte, err error) string {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	var tm *time.ParseError
	switch {
	case errors.Is(err, io.EOF):
		return "it is empty"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "it is not valid JSON: it ends in the middle of a value (truncated?)"
	case errors.As(err, &syntax):
		return fmt.Sprintf("it is not valid JSON: %s (%s)", syntax.Error(), position(data, syntax.Offset))
	case errors.As(err, &typ):
		return fmt.Sprintf("field %q holds a JSON %s, want %s (%s)", typ.Field, typ.Value, jsonType(typ.Type), position(data, typ.Offset))
	case errors.As(err, &tm):
		return fmt.Sprintf("time %q is not an RFC 3339 time such as \"2006-01-02T15:04:05Z\"", tm.Value)
	}
	return err.Error()
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

// jsonType names the JSON type that decodes into t.
func jsonType(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map, reflect.Pointer:
		return "an object"
	}
	return "another type"
}
