package traces_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/baton-dev/baton/traces"
)

// branchingDoc is a version-2 trace of n model calls where each call keeps all but the last
// message of the call before and adds two of its own: every input differs from the one before,
// so none can be shared, and the inputs written whole grow as n². Each message holds pad bytes.
func branchingDoc(n, pad int) []byte {
	doc, _ := referencesDoc(n, 1, 1, 2, pad)
	return doc
}

// expandedSize is the InputSize of every input of tr, written out whole, summed: what inputs
// would take were none shared.
func expandedSize(tr traces.Trace) int64 {
	var n int64
	for _, e := range tr.Events {
		if e.Model != nil {
			n += traces.InputSize(e.Model.Input)
		}
		if e.AgentRun != nil {
			n += traces.InputSize(e.AgentRun.Input)
		}
	}
	return n
}

// allocatedSize is MessageShare for each message of the arrays tr's inputs hold, each array
// counted once whatever the number of inputs sharing it: at most what the budget counted.
func allocatedSize(tr traces.Trace) int64 {
	arrays := make(map[*traces.Message]int)
	note := func(in []traces.Message) {
		if len(in) > 0 {
			arrays[&in[0]] = max(arrays[&in[0]], len(in))
		}
	}
	for _, e := range tr.Events {
		if e.Model != nil {
			note(e.Model.Input)
		}
		if e.AgentRun != nil {
			note(e.AgentRun.Input)
		}
	}
	var n int64
	for _, l := range arrays {
		n += traces.MessageShare * int64(l)
	}
	return n
}

const refusal = "input references would copy more than"

// TestUnmarshalRefusesInputsThatExpandPastTheBudget: a trace of a few hundred kilobytes whose
// every input branches off the one before, so that its references would copy gigabytes of
// messages, is refused, saying why, before it is expanded; a smaller one of the same shape is
// read.
func TestUnmarshalRefusesInputsThatExpandPastTheBudget(t *testing.T) {
	small := branchingDoc(200, 10)
	tr, err := traces.Unmarshal(small)
	if err != nil {
		t.Fatalf("a trace of %d bytes expanding to a few megabytes: %v", len(small), err)
	}
	if n := expandedSize(tr); n < 1<<20 {
		t.Fatalf("the small trace expands to %d bytes: not the quadratic case", n)
	}
	big := branchingDoc(5000, 10) // about 0.5 MB, expanding to about 1 GB
	_, err = traces.Unmarshal(big)
	if traces.ErrorCode(err) != traces.CodeInvalid || !strings.Contains(err.Error(), refusal) {
		t.Fatalf("Unmarshal of %d bytes expanding to about 1 GB: %v, want it refused for its expansion", len(big), err)
	}
	t.Log(err)
}

// TestDecodeEventsBudgetsTheWholeSession: an app's posts count against one budget, the
// session's, however it cuts its events into posts; a refused post changes nothing, so a smaller
// one goes on.
func TestDecodeEventsBudgetsTheWholeSession(t *testing.T) {
	_, lines := referencesDoc(5000, 1, 1, 2, 10)
	dec := traces.NewEventDecoder()
	accepted := 0
	for i := 0; i < len(lines); i += 100 {
		post := "[" + strings.Join(lines[i:min(i+100, len(lines))], ",") + "]"
		if _, err := dec.DecodeEvents([]byte(post), nil); err != nil {
			if !strings.Contains(err.Error(), refusal) {
				t.Fatalf("post %d: %v", i/100, err)
			}
			// The refused post left the session where it was: its first event is still next.
			if _, err := dec.DecodeEvents([]byte("["+lines[i]+"]"), nil); err != nil {
				t.Fatalf("after a refused post, its first event alone: %v", err)
			}
			t.Logf("refused at post %d (event %d): %v", i/100, i+1, err)
			return
		}
		accepted += 100
	}
	t.Fatalf("all %d events of a session expanding to about 1 GB were accepted", accepted)
}

// TestGrowingConversationIsAcceptedWhole: a conversation of 5,000 model calls, each fed the
// whole history before it and one message more, expands quadratically once its inputs are
// written out whole (about 1.3 GB here) but shares one array of messages: Unmarshal and an
// EventDecoder fed it in posts take it all, and what its inputs allocate stays linear.
func TestGrowingConversationIsAcceptedWhole(t *testing.T) {
	doc, lines := referencesDoc(5000, 1, 0, 1, 100)
	tr, err := traces.Unmarshal(doc)
	if err != nil {
		t.Fatalf("Unmarshal of a growing conversation of %d bytes: %v", len(doc), err)
	}
	if whole := expandedSize(tr); whole < 1<<30 {
		t.Fatalf("its inputs written out whole take %d bytes: not the quadratic case", whole)
	}
	if n := allocatedSize(tr); n > 4*traces.MessageShare*5000 {
		t.Errorf("its inputs hold arrays of %d bytes for 5,000 messages: they are not shared", n)
	}
	dec := traces.NewEventDecoder()
	for i := 0; i < len(lines); i += 100 {
		post := "[" + strings.Join(lines[i:min(i+100, len(lines))], ",") + "]"
		if _, err := dec.DecodeEvents([]byte(post), nil); err != nil {
			t.Fatalf("post %d: %v", i/100, err)
		}
	}
}

// FuzzExpansionBound: whatever input references a trace makes, what Unmarshal (the importer)
// and an EventDecoder fed the same events in posts (ingestion) accept allocates no more than
// the budget of the bytes they read: MinExpandBudget plus ExpandPerByte for each byte, at most
// MaxExpandedInput. The fuzzer picks how many calls, how many messages each keeps of which
// earlier call, and how much each adds.
//
//	go test -run '^$' -fuzz FuzzExpansionBound -fuzztime 60s ./traces/
func FuzzExpansionBound(f *testing.F) {
	f.Add(uint16(200), uint8(1), uint8(1), uint8(0), uint16(10), uint8(50))
	f.Add(uint16(3000), uint8(1), uint8(1), uint8(2), uint16(10), uint8(100))
	f.Add(uint16(4000), uint8(3), uint8(2), uint8(1), uint16(200), uint8(7))
	f.Add(uint16(6000), uint8(1), uint8(0), uint8(3), uint16(1), uint8(255))
	f.Fuzz(func(t *testing.T, calls uint16, back, drop, tail uint8, pad uint16, perPost uint8) {
		// Traces of up to a few megabytes: past that the cap, not the ratio, bounds them.
		doc, lines := referencesDoc(int(calls)%4000, int(back)%64, int(drop)%8, int(tail)%8, int(pad)%512)
		budget := func(read int) int64 {
			return min(traces.MaxExpandedInput, traces.MinExpandBudget+traces.ExpandPerByte*int64(read))
		}
		if tr, err := traces.Unmarshal(doc); err == nil {
			if n := allocatedSize(tr); n > budget(len(doc)) {
				t.Fatalf("Unmarshal accepted %d bytes allocating %d for inputs, past the budget %d", len(doc), n, budget(len(doc)))
			}
		} else if traces.ErrorCode(err) != traces.CodeInvalid {
			t.Fatalf("Unmarshal: %v", err)
		}
		dec := traces.NewEventDecoder()
		var accepted traces.Trace
		read, step := 0, max(int(perPost), 1)
		for i := 0; i < len(lines); i += step {
			post := []byte("[" + strings.Join(lines[i:min(i+step, len(lines))], ",") + "]")
			events, err := dec.DecodeEvents(post, nil)
			if err != nil {
				break
			}
			read += len(post)
			accepted.Events = append(accepted.Events, events...)
			if n := allocatedSize(accepted); n > budget(read) {
				t.Fatalf("the decoder accepted %d bytes of posts allocating %d for inputs, past the budget %d", read, n, budget(read))
			}
		}
	})
}

// referencesDoc is a version-2 trace of calls model calls, each referring to the call back calls
// before it (when there is one), keeping all its messages but drop, and adding tail messages of
// pad bytes; with its event lines for posting.
func referencesDoc(calls, back, drop, tail, pad int) ([]byte, []string) {
	back = max(back, 1)
	tail = max(tail, 1)
	content := strings.Repeat("y", pad)
	lines := []string{`{"seq":1,"time":"2026-01-02T03:04:05Z","kind":"run.started","run":{"status":"running"}}`}
	lens := []int{0} // messages of each event's input, by seq-1
	for i := range calls {
		seq := i + 2
		var b strings.Builder
		fmt.Fprintf(&b, `{"seq":%d,"time":"2026-01-02T03:04:05Z","kind":"model.started","agent":"a","model":{"id":"m%d",`, seq, seq)
		n := 0
		if from := seq - back; from >= 2 && lens[from-1]-drop >= 1 {
			keep := lens[from-1] - drop
			fmt.Fprintf(&b, `"input_from":%d,"input_keep":%d,`, from, keep)
			n = keep
		}
		b.WriteString(`"input":[`)
		for j := range tail {
			if j > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"role":"user","content":"%d.%d %s"}`, i, j, content)
		}
		b.WriteString("]}}")
		lines = append(lines, b.String())
		lens = append(lens, n+tail)
	}
	doc := `{"format":"baton.trace","version":2,"run":{"id":"r-fuzz","flow":"f","input":"","model":"m","status":"running","started_at":"2026-01-02T03:04:05Z"},"agents":[{"name":"a","kind":"chat_model"}],"events":[` +
		strings.Join(lines, ",\n") + "]}\n"
	return []byte(doc), lines
}

// BenchmarkUnmarshalBranching: memory against trace size for the worst shape of references (no
// input can be shared), up to the largest the budget takes; alloc-bytes/in-byte is the bound
// per input byte, expanded/in-byte what the inputs written out whole would take, arrays/in-byte
// the arrays of messages they hold (at MessageShare a message).
//
//	go test ./traces -run '^$' -bench UnmarshalBranching -benchmem -benchtime 3x -count 3
func BenchmarkUnmarshalBranching(b *testing.B) {
	for _, calls := range []int{250, 500, 1000, 1400} {
		doc := branchingDoc(calls, 10)
		b.Run(fmt.Sprintf("calls=%d/bytes=%d", calls, len(doc)), func(b *testing.B) {
			b.ReportAllocs()
			var expanded, allocated int64
			for b.Loop() {
				tr, err := traces.Unmarshal(doc)
				if err != nil {
					b.Fatal(err)
				}
				expanded, allocated = expandedSize(tr), allocatedSize(tr)
			}
			b.ReportMetric(float64(expanded)/float64(len(doc)), "expanded/in-byte")
			b.ReportMetric(float64(allocated)/float64(len(doc)), "arrays/in-byte")
		})
	}
}
