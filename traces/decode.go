package traces

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unsafe"
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
	// lastArray is the string array stringArray read last.
	lastArray lastArray
	// unquoted is room to decode a string with escapes before looking it up in kept.
	unquoted []byte
	// refs holds the input references of the event being read: refModel for its model payload,
	// refAgentRun for its agent_run payload.
	refs [2]inputRef
}

// lastArray is a string array as read (strs) and as written (raw), at depth.
type lastArray struct {
	raw   string
	strs  []string
	depth int
}

// pathStep is one step of the path to the value being read: a field name, or an index when
// name is empty.
type pathStep struct {
	name  string
	index int
}

// maxDepth bounds nesting, as encoding/json does, so a hostile file cannot exhaust the stack.
const maxDepth = 10000

// value reads the next JSON value into v, an addressable value of one of the format's types.
func (d *decoder) value(v reflect.Value) error {
	return d.read(planOf(v.Type()), v.Addr().UnsafePointer())
}

// event reads the next JSON value, an event, into e.
func (d *decoder) event(e *Event) error { return d.read(eventPlan, unsafe.Pointer(e)) }

// read reads the next JSON value into the value of pl's type at p.
func (d *decoder) read(pl *plan, p unsafe.Pointer) error {
	c, err := d.peek()
	if err != nil {
		return err
	}
	switch pl.kind { // the types read otherwise than by kind
	case planTime:
		return d.timeValue(c, (*time.Time)(p))
	case planRaw, planRawJSON:
		start := d.pos
		if err := d.skip(); err != nil {
			return err
		}
		if pl.kind == planRaw {
			*(*json.RawMessage)(p) = compactValue(d.data[start:d.pos])
		} else {
			*(*RawJSON)(p) = d.data[start:d.pos]
		}
		return nil
	}
	if c == 'n' {
		if err := d.literal("null"); err != nil {
			return err
		}
		reflect.NewAt(pl.typ, p).Elem().SetZero()
		return nil
	}
	switch pl.kind {
	case planString:
		if c != '"' {
			return d.typeError(c, "a string")
		}
		s, err := d.internedStr()
		*(*string)(p) = s
		return err
	case planPointer:
		elem := *(*unsafe.Pointer)(p)
		if elem == nil {
			elem = reflect.New(pl.elem.typ).UnsafePointer()
			*(*unsafe.Pointer)(p) = elem
		}
		return d.read(pl.elem, elem)
	case planStruct:
		if c != '{' {
			return d.typeError(c, "an object")
		}
		return d.object(pl.fields, p)
	case planSlice, planStrings:
		if c != '[' {
			return d.typeError(c, "an array")
		}
		if pl.kind == planStrings && d.recent != nil {
			return d.stringArray(pl, (*[]string)(p))
		}
		return d.array(pl, p)
	case planBool:
		switch c {
		case 't':
			*(*bool)(p) = true
			return d.literal("true")
		case 'f':
			*(*bool)(p) = false
			return d.literal("false")
		}
		return d.typeError(c, "true or false")
	case planInt:
		n, err := d.integer(c)
		*(*int)(p) = int(n)
		return err
	case planInt64:
		n, err := d.integer(c)
		*(*int64)(p) = n
		return err
	case planFloat:
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
		*(*float64)(p) = f
		return nil
	}
	panic("traces: decoder cannot read a " + pl.typ.String()) // only the format's own types come here
}

// internedStr reads a JSON string, returning the copy read before if there was one.
func (d *decoder) internedStr() (string, error) {
	s, _, err := d.internedRaw()
	return s, err
}

// internedRaw is internedStr, saying too whether the string was written plainly (see rawString).
func (d *decoder) internedRaw() (string, bool, error) {
	start := d.pos
	raw, plain, err := d.rawString()
	if err != nil {
		return "", false, err
	}
	if !plain {
		d.unquoted = appendUnquoted(d.unquoted[:0], d.data[start:d.pos])
		raw = d.unquoted
	}
	if d.recent != nil {
		return d.recent.get(raw), plain, nil
	}
	if kept, ok := d.kept[string(raw)]; ok {
		return kept, plain, nil
	}
	if d.kept == nil {
		d.kept = make(map[string]string)
	}
	s := d.pack.add(raw)
	d.kept[s] = s
	return s, plain, nil
}

// fieldStr reads the string value of the field numbered slot (see field.slot) into s, as
// internedStr does. The value the field had last (in the event before, say) is most often the
// one here (an agent's name, a tool's, a role): when it was written plainly and is again, it is
// taken at the cost of comparing the text, without looking it up.
func (d *decoder) fieldStr(slot int, s *string) error {
	last := d.recent.fields
	if slot < len(last) {
		if l, at := last[slot], d.pos+1; len(d.data)-at > len(l) && d.data[at+len(l)] == '"' && string(d.data[at:at+len(l)]) == l {
			d.pos = at + len(l) + 1
			*s = l
			return nil
		}
	}
	v, plain, err := d.internedRaw()
	*s = v
	if plain && slot < len(last) {
		last[slot] = v // which, written plainly, holds no quote: a text with it after a quote is it
	}
	return err
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
	if n, ok := smallInt(num); ok {
		return n, nil
	}
	n, perr := strconv.ParseInt(string(num), 10, 64)
	if perr != nil {
		return 0, d.fail(start, fmt.Sprintf("field %q holds the number %s, want an integer", d.pathString(), num))
	}
	return n, nil
}

// timeValue reads an RFC 3339 time (or null, the zero time) into t; c is its first byte.
func (d *decoder) timeValue(c byte, t *time.Time) error {
	if c == 'n' {
		*t = time.Time{}
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
	if plain {
		if utc, ok := parseUTC(raw); ok {
			*t = utc
			return nil
		}
	} else {
		raw = []byte(unquote(d.data[start:d.pos]))
	}
	if t.UnmarshalText(raw) != nil {
		return d.fail(start, fmt.Sprintf("field %q: time %q is not an RFC 3339 time such as \"2006-01-02T15:04:05Z\"", d.pathString(), raw))
	}
	return nil
}

// object reads a JSON object into the struct at p, whose fields are fs. It is members, with the
// keys of fs matched in place.
func (d *decoder) object(fs *structFields, p unsafe.Pointer) error {
	if fs.refSlot >= 0 {
		d.refs[fs.refSlot] = inputRef{}
	}
	if err := d.enter(); err != nil {
		return err
	}
	d.pos++ // '{'
	var seen uint64
	next := 0 // fields come in the order of the struct's, as Marshal writes them: try that first
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
		var key []byte // when not matched in place
		i := fs.match(d.data[d.pos:], next, d.version)
		if i >= 0 {
			d.pos += len(fs.list[i].quoted)
		} else {
			if key, err = d.key(); err != nil {
				return err
			}
			i = fs.index(key, d.version)
		}
		if d.pos < len(d.data) && d.data[d.pos] == ':' {
			d.pos++
		} else if err := d.expect(':', "want a colon after a field name"); err != nil {
			return err
		}
		if i < 0 {
			return d.unknown(string(key))
		}
		next = i + 1
		f := &fs.list[i]
		if seen&(1<<i) != 0 {
			return d.fail(keyAt, fmt.Sprintf("field %q appears twice", d.pathJoin(f.name)))
		}
		seen |= 1 << i
		d.path = append(d.path, pathStep{name: f.name})
		switch {
		case f.slot >= 0 && d.recent != nil && d.pos < len(d.data) && d.data[d.pos] == '"':
			err = d.fieldStr(f.slot, (*string)(unsafe.Add(p, f.at)))
		case f.ref == 0:
			err = d.read(f.plan, unsafe.Add(p, f.at))
		default:
			err = d.refField(fs.refSlot, f.ref)
		}
		d.path = d.path[:len(d.path)-1]
		if err != nil {
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

// array reads a JSON array into the slice of pl's type at p. It leaves the slice no spare room (a
// recording's slices have none), but for an input, which a later one may extend in place
// (eventState).
func (d *decoder) array(pl *plan, p unsafe.Pointer) error {
	v := reflect.NewAt(pl.typ, p).Elem()
	err := d.elements(func(i int) error {
		if v.Len() == v.Cap() {
			v.Grow(1)
		}
		v.SetLen(i + 1)
		d.path = append(d.path, pathStep{index: i})
		err := d.read(pl.elem, v.Index(i).Addr().UnsafePointer())
		d.path = d.path[:len(d.path)-1]
		return err
	})
	if n := v.Len(); err == nil && v.Cap() > n && pl.typ != messagesType {
		exact := reflect.MakeSlice(v.Type(), n, n)
		reflect.Copy(exact, v)
		v.Set(exact)
	}
	return err
}

// stringArray reads a JSON array of strings into s, sharing one array among the events that
// repeat it (a run path, a model's tools), as a recording shares it.
func (d *decoder) stringArray(pl *plan, s *[]string) error {
	// The array read last, as it was written, is most often the one here (a run path, event
	// after event): a text that begins with a whole array is that array.
	if last := d.lastArray; last.raw != "" && last.depth == d.depth && len(d.data)-d.pos >= len(last.raw) &&
		string(d.data[d.pos:d.pos+len(last.raw)]) == last.raw {
		d.pos += len(last.raw)
		*s = last.strs
		return nil
	}
	start, depth := d.pos, d.depth
	if d.skip() == nil {
		if raw, p := d.recent.path(d.data[start:d.pos]); p != nil {
			*s = p
			d.lastArray = lastArray{raw, p, depth}
			return nil
		}
	}
	d.pos, d.depth = start, depth // read again, to keep it or to say what is wrong with it
	if err := d.array(pl, unsafe.Pointer(s)); err != nil {
		return err
	}
	if len(*s) > 0 {
		d.lastArray = lastArray{d.recent.keepPath(d.data[start:d.pos], *s), *s, depth}
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
