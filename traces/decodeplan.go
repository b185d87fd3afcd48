package traces

import (
	"encoding/binary"
	"encoding/json"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// plan is how the decoder reads values of one Go type of the format. It is made once per type,
// from the type and its fields' JSON tags (the one place the field names are spelled), so that
// the decoder then reads straight into memory at a value's address: no reflect.Value per value
// or field, which took a third of the time to read a large trace.
type plan struct {
	kind   planKind
	typ    reflect.Type
	elem   *plan         // a pointer's or a slice's element
	fields *structFields // a struct's
}

type planKind uint8

const (
	planUnsupported planKind = iota // a type no format value has: reading it panics
	planString
	planBool
	planInt
	planInt64
	planFloat
	planTime
	planRaw     // json.RawMessage: kept compacted
	planRawJSON // RawJSON: kept as written
	planPointer
	planStruct
	planSlice
	planStrings // []string, which a recent table shares (see stringArray)
)

// structFields is what the decoder knows of a struct type: its JSON fields, and for the two
// payloads that carry a model's or an agent's input, the slot of their input reference.
type structFields struct {
	list    []field
	refSlot int // refModel, refAgentRun, or -1
}

// field is one JSON field of a struct: quoted is its name as a plain JSON string, to match a key
// without decoding it; at is where its Go field lies in the struct, read by plan. ref marks the
// input reference fields of format version 2, which have no Go field.
type field struct {
	name   string
	quoted string
	// head is quoted's first eight bytes (fewer bits set in headMask when it is shorter), to
	// compare with one load: most names end there.
	head, headMask uint64
	at             uintptr
	plan           *plan
	ref            int
	// slot numbers the string fields of all plans, for stringTable.fields; -1 for others.
	slot int
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

var (
	timeType     = reflect.TypeFor[time.Time]()
	rawType      = reflect.TypeFor[json.RawMessage]()
	rawJSONType  = reflect.TypeFor[RawJSON]()
	messagesType = reflect.TypeFor[[]Message]()
	stringsType  = reflect.TypeFor[[]string]()
)

var (
	plans  sync.Map   // reflect.Type -> *plan, complete
	planMu sync.Mutex // held while plans are made
	// stringSlots is the number of string fields numbered so far (field.slot).
	stringSlots atomic.Int64
	// eventPlan is the plan of Event, read a million times for a large trace.
	eventPlan = planOf(reflect.TypeFor[Event]())
)

// planOf returns the plan of typ.
func planOf(typ reflect.Type) *plan {
	if p, ok := plans.Load(typ); ok {
		return p.(*plan)
	}
	planMu.Lock()
	defer planMu.Unlock()
	made := make(map[reflect.Type]*plan)
	p := makePlan(typ, made)
	for t, p := range made { // published once all of them are complete
		plans.Store(t, p)
	}
	return p
}

// makePlan makes the plan of typ and of the types it holds, in made (a type that holds itself,
// through a pointer or a slice, finds its own plan there, to be completed).
func makePlan(typ reflect.Type, made map[reflect.Type]*plan) *plan {
	if p, ok := plans.Load(typ); ok {
		return p.(*plan)
	}
	if p, ok := made[typ]; ok {
		return p
	}
	p := &plan{typ: typ}
	made[typ] = p
	switch typ {
	case timeType:
		p.kind = planTime
		return p
	case rawType:
		p.kind = planRaw
		return p
	case rawJSONType:
		p.kind = planRawJSON
		return p
	case stringsType:
		p.kind, p.elem = planStrings, makePlan(typ.Elem(), made)
		return p
	}
	switch typ.Kind() {
	case reflect.String:
		p.kind = planString
	case reflect.Bool:
		p.kind = planBool
	case reflect.Int:
		p.kind = planInt
	case reflect.Int64:
		p.kind = planInt64
	case reflect.Float64:
		p.kind = planFloat
	case reflect.Pointer:
		p.kind, p.elem = planPointer, makePlan(typ.Elem(), made)
	case reflect.Slice:
		p.kind, p.elem = planSlice, makePlan(typ.Elem(), made)
	case reflect.Struct:
		p.kind, p.fields = planStruct, makeFields(typ, made)
	}
	return p
}

// makeFields returns the JSON fields of the struct type typ.
func makeFields(typ reflect.Type, made map[reflect.Type]*plan) *structFields {
	fs := &structFields{refSlot: -1}
	for i := range typ.NumField() {
		f := typ.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.IsExported() && name != "-" && name != "" {
			fs.list = append(fs.list, field{name: name, at: f.Offset, plan: makePlan(f.Type, made)})
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
	for i := range fs.list {
		f := &fs.list[i]
		f.slot = -1
		if f.plan != nil && f.plan.kind == planString {
			f.slot = int(stringSlots.Add(1) - 1)
		}
		if q, _ := json.Marshal(f.name); string(q) == `"`+f.name+`"` && !strings.ContainsAny(f.name, `\"`) {
			f.quoted = string(q) // else a key never matches it plainly, and is decoded to compare
		}
		f.head, f.headMask = 1, 0 // matches nothing
		if f.quoted != "" {
			var b [8]byte
			n := copy(b[:], f.quoted)
			f.head, f.headMask = binary.LittleEndian.Uint64(b[:]), ^uint64(0)>>(64-8*n)
		}
	}
	return fs
}

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

// match returns the number of the field whose name, as a plain JSON string, starts data, trying
// first the field after the one read last (next), as Marshal writes them in order; -1 when no
// name is there plainly (an unknown field, or one spelled with escapes), to decode and look up.
func (fs *structFields) match(data []byte, next, version int) int {
	if len(data) < 8 { // a document's last bytes: no name it can hold is matched in place
		return -1
	}
	head := binary.LittleEndian.Uint64(data)
	n := len(fs.list)
	for k := range n {
		i := next + k
		if i >= n {
			i -= n
		}
		f := &fs.list[i]
		if head&f.headMask != f.head {
			continue
		}
		if q := f.quoted; len(q) <= 8 || len(data) >= len(q) && string(data[8:len(q)]) == q[8:] {
			if f.ref != 0 && version < 2 {
				return -1
			}
			return i
		}
	}
	return -1
}
