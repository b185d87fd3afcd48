package traces_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/baton-dev/baton/traces"
)

// growingTrace is one agent's conversation of turns model calls, each fed the previous call's
// input plus its reply and a tool result, the inputs sharing one backing array as the recorder
// builds them.
func growingTrace(turns int) traces.Trace {
	history := []traces.Message{{Role: "system", Content: "You count."}, {Role: "user", Content: "Count to " + fmt.Sprint(turns)}}
	events := []traces.Event{{Kind: traces.KindRunStarted, Run: &traces.RunMark{Status: traces.StatusRunning}},
		{Kind: traces.KindAgentStarted, Agent: "counter", AgentRun: &traces.AgentRun{Input: history[1:2:2], Via: "run"}}}
	for i := range turns {
		id := fmt.Sprintf("counter-%d", i+1)
		reply := traces.Message{Role: "assistant", ToolCalls: []traces.ToolCallSpec{{ID: "c" + id, Name: "tick", Arguments: fmt.Sprintf(`{"n":%d}`, i)}}}
		events = append(events,
			traces.Event{Kind: traces.KindModelStarted, Agent: "counter", Model: &traces.ModelCall{ID: id, Input: history[:len(history):len(history)]}},
			traces.Event{Kind: traces.KindModelFinished, Agent: "counter", Model: &traces.ModelCall{ID: id, Output: &reply}})
		history = append(history, reply, traces.Message{Role: "tool", Content: fmt.Sprint(i), ToolCallID: "c" + id, ToolName: "tick"})
	}
	events = append(events, traces.Event{Kind: traces.KindRunFinished, Run: &traces.RunMark{Status: traces.StatusCompleted}})
	for i := range events {
		events[i].Seq, events[i].Time = int64(i+1), t0
	}
	return traces.Trace{Run: traces.Run{ID: "r-grow", Status: traces.StatusCompleted, StartedAt: t0},
		Agents: []traces.Agent{{Name: "counter", Kind: traces.AgentChatModel}}, Events: events}
}

func TestCompactInputsGrowLinearly(t *testing.T) {
	small, large := mustMarshal(t, growingTrace(100)), mustMarshal(t, growingTrace(400))
	// Four times the calls of a conversation four times as long: quadratic would be 16 times.
	if ratio := float64(len(large)) / float64(len(small)); ratio > 4.5 {
		t.Errorf("400 calls take %.1f times the bytes of 100 calls, want about 4 (linear)", ratio)
	}
	calls := 0
	for _, line := range strings.Split(string(large), "\n") {
		if !strings.Contains(line, `"kind":"model.started"`) {
			continue
		}
		if calls++; calls > 1 && !strings.Contains(line, `"input_from":`) {
			t.Fatalf("a model call that extends the previous one is written in full: %.200s", line)
		}
	}
	got, err := traces.Unmarshal(large)
	if err != nil {
		t.Fatal(err)
	}
	want := growingTrace(400)
	assertEqualTraces(t, got, want)
	if again := mustMarshal(t, got); !bytes.Equal(again, large) {
		t.Fatalf("Marshal after Unmarshal changed the bytes: %s", firstDifference(string(again), string(large)))
	}
	// Read back, the inputs share their messages as recorded ones do: a handful of backing arrays
	// (each a doubling of the last), not one per call.
	arrays := map[*traces.Message]bool{}
	for _, e := range got.Events {
		if e.Kind == traces.KindModelStarted {
			arrays[&e.Model.Input[0]] = true
		}
	}
	if len(arrays) > 16 {
		t.Errorf("400 model inputs read back use %d backing arrays, want them shared (at most 16)", len(arrays))
	}
}

func TestEventEncoderWritesRowByRow(t *testing.T) {
	for name, tr := range map[string]traces.Trace{"rich": richTrace(), "growing": growingTrace(30)} {
		t.Run(name, func(t *testing.T) {
			var lines []string // the file's event lines
			for _, line := range strings.Split(string(mustMarshal(t, tr)), "\n") {
				if strings.HasPrefix(line, `    {"seq":`) {
					lines = append(lines, strings.TrimSuffix(strings.TrimPrefix(line, "    "), ","))
				}
			}
			var enc traces.EventEncoder
			dec := traces.NewEventDecoder()
			for i, e := range tr.Events {
				row, err := enc.AppendEvent(nil, e)
				if err != nil {
					t.Fatal(err)
				}
				// The rows are the file's event lines, so a store and an export agree byte for byte.
				if string(row) != lines[i] {
					t.Fatalf("row %d is not the file's line:\n got: %s\nwant: %s", i, row, lines[i])
				}
				got, err := dec.Decode(row)
				if err != nil {
					t.Fatalf("Decode(row %d): %v", i, err)
				}
				assertEqualTraces(t, traces.Trace{Events: []traces.Event{got}}, traces.Trace{Events: []traces.Event{e}})
			}
		})
	}
}

// TestEventDecoderSharesAcrossRows: events decoded row by row share their equal strings, as a
// trace file read whole does, so that a run read back from a store takes no more memory than
// recorded live.
func TestEventDecoderSharesAcrossRows(t *testing.T) {
	var enc traces.EventEncoder
	dec := traces.NewEventDecoder()
	var got []traces.Event
	for _, e := range growingTrace(2).Events {
		row, err := enc.AppendEvent(nil, e)
		if err != nil {
			t.Fatal(err)
		}
		ev, err := dec.Decode(row)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ev)
	}
	same := func(what, a, b string) {
		if a != b || unsafe.StringData(a) != unsafe.StringData(b) {
			t.Errorf("%s: %q and %q are two copies, want one", what, a, b)
		}
	}
	same("the agent of rows 2 and 3", got[1].Agent, got[2].Agent)
	same("the kind of rows 3 and 5", string(got[2].Kind), string(got[4].Kind))
	same("a tool call's id in a reply and in the next input", got[3].Model.Output.ToolCalls[0].ID, got[4].Model.Input[3].ToolCallID)
}

func TestEventDecoderChecksEachRow(t *testing.T) {
	dec := traces.NewEventDecoder()
	first := `{"seq":1,"time":"2026-01-02T03:04:05Z","kind":"model.started","agent":"a","model":{"id":"m1","input":[{"role":"user","content":"hi"}]}}`
	if _, err := dec.Decode([]byte(first)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, row, want string }{
		{"out of order", `{"seq":3,"time":"2026-01-02T03:04:05Z","kind":"lost","lost":{"count":1}}`, "events[1].seq is 3, want 2"},
		{"reference too long", `{"seq":2,"time":"2026-01-02T03:04:05Z","kind":"model.started","model":{"id":"m2","input_from":1,"input_keep":2}}`, "events[1].model.input_keep is 2, but event 1's input has 1 messages"},
		{"unknown field", `{"seq":2,"kind":"lost","lost":{"count":1},"colour":1}`, `event has an unknown field "events[1].colour"`},
		{"not JSON", `{"seq":2,`, "event cannot be read"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := dec.Decode([]byte(tc.row))
			if traces.ErrorCode(err) != traces.CodeInvalid || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Decode = %v, want an invalid error saying %q", err, tc.want)
			}
		})
	}
	// A refused row leaves the decoder where it was.
	second := `{"seq":2,"time":"2026-01-02T03:04:06Z","kind":"model.started","agent":"a","model":{"id":"m2","input_from":1,"input_keep":1,"input":[{"role":"assistant","content":"hello"}]}}`
	e, err := dec.Decode([]byte(second))
	if err != nil || len(e.Model.Input) != 2 || e.Model.Input[0].Content != "hi" || e.Model.Input[1].Content != "hello" {
		t.Fatalf("Decode(second) = %+v, %v; want the input hi, hello", e.Model, err)
	}
}

// validV2Doc is a small version-2 trace whose second model call refers to the first one's input;
// the malformedV2 cases each break one thing in it.
const validV2Doc = `{"format":"baton.trace","version":2,` +
	`"run":{"id":"r2","flow":"f","input":"hi","model":"scripted","status":"completed","started_at":"2026-01-02T03:04:05Z"},` +
	`"agents":[{"name":"a","kind":"chat_model"}],"events":[` +
	`{"seq":1,"time":"2026-01-02T03:04:05Z","kind":"run.started","run":{"status":"running"}},` +
	`{"seq":2,"time":"2026-01-02T03:04:05Z","kind":"model.started","agent":"a","model":{"id":"m1","input":[{"role":"user","content":"hi"}]}},` +
	`{"seq":3,"time":"2026-01-02T03:04:06Z","kind":"model.started","agent":"a","model":{"id":"m2","input_from":2,"input_keep":1,"input":[{"role":"assistant","content":"hello"}]}},` +
	`{"seq":4,"time":"2026-01-02T03:04:07Z","kind":"run.finished","run":{"status":"completed"}}]}`

// editV2 is edit for validV2Doc.
func editV2(pairs ...string) string {
	for i := 0; i < len(pairs); i += 2 {
		if strings.Count(validV2Doc, pairs[i]) != 1 {
			panic("malformed case: " + pairs[i] + " does not occur exactly once")
		}
	}
	doc := validV2Doc
	for i := 0; i < len(pairs); i += 2 {
		doc = strings.Replace(doc, pairs[i], pairs[i+1], 1)
	}
	return doc
}

var malformedV2 = []struct{ name, doc, want string }{
	{"keep without from", editV2(`"input_from":2,`, ``), "events[2].model has input_keep but no input_from"},
	{"from without keep", editV2(`"input_keep":1,`, ``), "events[2].model has input_from but no input_keep"},
	{"from itself", editV2(`"input_from":2`, `"input_from":3`), "events[2].model.input_from is 3: it must be the seq of an earlier event"},
	{"from a later event", editV2(`"input_from":2`, `"input_from":4`), "input_from is 4: it must be the seq of an earlier event"},
	{"from an event without input", editV2(`"input_from":2`, `"input_from":1`), "events[2].model.input_from is 1, but event 1 has no input"},
	{"keep too many", editV2(`"input_keep":1`, `"input_keep":2`), "input_keep is 2, but event 2's input has 1 messages: keep 1 to 1"},
	{"keep none", editV2(`"input_keep":1`, `"input_keep":0`), "input_keep is 0"},
	{"keep not an integer", editV2(`"input_keep":1`, `"input_keep":"1"`), `field "events[2].model.input_keep" holds a JSON string, want an integer`},
	{"reference in version 1", editV2(`"version":2`, `"version":1`), `unknown field "events[2].model.input_from": format version 1 has no such field`},
	{"field twice", editV2(`"id":"m1",`, `"id":"m1","id":"m0",`), `field "events[1].model.id" appears twice`},
	{"control character in a string", editV2(`"content":"hi"`, "\"content\":\"h\ti\""), "control characters must be escaped"},
	{"bad escape", editV2(`"content":"hi"`, `"content":"h\qi"`), `invalid escape \q`},
	{"number with a leading zero", editV2(`"seq":1,`, `"seq":01,`), "not valid JSON: want a comma or a closing brace after a field's value (line 1, column"},
}

func TestUnmarshalReadsVersion2(t *testing.T) {
	tr, err := traces.Unmarshal([]byte(validV2Doc))
	if err != nil {
		t.Fatalf("the base document of the version-2 cases is itself invalid: %v", err)
	}
	if in := tr.Events[2].Model.Input; len(in) != 2 || in[0].Content != "hi" || in[1].Content != "hello" {
		t.Errorf("the second call's input is %+v, want hi then hello", in)
	}
	// The events may come before the version, as a hand-edited file may have them.
	moved := strings.Replace(validV2Doc, `"version":2,`, ``, 1)
	moved = strings.TrimSuffix(moved, `]}`) + `],"version":2}`
	if again, err := traces.Unmarshal([]byte(moved)); err != nil {
		t.Errorf("events before the version: %v", err)
	} else {
		assertEqualTraces(t, again, tr)
	}
	for _, tc := range malformedV2 {
		t.Run(tc.name, func(t *testing.T) {
			_, err := traces.Unmarshal([]byte(tc.doc))
			var e *traces.Error
			if !errors.As(err, &e) || e.Code != traces.CodeInvalid || !strings.Contains(e.Message, tc.want) {
				t.Fatalf("Unmarshal = %v, want an invalid error saying %q", err, tc.want)
			}
		})
	}
}

func TestEventLinesAreWhatEncodingJSONWrites(t *testing.T) {
	// The event writer is hand-made for speed; where no input reference changes an event, its
	// line must be exactly what encoding/json writes for the same Event.
	events := richTrace().Events
	for i, s := range []string{"", "plain", "quote \" backslash \\ slash /", "ctl \x00\x01\x1f\b\f\n\r\t", "<html> & co",
		"bad utf8 \xff\xfe end", "seps \u2028\u2029", "é 日本 🎉", "\x7f del"} {
		events = append(events, traces.Event{Seq: int64(100 + i), Time: t0.Add(time.Duration(i) * 1234567), Kind: traces.KindToolFinished,
			Agent: s, RunPath: []string{s}, Tool: &traces.ToolCall{Name: s, Result: s, DurationMS: []float64{1e-7, 0.5, 3, 1e21, 123456.789, 2.5e-6, 1e20, 7e-10, 42}[i]}})
	}
	var enc traces.EventEncoder
	for _, e := range events {
		line, err := enc.AppendEvent(nil, e)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(line, []byte(`"input_from"`)) {
			continue
		}
		var want bytes.Buffer
		std := json.NewEncoder(&want)
		std.SetEscapeHTML(false)
		if err := std.Encode(e); err != nil {
			t.Fatal(err)
		}
		if got := string(line) + "\n"; got != want.String() {
			t.Errorf("event %d:\n got: %s\nwant: %s", e.Seq, got, want.String())
		}
	}
}

// TestEventDecoderReadsBatches: a run's events read in arrays, as an app's posts bring them: an
// input may refer to an event of an earlier array, and an array refused (by the decoder or by
// the caller's check) leaves the decoder as it was, so the same array sent again is read.
func TestEventDecoderReadsBatches(t *testing.T) {
	tr := growingTrace(30)
	var enc traces.EventEncoder
	var rows [][]byte
	for _, e := range tr.Events {
		row, err := enc.AppendEvent(nil, e)
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, row)
	}
	if !bytes.Contains(rows[len(rows)-3], []byte(`"input_from"`)) { // the last model call's
		t.Fatal("the growing trace's rows refer to no earlier input: nothing to test")
	}
	array := func(rows [][]byte) []byte { return append(append([]byte("["), bytes.Join(rows, []byte(","))...), ']') }
	dec := traces.NewEventDecoder()
	var got []traces.Event
	refuse := errors.New("refused by the caller")
	for start := 0; start < len(rows); start += 7 {
		batch := rows[start:min(start+7, len(rows))]
		// Refused first: by the caller, then by the decoder (a reference to an event not read).
		if _, err := dec.DecodeEvents(array(batch), func([]traces.Event) error { return refuse }); err != refuse {
			t.Fatalf("batch at %d with a check that refuses: %v, want the check's error", start, err)
		}
		bad := bytes.Replace(batch[len(batch)-1], []byte(`"seq":`), []byte(`"seq":9`), 1)
		if _, err := dec.DecodeEvents(array(append(slices.Clone(batch[:len(batch)-1]), bad)), nil); err == nil {
			t.Fatalf("batch at %d with its last seq wrong was read", start)
		}
		evs, err := dec.DecodeEvents(array(batch), nil)
		if err != nil {
			t.Fatalf("batch at %d, sent again: %v", start, err)
		}
		got = append(got, evs...)
	}
	assertEqualTraces(t, traces.Trace{Events: got}, traces.Trace{Events: tr.Events})

	if evs, err := traces.NewEventDecoder().DecodeEvents([]byte("null"), nil); err != nil || evs != nil {
		t.Errorf("DecodeEvents(null) = %v, %v; want no events", evs, err)
	}
	_, err := traces.NewEventDecoder().DecodeEvents([]byte(`[{"seq":1,"time":"2026-01-02T03:04:05Z","kind":"model.started","agent":"a","model":{"id":"m1","input_from":1,"input_keep":1}}]`), nil)
	var te *traces.Error
	if !errors.As(err, &te) || te.Code != traces.CodeInvalid || !strings.Contains(err.Error(), "events[0].model.input_from is 1") {
		t.Errorf("a reference to no earlier event: %v, want an invalid-input error naming events[0].model.input_from", err)
	}
}
