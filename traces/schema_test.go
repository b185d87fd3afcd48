package traces_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/baton-dev/baton/traces"
)

// schemaFile is the JSON Schema of format versions 1 and 2. These tests keep it and the Go types in step
// and check files against it with a small validator for just the keywords the schema uses.
const schemaFile = "../docs/trace.schema.json"

// schemaDefs maps each struct type a Trace holds to the schema definition describing it.
var schemaDefs = map[reflect.Type]string{
	reflect.TypeFor[traces.Run]():           "run",
	reflect.TypeFor[traces.Agent]():         "agent",
	reflect.TypeFor[traces.Event]():         "event",
	reflect.TypeFor[traces.RunMark]():       "runMark",
	reflect.TypeFor[traces.ForkOrigin]():    "forkOrigin",
	reflect.TypeFor[traces.AgentRun]():      "agentRun",
	reflect.TypeFor[traces.ModelCall]():     "modelCall",
	reflect.TypeFor[traces.Usage]():         "usage",
	reflect.TypeFor[traces.ToolCall]():      "toolCall",
	reflect.TypeFor[traces.Message]():       "message",
	reflect.TypeFor[traces.ToolCallSpec]():  "toolCallSpec",
	reflect.TypeFor[traces.Transfer]():      "transfer",
	reflect.TypeFor[traces.AgentToolCall](): "agentToolCall",
	reflect.TypeFor[traces.SessionSet]():    "sessionSet",
	reflect.TypeFor[traces.Interrupt]():     "interrupt",
	reflect.TypeFor[traces.Exit]():          "exit",
	reflect.TypeFor[traces.BreakLoop]():     "breakLoop",
	reflect.TypeFor[traces.ErrorDetail]():   "errorDetail",
	reflect.TypeFor[traces.Lost]():          "lost",
	reflect.TypeFor[traces.Pause]():         "pause",
}

// wireOnly lists, per definition, the properties the file holds that have no Go field: version
// 2's input references, resolved into full inputs when a trace is read.
var wireOnly = map[string][]string{"modelCall": {"input_from", "input_keep"}, "agentRun": {"input_from", "input_keep"}}

type schema = map[string]any

func loadSchema(tb testing.TB) schema {
	tb.Helper()
	data, err := os.ReadFile(schemaFile)
	if err != nil {
		tb.Fatal(err)
	}
	return decodeJSON(tb, data).(schema)
}

func decodeJSON(tb testing.TB, data []byte) any {
	tb.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		tb.Fatalf("decode JSON: %v", err)
	}
	return v
}

func def(tb testing.TB, root schema, name string) schema {
	tb.Helper()
	d := lookupDef(root, name)
	if d == nil {
		tb.Fatalf("the schema has no $defs/%s", name)
	}
	return d
}

// lookupDef returns the definition a "#/$defs/name" reference names, or nil.
func lookupDef(root schema, name string) schema {
	d, _ := root["$defs"].(schema)[name].(schema)
	return d
}

func strs(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

func TestSchemaKindsAreTheGoKinds(t *testing.T) {
	root := loadSchema(t)
	event := def(t, root, "event")
	var want []string
	for _, k := range traces.Kinds {
		want = append(want, string(k))
	}
	if got := strs(event["properties"].(schema)["kind"].(schema)["enum"]); !slices.Equal(got, want) {
		t.Errorf("schema kinds = %v,\nwant traces.Kinds %v", got, want)
	}
	// Each kind has one if/then branch requiring the payload payloadField names, and only that.
	branched := map[string]bool{}
	for _, b := range event["allOf"].([]any) {
		branch := b.(schema)
		then := branch["then"].(schema)
		required := strs(then["required"])
		if len(required) != 1 || len(then["properties"].(schema)) != 1 {
			t.Fatalf("branch %v: want one required payload property", branch)
		}
		for _, kind := range strs(branch["if"].(schema)["properties"].(schema)["kind"].(schema)["enum"]) {
			if branched[kind] {
				t.Errorf("kind %s has two branches", kind)
			}
			branched[kind] = true
			if want := traces.PayloadField(traces.Kind(kind)); required[0] != want {
				t.Errorf("schema: %s requires %q, Go: %q", kind, required[0], want)
			}
		}
	}
	if got := slices.Sorted(maps.Keys(branched)); !slices.Equal(got, slices.Sorted(slices.Values(want))) {
		t.Errorf("kinds with a payload branch = %v, want every kind", got)
	}
}

func TestSchemaMatchesGoTypes(t *testing.T) {
	root := loadSchema(t)
	for _, typ := range structTypes(reflect.TypeFor[traces.Trace]()) {
		if typ == reflect.TypeFor[traces.Trace]() {
			continue // the envelope, checked below
		}
		name, ok := schemaDefs[typ]
		if !ok {
			t.Errorf("%s has no schema definition: add one to %s and to schemaDefs", typ.Name(), schemaFile)
			continue
		}
		t.Run(name, func(t *testing.T) {
			d := maps.Clone(def(t, root, name))
			d["properties"] = maps.Clone(d["properties"].(schema))
			for _, p := range wireOnly[name] {
				if d["properties"].(schema)[p] == nil {
					t.Errorf("the schema lacks %s.%s", name, p)
				}
				delete(d["properties"].(schema), p)
			}
			checkDef(t, root, d, typ)
		})
	}
	t.Run("envelope", func(t *testing.T) {
		props := root["properties"].(schema)
		want := append([]string{"format", "version"}, slices.Collect(maps.Keys(goFields(reflect.TypeFor[traces.Trace]())))...)
		if got := slices.Sorted(maps.Keys(props)); !slices.Equal(got, slices.Sorted(slices.Values(want))) {
			t.Errorf("envelope properties = %v, want %v", got, want)
		}
		if root["additionalProperties"] != false {
			t.Errorf("the envelope does not reject unknown fields")
		}
	})
}

// goField is what the schema must say about one Go struct field.
type goField struct {
	typ      reflect.Type
	required bool // written always: no omitempty
}

func goFields(typ reflect.Type) map[string]goField {
	out := map[string]goField{}
	for i := range typ.NumField() {
		name, opts, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		out[name] = goField{typ: typ.Field(i).Type, required: !strings.Contains(opts, "omitempty")}
	}
	return out
}

// checkDef compares one schema definition with its Go struct: the same property names, required
// exactly when Go always writes the field, unknown fields rejected, and each property of the
// JSON type (or definition) its Go field needs.
func checkDef(t *testing.T, root, d schema, typ reflect.Type) {
	t.Helper()
	props := maps.Clone(d["properties"].(schema))
	if typ == reflect.TypeFor[traces.Event]() {
		for _, b := range d["allOf"].([]any) {
			maps.Copy(props, b.(schema)["then"].(schema)["properties"].(schema))
		}
		if d["unevaluatedProperties"] != false {
			t.Errorf("events do not reject unknown fields and extra payloads")
		}
	} else if d["additionalProperties"] != false {
		t.Errorf("unknown fields are not rejected")
	}
	fields := goFields(typ)
	if got, want := slices.Sorted(maps.Keys(props)), slices.Sorted(maps.Keys(fields)); !slices.Equal(got, want) {
		t.Fatalf("schema properties %v, Go JSON fields %v", got, want)
	}
	var required []string
	if r, ok := d["required"]; ok {
		required = strs(r)
	}
	for name, f := range fields {
		if slices.Contains(required, name) != f.required {
			t.Errorf("%s: required in the schema = %v, always written by Go = %v", name, !f.required, f.required)
		}
		if got, want := schemaType(root, props[name].(schema)), jsonTypeOf(f.typ); got != want {
			t.Errorf("%s: schema type %s, Go type %s wants %s", name, got, f.typ, want)
		}
	}
}

// schemaType describes what a property schema accepts: "string", "array of #/$defs/message" ...
func schemaType(root, s schema) string {
	switch {
	case s["$ref"] != nil:
		name := strings.TrimPrefix(s["$ref"].(string), "#/$defs/")
		if d := lookupDef(root, name); d["type"] == "object" || d["type"] == nil && d["enum"] == nil {
			return "#/$defs/" + name
		}
		return schemaType(root, lookupDef(root, name))
	case s["type"] == "array":
		return "array of " + schemaType(root, s["items"].(schema))
	case s["type"] != nil:
		return s["type"].(string)
	case s["enum"] != nil || s["const"] != nil:
		return "string"
	}
	return "any"
}

// jsonTypeOf is schemaType's answer for a Go type.
func jsonTypeOf(t reflect.Type) string {
	switch {
	case t == reflect.TypeFor[json.RawMessage]():
		return "any"
	case t == timeType:
		return "string"
	case t.Kind() == reflect.Pointer:
		return jsonTypeOf(t.Elem())
	case t.Kind() == reflect.Slice:
		return "array of " + jsonTypeOf(t.Elem())
	case t.Kind() == reflect.Struct:
		return "#/$defs/" + schemaDefs[t]
	case t.Kind() == reflect.String:
		return "string"
	case t.Kind() == reflect.Bool:
		return "boolean"
	case t.Kind() == reflect.Float64:
		return "number"
	}
	return "integer"
}

func TestSchemaEnumsAreTheGoConstants(t *testing.T) {
	root := loadSchema(t)
	for _, tc := range []struct {
		name string
		enum any
		want []string
	}{
		{"status", def(t, root, "status")["enum"], []string{
			string(traces.StatusRunning), string(traces.StatusCompleted), string(traces.StatusFailed),
			string(traces.StatusInterrupted), string(traces.StatusCanceled)}},
		{"agent kind", def(t, root, "agent")["properties"].(schema)["kind"].(schema)["enum"], []string{
			string(traces.AgentChatModel), string(traces.AgentSupervisor), string(traces.AgentSequential),
			string(traces.AgentParallel), string(traces.AgentLoop), string(traces.AgentCustom)}},
		{"relation", def(t, root, "agent")["properties"].(schema)["relation"].(schema)["enum"], []string{
			string(traces.RelationSubAgent), string(traces.RelationAgentTool)}},
		{"transfer mode", def(t, root, "transfer")["properties"].(schema)["mode"].(schema)["enum"], []string{
			traces.TransferLLM, traces.TransferDeterministic}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := strs(tc.enum); !slices.Equal(got, tc.want) {
				t.Errorf("schema enum = %v, Go constants = %v", got, tc.want)
			}
		})
	}
	for _, s := range strs(def(t, root, "status")["enum"]) {
		if !traces.Status(s).Valid() {
			t.Errorf("schema status %q is not Valid in Go", s)
		}
	}
}

func TestFilesValidateAgainstSchema(t *testing.T) {
	root := loadSchema(t)
	files, err := filepath.Glob("testdata/v[0-9]*/*.trace.json")
	if err != nil || len(files) < 4 {
		t.Fatalf("version-1 and version-2 files: %v, %v", files, err)
	}
	for _, file := range append(files, allKindsGolden) {
		t.Run(file, func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if errs := validate(root, root, decodeJSON(t, data), ""); len(errs) > 0 {
				t.Errorf("%s does not match the schema:\n%s", file, strings.Join(errs, "\n"))
			}
		})
	}
}

func TestSchemaRejectsMalformed(t *testing.T) {
	root := loadSchema(t)
	// What only Validate can see: order, uniqueness, references between agents, what follows
	// run.finished, and the contents of a time string.
	semantic := map[string]bool{"seq gap": true, "duplicate seq": true, "seq not starting at 1": true,
		"duplicate agent name": true, "agent parent unknown": true, "agent its own parent": true, "agents in a loop": true, "bad time": true,
		"event after run.finished": true, "interrupted run goes on without resumed": true,
		"two run.started": true, "status the events do not tell": true, "finished run without run.finished": true}
	for _, tc := range malformed {
		var doc any
		if json.Unmarshal([]byte(tc.doc), &doc) != nil {
			continue // not one JSON value: nothing for a schema to judge
		}
		t.Run(tc.name, func(t *testing.T) {
			errs := validate(root, root, decodeJSON(t, []byte(tc.doc)), "")
			if semantic[tc.name] != (len(errs) == 0) {
				t.Errorf("schema errors %v; want none: %v", errs, semantic[tc.name])
			}
		})
	}
}

// validate checks v against s, for the keywords trace.schema.json uses, and returns the problems
// found. It fails loudly on any other keyword so that it never passes by ignoring one.
func validate(root, s schema, v any, path string) []string {
	errs, _ := check(root, s, v, path)
	return errs
}

// check is validate that also returns the property names s evaluated, for unevaluatedProperties.
func check(root, s schema, v any, path string) (errs []string, evaluated map[string]bool) {
	evaluated = map[string]bool{}
	fail := func(format string, args ...any) { errs = append(errs, path+": "+fmt.Sprintf(format, args...)) }
	obj, isObj := v.(map[string]any)
	sub := func(s schema, v any, at string) bool {
		e, ev := check(root, s, v, at)
		errs = append(errs, e...)
		if len(e) == 0 {
			maps.Copy(evaluated, ev)
		}
		return len(e) == 0
	}
	for _, key := range slices.Sorted(maps.Keys(s)) {
		val := s[key]
		switch key {
		case "$schema", "$id", "$defs", "title", "description", "format", "then", "unevaluatedProperties", "additionalProperties":
		case "$ref":
			target := lookupDef(root, strings.TrimPrefix(val.(string), "#/$defs/"))
			if target == nil {
				panic("validate: dangling $ref " + val.(string))
			}
			sub(target, v, path)
		case "type":
			if !hasType(v, val.(string)) {
				fail("is %T, want %s", v, val)
			}
		case "const":
			if !reflect.DeepEqual(v, val) {
				fail("is %v, want %v", v, val)
			}
		case "enum":
			if !slices.ContainsFunc(val.([]any), func(x any) bool { return reflect.DeepEqual(x, v) }) {
				fail("%v is not one of %v", v, val)
			}
		case "minimum":
			if n, ok := v.(json.Number); ok && mustFloat(n) < mustFloat(val.(json.Number)) {
				fail("%v is below %v", v, val)
			}
		case "minLength":
			if str, ok := v.(string); ok && int64(len(str)) < int64(mustFloat(val.(json.Number))) {
				fail("%q is too short", str)
			}
		case "maxLength":
			if str, ok := v.(string); ok && int64(utf8.RuneCountInString(str)) > int64(mustFloat(val.(json.Number))) {
				fail("%q is too long", str)
			}
		case "pattern":
			if str, ok := v.(string); ok && !regexp.MustCompile(val.(string)).MatchString(str) {
				fail("%q does not match %s", str, val)
			}
		case "required":
			for _, name := range strs(val) {
				if _, ok := obj[name]; isObj && !ok {
					fail("has no %q", name)
				}
			}
		case "properties":
			for name, ps := range val.(schema) {
				if x, ok := obj[name]; isObj && ok {
					sub(ps.(schema), x, path+"."+name)
					evaluated[name] = true
				}
			}
		case "items":
			if arr, ok := v.([]any); ok {
				for i, x := range arr {
					sub(val.(schema), x, fmt.Sprintf("%s[%d]", path, i))
				}
			}
		case "allOf":
			for _, b := range val.([]any) {
				sub(b.(schema), v, path)
			}
		case "if":
			if cond, ev := check(root, val.(schema), v, path); len(cond) == 0 {
				maps.Copy(evaluated, ev)
				sub(s["then"].(schema), v, path)
			}
		default:
			panic("validate: keyword " + key + " is not supported; teach it to the validator")
		}
	}
	for _, key := range []string{"additionalProperties", "unevaluatedProperties"} {
		if s[key] == nil || !isObj {
			continue
		}
		if s[key] != false {
			panic("validate: only " + key + ": false is supported")
		}
		for name := range obj {
			known := evaluated[name]
			if key == "additionalProperties" {
				_, known = s["properties"].(schema)[name]
			}
			if !known {
				fail("unknown field %q (%s)", name, key)
			}
		}
	}
	return errs, evaluated
}

func hasType(v any, typ string) bool {
	switch v := v.(type) {
	case map[string]any:
		return typ == "object"
	case []any:
		return typ == "array"
	case string:
		return typ == "string"
	case bool:
		return typ == "boolean"
	case json.Number:
		_, err := v.Int64()
		return typ == "number" || typ == "integer" && err == nil
	}
	return typ == "null"
}

func mustFloat(n json.Number) float64 {
	f, err := n.Float64()
	if err != nil {
		panic(err)
	}
	return f
}

// formatDoc is the human documentation of the format; its event examples must be valid events.
const formatDoc = "../docs/trace-format.md"

func TestFormatDocExamplesAreValidEvents(t *testing.T) {
	doc, err := os.ReadFile(formatDoc)
	if err != nil {
		t.Fatal(err)
	}
	payloads := map[string]bool{}
	for i, block := range strings.Split(string(doc), "```json\n")[1:] {
		block, _, _ = strings.Cut(block, "```")
		if !strings.HasPrefix(block, `{"seq"`) {
			continue // the envelope, run and agent sketches
		}
		dec := json.NewDecoder(strings.NewReader(block))
		inputs := map[int64]int{} // seq -> input length, for the block's input references
		for dec.More() {
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				t.Fatalf("example %d: %v\n%s", i+1, err, block)
			}
			e := docEvent(t, raw, inputs)
			e.Seq = 1                      // the examples come from the middle of runs
			status := traces.StatusRunning // run.status is what the events say
			if e.Kind == traces.KindRunFinished {
				status = e.Run.Status
			}
			tr := traces.Trace{Run: traces.Run{ID: "doc", Status: status}, Events: []traces.Event{e}}
			if err := traces.Validate(tr); err != nil {
				t.Errorf("example %d (%s): %v", i+1, e.Kind, err)
			}
			payloads[traces.PayloadField(e.Kind)] = true
		}
	}
	for _, k := range traces.Kinds {
		if !payloads[traces.PayloadField(k)] {
			t.Errorf("%s has no example of a %q payload", formatDoc, traces.PayloadField(k))
		}
	}
}

// docEvent decodes an example event of the format's page, exactly. An input reference must name
// an earlier example of the same block, with input enough; it is checked against inputs (seq ->
// input length, which docEvent adds to) and then left out, as a reader resolves it.
func docEvent(t *testing.T, raw json.RawMessage, inputs map[int64]int) traces.Event {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	seq := int64(doc["seq"].(float64))
	for _, payload := range []string{"model", "agent_run"} {
		p, ok := doc[payload].(map[string]any)
		if !ok {
			continue
		}
		n := 0
		if in, ok := p["input"].([]any); ok {
			n = len(in)
		}
		if from, ok := p["input_from"].(float64); ok {
			keep, _ := p["input_keep"].(float64)
			if have, ok := inputs[int64(from)]; !ok || keep < 1 || int(keep) > have {
				t.Errorf("example event %d refers to event %v keeping %v messages: no earlier example has them", seq, from, keep)
			}
			n += int(keep)
			delete(p, "input_from")
			delete(p, "input_keep")
		}
		if n > 0 {
			inputs[seq] = n
		}
	}
	plain, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(plain))
	dec.DisallowUnknownFields()
	var e traces.Event
	if err := dec.Decode(&e); err != nil {
		t.Fatalf("example event %d: %v\n%s", seq, err, raw)
	}
	return e
}
