package traces

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"
)

// decoder reads one JSON document in a single pass straight into values of the format's types:
// field names matched exactly, unknown and repeated fields refused, each value of the right JSON
// type, times in RFC 3339. Every problem is an *Error with CodeInvalid that names the field (as
// "events[3].model.id") and the line and column. It replaces encoding/json here because that one
// matches names case-insensitively and cannot say where an unknown field is.
type decoder struct {
	data []byte
	pos  int
	what string // the document, in messages: "trace", "request body"
	// version is the trace format version being read; 1 where no input references are allowed.
	version int
	path    []pathStep
	depth   int
	// kept holds one copy of each string read: a recording shares the strings of a run (an
	// agent's name, a tool's arguments that are also a model's tool call, a result repeated call
	// after call), and so does what is read back.
	kept map[string]string
	// pack makes the copies kept holds; nil copies each string on its own.
	pack *stringPack
	// recent, when set, shares the strings of many events in place of kept (see stringTable).
	recent *stringTable
	// unquoted is room to decode a string with escapes before looking it up in kept.
	unquoted []byte
	// refs holds the input references of the event being read: refModel for its model payload,
	// refAgentRun for its agent_run payload.
	refs [2]inputRef
}

// pathStep is one step of the path to the value being read: a field name, or an index when
// name is empty.
type pathStep struct {
	name  string
	index int
}

// maxDepth bounds nesting, as encoding/json does, so a hostile file cannot exhaust the stack.
const maxDepth = 10000

var (
	timeType     = reflect.TypeFor[time.Time]()
	rawType      = reflect.TypeFor[json.RawMessage]()
	rawJSONType  = reflect.TypeFor[RawJSON]()
	messagesType = reflect.TypeFor[[]Message]()
	stringsType  = reflect.TypeFor[[]string]()
)

// value reads the next JSON value into v.
func (d *decoder) value(v reflect.Value) error {
	c, err := d.peek()
	if err != nil {
		return err
	}
	kind := v.Kind()
	if kind == reflect.Struct || kind == reflect.Slice { // the types read otherwise than by kind
		switch v.Type() {
		case timeType:
			return d.timeValue(v)
		case rawType:
			start := d.pos
			if err := d.skip(); err != nil {
				return err
			}
			v.SetBytes(compactValue(d.data[start:d.pos]))
			return nil
		case rawJSONType:
			start := d.pos
			if err := d.skip(); err != nil {
				return err
			}
			v.SetBytes(d.data[start:d.pos])
			return nil
		}
	}
	if c == 'n' {
		if err := d.literal("null"); err != nil {
			return err
		}
		v.SetZero()
		return nil
	}
	switch kind {
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		return d.value(v.Elem())
	case reflect.Struct:
		if c != '{' {
			return d.typeError(c, "an object")
		}
		return d.object(v, fieldsOf(v.Type()))
	case reflect.Slice:
		if c != '[' {
			return d.typeError(c, "an array")
		}
		if d.recent != nil && v.Type() == stringsType {
			return d.stringArray(v)
		}
		return d.array(v)
	case reflect.String:
		if c != '"' {
			return d.typeError(c, "a string")
		}
		s, err := d.internedStr()
		v.SetString(s)
		return err
	case reflect.Bool:
		switch c {
		case 't':
			v.SetBool(true)
			return d.literal("true")
		case 'f':
			v.SetBool(false)
			return d.literal("false")
		}
		return d.typeError(c, "true or false")
	case reflect.Int, reflect.Int64:
		n, err := d.integer(c)
		v.SetInt(n)
		return err
	case reflect.Float64:
		if c != '-' && (c < '0' || c > '9') {
			return d.typeError(c, "a number")
		}
		start := d.pos
		num, err := d.number()
		if err != nil {
			return err
		}
		f, perr := strconv.ParseFloat(string(num), 64)
		if perr != nil {
			return d.fail(start, fmt.Sprintf("field %q holds the number %s, which is out of range", d.pathString(), num))
		}
		v.SetFloat(f)
		return nil
	}
	panic("traces: decoder cannot read a " + v.Type().String()) // only the format's own types come here
}

// internedStr reads a JSON string, returning the copy read before if there was one.
func (d *decoder) internedStr() (string, error) {
	start := d.pos
	raw, plain, err := d.rawString()
	if err != nil {
		return "", err
	}
	if !plain {
		d.unquoted = appendUnquoted(d.unquoted[:0], d.data[start:d.pos])
		raw = d.unquoted
	}
	if d.recent != nil {
		return d.recent.get(raw), nil
	}
	if kept, ok := d.kept[string(raw)]; ok {
		return kept, nil
	}
	if d.kept == nil {
		d.kept = make(map[string]string)
	}
	s := d.pack.add(raw)
	d.kept[s] = s
	return s, nil
}

// stringPack copies strings side by side into blocks, for a trace's tens of thousands of short
// ids, arguments and results: a string allocated alone is rounded up to its size class (17 to 24
// bytes take 24). A nil pack copies each string on its own. A string kept keeps its whole block:
// pack only what lives and dies together.
type stringPack struct{ block strings.Builder }

const (
	// packedMax is the longest string a pack takes: beyond it a string allocated alone wastes
	// little (at most an eighth), and the tail a block leaves unused when the next string does
	// not fit stays small.
	packedMax = 256
	// packBlock is the size blocks grow to, doubling from 512 bytes so that a small trace does
	// not hold a mostly empty block.
	packBlock = 8 << 10
)

// add returns a copy of b, in the current block when it fits there.
func (p *stringPack) add(b []byte) string {
	if p == nil || len(b) > packedMax {
		return string(b)
	}
	if p.block.Cap()-p.block.Len() < len(b) {
		size := max(2*packedMax, min(2*p.block.Cap(), packBlock))
		p.block = strings.Builder{} // the strings already returned keep the old block
		p.block.Grow(size)
	}
	n := p.block.Len()
	p.block.Write(b) // within its capacity: earlier strings of the block stay as they were
	return p.block.String()[n:]
}

// integer reads a JSON integer; c is its first byte.
func (d *decoder) integer(c byte) (int64, error) {
	if c != '-' && (c < '0' || c > '9') {
		return 0, d.typeError(c, "an integer")
	}
	start := d.pos
	num, err := d.number()
	if err != nil {
		return 0, err
	}
	n, perr := strconv.ParseInt(string(num), 10, 64)
	if perr != nil {
		return 0, d.fail(start, fmt.Sprintf("field %q holds the number %s, want an integer", d.pathString(), num))
	}
	return n, nil
}

// timeValue reads an RFC 3339 time (or null, the zero time) into v.
func (d *decoder) timeValue(v reflect.Value) error {
	c, _ := d.peek()
	if c == 'n' {
		v.SetZero()
		return d.literal("null")
	}
	if c != '"' {
		return d.typeError(c, "a string")
	}
	start := d.pos
	raw, plain, err := d.rawString()
	if err != nil {
		return err
	}
	if !plain {
		raw = []byte(unquote(d.data[start:d.pos]))
	}
	// Into the field itself: through an interface, a time would be allocated to be copied.
	if v.Addr().Interface().(*time.Time).UnmarshalText(raw) != nil {
		return d.fail(start, fmt.Sprintf("field %q: time %q is not an RFC 3339 time such as \"2006-01-02T15:04:05Z\"", d.pathString(), raw))
	}
	return nil
}

// object reads a JSON object into the struct v, whose fields are fs.
func (d *decoder) object(v reflect.Value, fs *structFields) error {
	if fs.refSlot >= 0 {
		d.refs[fs.refSlot] = inputRef{}
	}
	var seen uint64
	next := 0 // fields come in the order of the struct's, as Marshal writes them: try that first
	return d.members(func(key []byte, keyAt int) error {
		i := next
		if i >= len(fs.list) || fs.list[i].name != string(key) || fs.list[i].ref != 0 {
			i = fs.index(key, d.version)
		}
		next = i + 1
		if i < 0 {
			return d.unknown(string(key))
		}
		if seen&(1<<i) != 0 {
			return d.fail(keyAt, fmt.Sprintf("field %q appears twice", d.pathJoin(string(key))))
		}
		seen |= 1 << i
		f := &fs.list[i]
		d.path = append(d.path, pathStep{name: f.name})
		var err error
		if f.ref == 0 {
			err = d.value(v.Field(f.index))
		} else {
			err = d.refField(fs.refSlot, f.ref)
		}
		d.path = d.path[:len(d.path)-1]
		return err
	})
}

// refField reads input_from or input_keep (which) into the reference slot.
func (d *decoder) refField(slot, which int) error {
	c, err := d.peek()
	if err != nil {
		return err
	}
	n, err := d.integer(c)
	ref := &d.refs[slot]
	if which == refFrom {
		ref.from, ref.hasFrom = n, true
	} else {
		ref.keep, ref.hasKeep = n, true
	}
	return err
}

// members reads a JSON object, calling member for each key with the reader on its value.
func (d *decoder) members(member func(key []byte, keyAt int) error) error {
	if err := d.enter(); err != nil {
		return err
	}
	d.pos++ // '{'
	for first := true; ; first = false {
		c, err := d.peek()
		if err != nil {
			return err
		}
		if c == '}' && first {
			d.pos++
			break
		}
		if c != '"' {
			return d.syntax("want a field name in double quotes")
		}
		keyAt := d.pos
		key, err := d.key()
		if err != nil {
			return err
		}
		if err := d.expect(':', "want a colon after a field name"); err != nil {
			return err
		}
		if err := member(key, keyAt); err != nil {
			return err
		}
		if c, err = d.peek(); err != nil {
			return err
		}
		d.pos++
		if c == '}' {
			break
		}
		if c != ',' {
			d.pos--
			return d.syntax("want a comma or a closing brace after a field's value")
		}
	}
	d.depth--
	return nil
}

// array reads a JSON array into the slice v. It leaves the slice no spare room (a recording's
// slices have none), but for an input, which a later one may extend in place (eventState).
func (d *decoder) array(v reflect.Value) error {
	err := d.elements(func(i int) error {
		if v.Len() == v.Cap() {
			v.Grow(1)
		}
		v.SetLen(i + 1)
		d.path = append(d.path, pathStep{index: i})
		err := d.value(v.Index(i))
		d.path = d.path[:len(d.path)-1]
		return err
	})
	if n := v.Len(); err == nil && v.Cap() > n && v.Type() != messagesType {
		exact := reflect.MakeSlice(v.Type(), n, n)
		reflect.Copy(exact, v)
		v.Set(exact)
	}
	return err
}

// stringArray reads a JSON array of strings into v, sharing one array among the events that
// repeat it (a run path, a model's tools), as a recording shares it.
func (d *decoder) stringArray(v reflect.Value) error {
	start, depth := d.pos, d.depth
	if d.skip() == nil {
		if p := d.recent.path(d.data[start:d.pos]); p != nil {
			v.Set(reflect.ValueOf(p))
			return nil
		}
	}
	d.pos, d.depth = start, depth // read again, to keep it or to say what is wrong with it
	if err := d.array(v); err != nil {
		return err
	}
	if p := v.Interface().([]string); len(p) > 0 {
		d.recent.keepPath(d.data[start:d.pos], p)
	}
	return nil
}

// elements reads a JSON array, calling element with the reader on each element.
func (d *decoder) elements(element func(i int) error) error {
	if err := d.enter(); err != nil {
		return err
	}
	d.pos++ // '['
	for i := 0; ; i++ {
		c, err := d.peek()
		if err != nil {
			return err
		}
		if c == ']' && i == 0 {
			d.pos++
			break
		}
		if err := element(i); err != nil {
			return err
		}
		if c, err = d.peek(); err != nil {
			return err
		}
		d.pos++
		if c == ']' {
			break
		}
		if c != ',' {
			d.pos--
			return d.syntax("want a comma or a closing bracket after an array element")
		}
	}
	d.depth--
	return nil
}

// typeError reports that the value starting with c is not the JSON type want names.
func (d *decoder) typeError(c byte, want string) error {
	kind := jsonKindAt(c)
	if kind == "" {
		return d.skip() // not a value at all: skip reports the syntax error
	}
	return d.fail(d.pos, fmt.Sprintf("field %q holds a JSON %s, want %s", d.pathString(), kind, want))
}

// fail returns an error about the value at offset at.
func (d *decoder) fail(at int, problem string) error {
	switch {
	case d.what == "trace" && d.version == 0:
		return Errorf(CodeInvalid, "trace does not match the format: %s (%s)", problem, position(d.data, int64(at)))
	case d.what == "trace":
		return Errorf(CodeInvalid, "trace does not match format version %d: %s (%s)", d.version, problem, position(d.data, int64(at)))
	}
	return Errorf(CodeInvalid, "%s: %s (%s)", d.what, problem, position(d.data, int64(at)))
}

// unknown reports a field the format has no place for.
func (d *decoder) unknown(name string) error {
	if d.what == "trace" && d.version > 0 {
		return Errorf(CodeInvalid, "trace has an unknown field %q: format version %d has no such field", d.pathJoin(name), d.version)
	}
	return Errorf(CodeInvalid, "%s has an unknown field %q", d.what, d.pathJoin(name))
}

// pathString names the value being read, as "events[3].model.id".
func (d *decoder) pathString() string { return d.pathJoin("") }

// pathJoin is pathString with one more field name, unless name is empty.
func (d *decoder) pathJoin(name string) string {
	var b strings.Builder
	for _, s := range d.path {
		if s.name == "" {
			b.WriteString("[" + strconv.Itoa(s.index) + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(s.name)
	}
	if name != "" {
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(name)
	}
	return b.String()
}

// structFields is what the decoder knows of a struct type: its JSON fields, and for the two
// payloads that carry a model's or an agent's input, the slot of their input reference.
type structFields struct {
	list    []field
	refSlot int // refModel, refAgentRun, or -1
}

// field is one JSON field of a struct: index is its Go field; ref marks the input reference
// fields of format version 2, which have no Go field.
type field struct {
	name  string
	index int
	ref   int
}

// Input reference fields and slots.
const (
	refFrom = 1 + iota
	refKeep
)

const (
	refModel = iota
	refAgentRun
)

// index returns the number of the field named key, or -1; version gates the reference fields.
func (fs *structFields) index(key []byte, version int) int {
	for i := range fs.list {
		if fs.list[i].name == string(key) {
			if fs.list[i].ref != 0 && version < 2 {
				return -1
			}
			return i
		}
	}
	return -1
}

var fieldCache sync.Map // reflect.Type -> *structFields

// fieldsOf returns the JSON fields of the struct type typ.
func fieldsOf(typ reflect.Type) *structFields {
	if fs, ok := fieldCache.Load(typ); ok {
		return fs.(*structFields)
	}
	fs := &structFields{refSlot: -1}
	for i := range typ.NumField() {
		f := typ.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.IsExported() && name != "-" && name != "" {
			fs.list = append(fs.list, field{name: name, index: i})
		}
	}
	switch typ {
	case reflect.TypeFor[ModelCall]():
		fs.refSlot = refModel
	case reflect.TypeFor[AgentRun]():
		fs.refSlot = refAgentRun
	}
	if fs.refSlot >= 0 {
		fs.list = append(fs.list, field{name: "input_from", ref: refFrom}, field{name: "input_keep", ref: refKeep})
	}
	if len(fs.list) > 64 {
		panic("traces: decoder tracks at most 64 fields per struct")
	}
	fieldCache.Store(typ, fs)
	return fs
}
