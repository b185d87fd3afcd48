package traces_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/baton-dev/baton/traces"
)

var update = flag.Bool("update", false, "rewrite the golden files that tests write (never testdata/v1; testdata/v2 only while it is the current version)")

// supervisorFile is a version-1 trace that every later Baton must still read.
const supervisorFile = "testdata/v1/supervisor.trace.json"

// allKindsGolden pins what Marshal writes today for richTrace; -update rewrites it.
const allKindsGolden = "testdata/marshal/all_kinds.trace.json"

func TestRichTraceSetsEveryField(t *testing.T) {
	// The round trip below only proves what the fixture exercises: make it exercise everything.
	if unset := unsetFields(richTrace()); len(unset) > 0 {
		t.Fatalf("richTrace never sets %s: extend it so the round trip covers them", strings.Join(unset, ", "))
	}
	var kinds []traces.Kind
	for _, e := range richTrace().Events {
		kinds = append(kinds, e.Kind)
	}
	for _, k := range traces.Kinds {
		if !containsKind(kinds, k) {
			t.Errorf("richTrace has no %s event", k)
		}
	}
}

func TestMarshalRoundTrip(t *testing.T) {
	want := richTrace()
	first := mustMarshal(t, want)
	got, err := traces.Unmarshal(first)
	if err != nil {
		t.Fatalf("Unmarshal(Marshal(richTrace)): %v", err)
	}
	assertEqualTraces(t, got, want)
	if second := mustMarshal(t, got); !bytes.Equal(second, first) {
		t.Fatalf("Marshal after Unmarshal changed the bytes: %s", firstDifference(string(second), string(first)))
	}
	assertGolden(t, allKindsGolden, first)
}

func TestMarshalEmptyTrace(t *testing.T) {
	data := mustMarshal(t, traces.Trace{Run: traces.Run{ID: "r", Status: traces.StatusRunning}})
	// Readers may rely on both lists being present, never null.
	for _, want := range []string{`"agents": []`, `"events": []`, `"format": "baton.trace"`, `"version": 2`} {
		if !bytes.Contains(data, []byte(want)) {
			t.Errorf("Marshal of an empty trace lacks %s:\n%s", want, data)
		}
	}
	if !bytes.HasSuffix(data, []byte("}\n")) {
		t.Errorf("Marshal output does not end in a newline")
	}
}

func TestUnmarshalCompactsSessionValues(t *testing.T) {
	// A hand-edited file may space a value as it likes; the trace read must not depend on it.
	spaced := strings.Replace(validDoc, `"kind":"run.finished","run":{"status":"completed"}`,
		`"kind":"session.set","session":{"key":"k","value": { "html" : "<b>" ,"n": [1, 2] } }`, 1)
	spaced = strings.Replace(spaced, `]}`, `,{"seq":3,"time":"2026-01-02T03:04:07Z","kind":"run.finished","run":{"status":"completed"}}]}`, 1)
	got, err := traces.Unmarshal([]byte(spaced))
	if err != nil {
		t.Fatalf("Unmarshal: %v", err)
	}
	const want = `{"html":"\u003cb\u003e","n":[1,2]}`
	if v := string(got.Events[1].Session.Value); v != want {
		t.Fatalf("session value = %s, want %s (as Marshal writes it)", v, want)
	}
}

func TestV1SupervisorFileIsReadForever(t *testing.T) {
	data, err := os.ReadFile(supervisorFile)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := traces.Unmarshal(data)
	if err != nil {
		t.Fatalf("Unmarshal(%s): %v", supervisorFile, err)
	}
	run := tr.Run
	if run.ID != "run-20260314-093000-7f3a" || run.Flow != "supervisor" || run.Model != "scripted" || run.Status != traces.StatusCompleted {
		t.Errorf("run = %+v", run)
	}
	if want := time.Date(2026, 3, 14, 9, 30, 7, 412e6, time.UTC); run.EndedAt == nil || !run.EndedAt.Equal(want) {
		t.Errorf("run.ended_at = %v, want %v", run.EndedAt, want)
	}
	if math, ok := tr.Agent("math_agent"); !ok || math.Parent != "supervisor" || math.Relation != traces.RelationSubAgent ||
		math.Kind != traces.AgentChatModel || strings.Join(math.Tools, ",") != "add,multiply,divide" {
		t.Errorf("agent math_agent = %+v, %v", math, ok)
	}
	if len(tr.Events) != 50 {
		t.Fatalf("%d events, want 50", len(tr.Events))
	}
	t.Run("llm transfer", func(t *testing.T) {
		e := tr.Events[8]
		if e.Kind != traces.KindTransfer || *e.Transfer != (traces.Transfer{From: "supervisor", To: "research_agent", Mode: traces.TransferLLM, CallID: "call_sup_1"}) {
			t.Errorf("event 9 = %s %+v", e.Kind, e.Transfer)
		}
	})
	t.Run("deterministic transfer", func(t *testing.T) {
		e := tr.Events[22]
		if e.Kind != traces.KindTransfer || *e.Transfer != (traces.Transfer{From: "research_agent", To: "supervisor", Mode: traces.TransferDeterministic}) {
			t.Errorf("event 23 = %s %+v", e.Kind, e.Transfer)
		}
	})
	t.Run("model call", func(t *testing.T) {
		started, finished := tr.Events[11], tr.Events[12]
		if started.Kind != traces.KindModelStarted || len(started.Model.Input) != 4 || started.Model.Input[0].Role != "system" ||
			strings.Join(started.Model.Tools, ",") != "web_search" {
			t.Errorf("event 12 = %s %+v", started.Kind, started.Model)
		}
		if finished.Model.ID != started.Model.ID || *finished.Model.Usage != (traces.Usage{PromptTokens: 142, CompletionTokens: 27, TotalTokens: 169}) ||
			finished.Model.DurationMS != 778.9 || finished.Model.Output.ToolCalls[0].Name != "web_search" {
			t.Errorf("event 13 model = %+v", finished.Model)
		}
	})
	t.Run("tool call", func(t *testing.T) {
		e := tr.Events[37]
		if e.Kind != traces.KindToolFinished || e.Tool.Name != "divide" || e.Tool.CallID != "call_math_1" || e.Tool.Result != "0.07882111034955449" {
			t.Errorf("event 38 = %s %+v", e.Kind, e.Tool)
		}
	})
	t.Run("session", func(t *testing.T) {
		e := tr.Events[20]
		if e.Kind != traces.KindSessionSet || e.Session.Key != "gdp_2024_trillion_usd" || e.Session.SetBy != "research_agent" ||
			string(e.Session.Value) != `{"us":29.18,"new_york":2.3}` {
			t.Errorf("event 21 = %s %+v", e.Kind, e.Session)
		}
	})
	t.Run("run path is a history", func(t *testing.T) {
		e := tr.Events[44]
		if got := strings.Join(e.RunPath, ">"); got != "supervisor>research_agent>supervisor>math_agent>supervisor" {
			t.Errorf("event 45 run_path = %s", got)
		}
	})
	t.Run("run finished", func(t *testing.T) {
		e := tr.Events[49]
		if e.Kind != traces.KindRunFinished || e.Run.Status != traces.StatusCompleted {
			t.Errorf("event 50 = %s %+v", e.Kind, e.Run)
		}
	})
}

// TestV1FilesMigrateToV2 reads each version-1 file and writes it again: the result is the
// version-2 file of the same name (regenerated with -update while version 2 is current), and both
// files read as the same trace.
func TestV1FilesMigrateToV2(t *testing.T) {
	files, err := filepath.Glob("testdata/v1/*.trace.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no version-1 files found (%v)", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			v1 := mustRead(t, file)
			v2file := filepath.Join("testdata/v2", filepath.Base(file))
			if traces.FormatVersion == 2 {
				assertGolden(t, v2file, mustMarshal(t, v1))
			}
			assertEqualTraces(t, mustRead(t, v2file), v1)
		})
	}
}

// mustRead reads and checks a trace file.
func mustRead(tb testing.TB, file string) traces.Trace {
	tb.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		tb.Fatal(err)
	}
	tr, err := traces.Unmarshal(data)
	if err != nil {
		tb.Fatalf("Unmarshal(%s): %v", file, err)
	}
	return tr
}

// validDoc is the smallest realistic trace; the malformed cases each break one thing in it.
const validDoc = `{"format":"baton.trace","version":1,` +
	`"run":{"id":"r1","flow":"f","input":"hi","model":"scripted","status":"completed","started_at":"2026-01-02T03:04:05Z"},` +
	`"agents":[{"name":"a","kind":"chat_model"}],` +
	`"events":[{"seq":1,"time":"2026-01-02T03:04:05Z","kind":"run.started","run":{"status":"running"}},` +
	`{"seq":2,"time":"2026-01-02T03:04:06Z","kind":"run.finished","run":{"status":"completed"}}]}`

// lateMessage is an event 3 for validDoc, after its run.finished.
const lateMessage = `{"seq":3,"time":"2026-01-02T03:04:07Z","kind":"message","message":{"role":"user","content":"one more thing"}}`

// edit applies old->new replacements to validDoc in turn, each exactly once; a missing old panics
// so that a case can never silently test the valid document.
func edit(pairs ...string) string {
	doc := validDoc
	for i := 0; i < len(pairs); i += 2 {
		if strings.Count(doc, pairs[i]) != 1 {
			panic("malformed case: " + pairs[i] + " does not occur exactly once")
		}
		doc = strings.Replace(doc, pairs[i], pairs[i+1], 1)
	}
	return doc
}

var malformed = []struct {
	name string
	doc  string
	want string // a part of the error message
}{
	{"empty", "", "is empty"},
	{"not JSON", "this is not a trace", "not valid JSON"},
	{"truncated", validDoc[:len(validDoc)/2], "truncated"},
	{"array", `[]`, "it is a JSON array, want an object"},
	{"null", `null`, "it is a JSON null, want an object"},
	{"wrong format name", edit(`"format":"baton.trace"`, `"format":"otel.trace"`), `format is "otel.trace", want "baton.trace"`},
	{"format not a string", edit(`"format":"baton.trace"`, `"format":1`), `field "format" holds a JSON number, want a string`},
	{"format null", edit(`"format":"baton.trace"`, `"format":null`), `field "format" holds a JSON null, want a string`},
	{"missing format", edit(`"format":"baton.trace",`, ``), `no "format" field`},
	{"missing version", edit(`"version":1,`, ``), `no "version" field`},
	{"version 0", edit(`"version":1`, `"version":0`), "version 0 is not supported"},
	{"version 3", edit(`"version":1`, `"version":3`), "version 3 is not supported"},
	{"version 1.5", edit(`"version":1`, `"version":1.5`), `"version" is 1.5, want an integer`},
	{"version not an integer", edit(`"version":1`, `"version":"1"`), `field "version" holds a JSON string, want an integer`},
	{"unknown top-level field", edit(`"version":1,`, `"version":1,"colour":"red",`), `unknown field "colour"`},
	{"unknown event field", edit(`"seq":2,`, `"seq":2,"colour":"red",`), `unknown field "events[1].colour"`},
	{"unknown payload field", edit(`"run":{"status":"completed"}}`, `"run":{"status":"completed","colour":1}}`), `unknown field "events[1].run.colour"`},
	{"field name in another case", edit(`"seq":2`, `"Seq":2`), `unknown field "events[1].Seq"`},
	{"seq gap", edit(`"seq":2`, `"seq":3`), "events[1].seq is 3, want 2"},
	{"duplicate seq", edit(`"seq":2`, `"seq":1`), "events[1].seq is 1, want 2"},
	{"seq not starting at 1", edit(`"seq":2`, `"seq":3`, `"seq":1`, `"seq":2`), "events[0].seq is 2, want 1"},
	{"unknown kind", edit(`"run.finished"`, `"run.paused"`), `events[1].kind "run.paused" is not a known event kind`},
	{"kind without its payload", edit(`,"run":{"status":"completed"}}`, `}`), `events[1] (run.finished) has no "run" payload`},
	{"kind with another payload", edit(`"kind":"run.finished",`, `"kind":"run.finished","exit":{},`), `events[1] (run.finished) also has a "exit" payload`},
	{"bad run status", edit(`"status":"completed","started_at"`, `"status":"done","started_at"`), `run.status "done" is not one of`},
	{"bad event status", edit(`"run":{"status":"completed"}}`, `"run":{"status":"over"}}`), `events[1].run.status "over" is not one of`},
	{"empty run id", edit(`"id":"r1"`, `"id":""`), "run.id is empty"},
	{"empty agent name", edit(`{"name":"a",`, `{"name":"",`), "agents[0].name is empty"},
	{"duplicate agent name", edit(`"agents":[{"name":"a","kind":"chat_model"}]`, `"agents":[{"name":"a","kind":"chat_model"},{"name":"a","kind":"loop"}]`), `agents[1]: agent "a" appears twice`},
	{"wrong type for run field", edit(`"id":"r1"`, `"id":42`), `field "run.id" holds a JSON number, want a string`},
	{"wrong type for event field", edit(`"seq":2`, `"seq":"2"`), `field "events[1].seq" holds a JSON string, want an integer`},
	{"bad time", edit(`"started_at":"2026-01-02T03:04:05Z"`, `"started_at":"yesterday"`), `time "yesterday" is not an RFC 3339 time`},
	{"event after run.finished", edit(`]}`, `,`+lateMessage+`]}`), "events[2] (message) comes after run.finished: only a run that finished interrupted goes on"},
	{"interrupted run goes on without resumed", edit(`"run":{"status":"completed"}}`, `"run":{"status":"interrupted"}}`, `]}`, `,`+lateMessage+`]}`), "events[2] (message) comes after run.finished"},
	{"lost count 0", edit(`"kind":"run.finished","run":{"status":"completed"}`, `"kind":"lost","lost":{"count":0}`), "events[1].lost.count is 0"},
	{"run id with a slash", edit(`"id":"r1"`, `"id":"r/1?x"`), `run.id "r/1?x" holds '/': use only letters, digits`},
	{"run id too long", edit(`"id":"r1"`, `"id":"`+strings.Repeat("r", 129)+`"`), "run.id is 129 bytes long: keep it to 128"},
	{"flow too long", edit(`"flow":"f"`, `"flow":"`+strings.Repeat("f", 257)+`"`), "run.flow is 257 bytes long: keep it to 256"},
	{"flow on two lines", edit(`"flow":"f"`, `"flow":"f\r\nSet-Cookie: x"`), "run.flow \"f\\r\\nSet-Cookie: x\" holds the control character U+000D"},
	{"conversation with a space", edit(`"model":"scripted"`, `"model":"scripted","conversation":"c 1"`), `run.conversation "c 1" holds ' '`},
	{"agent kind unknown", edit(`"kind":"chat_model"`, `"kind":"<script>"`), `agents[0].kind "<script>" is not one of chat_model`},
	{"agent kind missing", edit(`,"kind":"chat_model"`, ``), `agents[0].kind "" is not one of`},
	{"agent relation unknown", edit(`"kind":"chat_model"`, `"kind":"chat_model","relation":"cousin"`), `agents[0].relation "cousin" is not subagent or agenttool`},
	{"agent parent unknown", edit(`"agents":[{"name":"a","kind":"chat_model"}]`, `"agents":[{"name":"a","kind":"chat_model"},{"name":"b","kind":"chat_model","parent":"ghost","relation":"subagent"}]`),
		`agents[1]: agent "b" names parent "ghost", which is not among the agents`},
	{"agent its own parent", edit(`"agents":[{"name":"a","kind":"chat_model"}]`, `"agents":[{"name":"a","kind":"chat_model","parent":"a","relation":"subagent"}]`),
		`agents[0]: agent "a" is its own ancestor (parents a -> a)`},
	{"agents in a loop", edit(`"agents":[{"name":"a","kind":"chat_model"}]`, `"agents":[{"name":"r","kind":"chat_model"},{"name":"a","kind":"chat_model","parent":"b","relation":"subagent"},{"name":"b","kind":"chat_model","parent":"a","relation":"subagent"}]`),
		`agents[1]: agent "a" is its own ancestor (parents a -> b -> a)`},
	{"agents null", edit(`"agents":[{"name":"a","kind":"chat_model"}]`, `"agents":null`), `"agents" is null: want an array`},
	{"agents missing", edit(`"agents":[{"name":"a","kind":"chat_model"}],`, ``), `no "agents" field`},
	{"events null", edit(`"events":[`, `"events":null,"x":[`), `"events" is null: want an array`},
	{"two run.started", edit(`"kind":"run.finished","run":{"status":"completed"}`, `"kind":"run.started","run":{"status":"running"}`, `"status":"completed","started_at"`, `"status":"running","started_at"`), "events[1] is a second run.started: a run starts once"},
	{"status the events do not tell", edit(`"status":"completed","started_at"`, `"status":"failed","started_at"`), "run.status is failed, but its events say completed"},
	{"finished run without run.finished", edit(`,{"seq":2,"time":"2026-01-02T03:04:06Z","kind":"run.finished","run":{"status":"completed"}}`, ``), "run.status is completed, but its events say running"},
	{"trailing data", validDoc + "\n{}", "data after its closing brace"},
	{"trailing garbage", validDoc + "x", "data after its closing brace"},
}

func TestUnmarshalReadsAResumedRun(t *testing.T) {
	// An interrupted run that was resumed goes on after its first run.finished, with resumed.
	doc := edit(`"run":{"status":"completed"}}`, `"run":{"status":"interrupted"}}`, `]}`,
		`,{"seq":3,"time":"2026-01-02T03:05:00Z","kind":"resumed","interrupt":{"id":"int-1"}},`+
			`{"seq":4,"time":"2026-01-02T03:05:01Z","kind":"run.finished","run":{"status":"completed"}}]}`)
	tr, err := traces.Unmarshal([]byte(doc))
	if err != nil {
		t.Fatalf("Unmarshal of a resumed run: %v", err)
	}
	if len(tr.Events) != 4 || tr.Events[2].Kind != traces.KindResumed {
		t.Errorf("events %+v, want 4 with resumed third", tr.Events)
	}
}

func TestValidateEventNamesTheEvent(t *testing.T) {
	for _, tc := range []struct {
		name string
		e    traces.Event
		want string
	}{
		{"unknown kind", traces.Event{Kind: "run.paused"}, `events[3].kind "run.paused" is not a known event kind`},
		{"missing payload", traces.Event{Kind: traces.KindToolFinished}, `events[3] (tool.finished) has no "tool" payload`},
		{"two payloads", traces.Event{Kind: traces.KindLost, Lost: &traces.Lost{Count: 1}, Exit: &traces.Exit{}}, `events[3] (lost) also has a "exit" payload`},
		{"lost nothing", traces.Event{Kind: traces.KindLost, Lost: &traces.Lost{}}, "events[3].lost.count is 0"},
		{"bad status", traces.Event{Kind: traces.KindRunFinished, Run: &traces.RunMark{Status: "done"}}, `events[3].run.status "done"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := traces.ValidateEvent(3, tc.e)
			if traces.ErrorCode(err) != traces.CodeInvalid || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ValidateEvent = %v, want an invalid error saying %q", err, tc.want)
			}
		})
	}
	if err := traces.ValidateEvent(0, traces.Event{Kind: traces.KindLost, Lost: &traces.Lost{Count: 2}}); err != nil {
		t.Errorf("a valid lost event: %v", err)
	}
}

func TestDecodeJSONReadsExactly(t *testing.T) {
	type batch struct {
		Events []traces.Event `json:"events"`
	}
	for _, tc := range []struct {
		name, body, want string
	}{
		{"unknown field with its path", `{"events":[{"seq":1,"kind":"lost","lost":{"count":1,"colour":2}}]}`, `request body has an unknown field "events[0].lost.colour"`},
		{"name in another case", `{"Events":[]}`, `request body has an unknown field "Events"`},
		{"wrong type", `{"events":[{"seq":"1"}]}`, `request body: field "events[0].seq" holds a JSON string, want an integer`},
		{"not JSON", `{"events":`, "request body cannot be read"},
		{"not an object", `[1]`, "request body cannot be read: it is a JSON array, want an object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b batch
			err := traces.DecodeJSON([]byte(tc.body), "request body", &b)
			if traces.ErrorCode(err) != traces.CodeInvalid || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("DecodeJSON = %v, want an invalid error saying %q", err, tc.want)
			}
		})
	}
	var b batch
	if err := traces.DecodeJSON([]byte(`{"events":[{"seq":7,"time":"2026-01-02T03:04:05Z","kind":"lost","lost":{"count":3}}]}`), "request body", &b); err != nil ||
		len(b.Events) != 1 || b.Events[0].Seq != 7 || b.Events[0].Lost.Count != 3 {
		t.Errorf("DecodeJSON = %+v, %v", b, err)
	}
}

func TestUnmarshalRejectsMalformed(t *testing.T) {
	if _, err := traces.Unmarshal([]byte(validDoc)); err != nil {
		t.Fatalf("the base document of the malformed cases is itself invalid: %v", err)
	}
	for _, tc := range malformed {
		t.Run(tc.name, func(t *testing.T) {
			_, err := traces.Unmarshal([]byte(tc.doc))
			var e *traces.Error
			if !errors.As(err, &e) || e.Code != traces.CodeInvalid {
				t.Fatalf("Unmarshal error = %#v, want a *traces.Error with CodeInvalid", err)
			}
			t.Log(e.Message)
			if !strings.Contains(e.Message, tc.want) {
				t.Errorf("message %q does not say %q", e.Message, tc.want)
			}
			// The message is for a user: no Go type names.
			for _, leak := range []string{"traces.", "struct", "Go value", "int64", "json:"} {
				if strings.Contains(e.Message, leak) {
					t.Errorf("message %q shows Go internals (%q)", e.Message, leak)
				}
			}
		})
	}
}

// FuzzUnmarshal checks that Unmarshal never panics, fails only with CodeInvalid, accepts nothing
// that is not JSON, and that whatever it accepts survives Marshal and a second Unmarshal
// unchanged. The seeds are large (the golden file is 40 kB), so bound minimisation or the fuzzer
// stalls on it:
//
//	go test -run '^$' -fuzz FuzzUnmarshal -fuzztime 60s -fuzzminimizetime 5s ./traces/
//
// testdata/fuzz/FuzzUnmarshal keeps inputs that once broke the round trip, and version-2 input
// references for the fuzzer to mutate.
func FuzzUnmarshal(f *testing.F) {
	for _, file := range []string{supervisorFile, "testdata/v2/supervisor.trace.json"} {
		golden, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(golden)
	}
	f.Add([]byte(validDoc))
	f.Add([]byte(validV2Doc))
	f.Add(mustMarshal(f, richTrace()))
	f.Add(mustMarshal(f, growingTrace(5)))
	for _, tc := range malformed {
		f.Add([]byte(tc.doc))
	}
	for _, tc := range malformedV2 {
		f.Add([]byte(tc.doc))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		first, err := traces.Unmarshal(data)
		if err != nil {
			if code := traces.ErrorCode(err); code != traces.CodeInvalid {
				t.Fatalf("Unmarshal error code = %q, want invalid: %v", code, err)
			}
			return
		}
		if !json.Valid(data) {
			t.Fatalf("Unmarshal accepted a document that is not JSON")
		}
		out := mustMarshal(t, first)
		second, err := traces.Unmarshal(out)
		if err != nil {
			t.Fatalf("Marshal wrote a trace Unmarshal rejects: %v\n%s", err, out)
		}
		assertEqualTraces(t, second, first)
		if again := mustMarshal(t, second); !bytes.Equal(again, out) {
			t.Fatalf("Marshal is not stable: %s", firstDifference(string(again), string(out)))
		}
	})
}

func mustMarshal(tb testing.TB, t traces.Trace) []byte {
	tb.Helper()
	data, err := traces.Marshal(t)
	if err != nil {
		tb.Fatalf("Marshal: %v", err)
	}
	if !json.Valid(data) {
		tb.Fatalf("Marshal wrote invalid JSON")
	}
	return data
}

// assertGolden compares got with the golden file, or rewrites the file under -update.
func assertGolden(tb testing.TB, file string, got []byte) {
	tb.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(file, got, 0o644); err != nil {
			tb.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		tb.Fatalf("%v (run the test with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		tb.Fatalf("%s is out of date (rerun with -update if the change is intended): %s", file, firstDifference(string(got), string(want)))
	}
}

func containsKind(kinds []traces.Kind, k traces.Kind) bool {
	for _, have := range kinds {
		if have == k {
			return true
		}
	}
	return false
}

// TestUnmarshalSharesAsRecorded: a trace read back shares what a recording shares, so that it
// takes no more memory than the run recorded live: one copy of each string (a tool's result and
// the message that carries it, arguments that needed escapes), the model's reply and the message
// event that repeats it as one message, and slices without spare room.
func TestUnmarshalSharesAsRecorded(t *testing.T) {
	data, err := traces.Marshal(richTrace())
	if err != nil {
		t.Fatal(err)
	}
	tr, err := traces.Unmarshal(data)
	if err != nil {
		t.Fatal(err)
	}
	ev := tr.Events
	reply, said := ev[3].Model.Output, ev[4].Message
	if reply == nil || reply != said {
		t.Errorf("the model's reply (#4) and the message event that repeats it (#5) are two messages, want one")
	}
	if tools := ev[2].Model.Tools; cap(tools) != len(tools) || cap(reply.ToolCalls) != len(reply.ToolCalls) {
		t.Errorf("slices read back have spare room: tools %d of %d, tool calls %d of %d", len(tools), cap(tools), len(reply.ToolCalls), cap(reply.ToolCalls))
	}
	// Strings are shared through a table of the ones read lately, hashed with a seed of its own
	// each time: a string pushed out between two reads is copied again (a few times in ten
	// thousand reads of this trace). Shared in any of three reads, they are shared by design.
	var copies []string
	for read := range 3 {
		if read > 0 {
			if tr, err = traces.Unmarshal(data); err != nil {
				t.Fatal(err)
			}
			ev = tr.Events
		}
		copies = copies[:0]
		same := func(what, a, b string) {
			if a != b || unsafe.StringData(a) != unsafe.StringData(b) {
				copies = append(copies, fmt.Sprintf("%s: %q and %q are two copies, want one", what, a, b))
			}
		}
		same("a tool's result and its message", ev[6].Tool.Result, ev[7].Message.Content)
		same("escaped arguments of the call and of the tool", ev[3].Model.Output.ToolCalls[0].Arguments, ev[5].Tool.Arguments)
		same("an agent's name", ev[1].Agent, ev[2].Agent)
		if len(copies) == 0 {
			return
		}
	}
	for _, c := range copies {
		t.Error(c)
	}
}

// TestUnmarshalPacksShortStrings: the events' short strings read back are copied side by side
// into shared blocks rather than allocated one by one, which rounds each up to its size class (a
// 22-byte tool name takes 24 bytes alone); a long string is a copy of its own.
func TestUnmarshalPacksShortStrings(t *testing.T) {
	at := time.Date(2026, 3, 14, 9, 30, 0, 0, time.UTC)
	long := strings.Repeat("long arguments ", 100)
	data := mustMarshal(t, traces.Trace{
		Run: traces.Run{ID: "r1", Status: traces.StatusRunning, StartedAt: at},
		Events: []traces.Event{{Seq: 1, Time: at, Kind: traces.KindToolStarted, Agent: "weather_agent",
			Tool: &traces.ToolCall{Name: "lookup_weather_station", CallID: "call_0123456789abcdefgh", Arguments: long}}},
	})
	tr, err := traces.Unmarshal(data)
	if err != nil {
		t.Fatal(err)
	}
	tool := tr.Events[0].Tool
	follows := func(a, b string) bool {
		return unsafe.Add(unsafe.Pointer(unsafe.StringData(a)), len(a)) == unsafe.Pointer(unsafe.StringData(b))
	}
	if !follows(tool.Name, tool.CallID) {
		t.Errorf("the tool's name and call id, read one after the other, are not side by side: want them packed in one block")
	}
	if follows(tool.CallID, tool.Arguments) {
		t.Errorf("a %d-byte string was packed with the short ones: want it a copy of its own", len(long))
	}
}

// TestUnmarshalDecodesStringsAsEncodingJSON: strings with escapes, in the run and in events
// (where they are packed), read as encoding/json reads them, invalid UTF-8 and lone surrogates
// included, and two spellings of one string are one string.
func TestUnmarshalDecodesStringsAsEncodingJSON(t *testing.T) {
	for _, quoted := range []string{
		`"tab\tquote\"slash\/back\\"`, `"caf\u00e9 \ud83d\ude00"`, `"lone \ud800 surrogate"`,
		"\"raw \xff byte\"", `"line\nfeed\r\b\f"`, `"café"`,
	} {
		var want string
		if err := json.Unmarshal([]byte(quoted), &want); err != nil {
			t.Fatal(err)
		}
		doc := edit(`"input":"hi"`, `"input":`+quoted, `"run":{"status":"running"}`, `"run":{"input":`+quoted+`,"status":"running"}`)
		tr, err := traces.Unmarshal([]byte(doc))
		if err != nil {
			t.Fatalf("%s: %v", quoted, err)
		}
		if got := tr.Run.Input; got != want {
			t.Errorf("run.input %s read as %q, want %q", quoted, got, want)
		}
		if got := tr.Events[0].Run.Input; got != want {
			t.Errorf("events[0].run.input %s read as %q, want %q", quoted, got, want)
		}
	}
	// The strings read lately are shared through a table of a few buckets of two, hashed with a
	// seed of its own each time (a cache: a string pushed out between two reads is copied
	// again, about once in a thousand reads of this document). Shared in any of three reads, the
	// two spellings were looked up as one string; never, and they were told apart.
	doc := edit(`"input":"hi"`, `"input":"caf\u00e9"`, `"run":{"status":"running"}`, `"run":{"input":"café","status":"running"}`)
	var a, b string
	for range 3 {
		tr, err := traces.Unmarshal([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		if a, b = tr.Run.Input, tr.Events[0].Run.Input; unsafe.StringData(a) == unsafe.StringData(b) {
			return
		}
	}
	t.Errorf("%q escaped and %q plain are two copies in three reads, want one", a, b)
}

// Unmarshal reads the events into one array sized by counting "seq" in the file: a count too
// large (strings that say "seq") or too small (field names spelled with escapes) reads the same
// events, into an array with no spare room.
func TestUnmarshalEventsWhateverSeqCounts(t *testing.T) {
	want := richTrace()
	data := mustMarshal(t, want)
	named := richTrace()
	named.Run.Model = "seq"
	for _, c := range []struct {
		name string
		file []byte
		want traces.Trace
	}{
		{"as written", data, want},
		{"more", mustMarshal(t, named), named},
		{"fewer", bytes.ReplaceAll(data, []byte(`"seq"`), []byte(`"\u0073eq"`)), want},
	} {
		got, err := traces.Unmarshal(c.file)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		assertEqualTraces(t, got, c.want)
		if cap(got.Events) != len(got.Events) {
			t.Errorf("%s: %d events in an array of %d", c.name, len(got.Events), cap(got.Events))
		}
	}
}
