package realapps_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/baton-dev/baton/internal/realapps"
	"github.com/baton-dev/baton/traces"
	"github.com/baton-dev/baton/web"
)

// fact is one thing a run told, in the terms both sides share: a message an agent emitted (an
// assistant reply or a tool result), or an action (transfer, exit, breakloop, interrupt), or an
// error. The Runner's stream gives one or two per event (the message, then the action); the
// trace one per message, transfer, exit, breakloop, interrupted or error event.
type fact struct {
	agent string
	what  string // "message", "transfer", "exit", "breakloop", "interrupt", "error"
	// detail is what must be equal on both sides: role, text and tool names; a transfer's target;
	// a breakloop's breaker; an interrupt's id; an error's text.
	detail string
	// where says where the fact is on its side: "stream event 7 of resume 1" or "trace seq 41".
	where string
	// path is the stream event's run path: two stream facts are ordered when one's path extends
	// the other's (parallel branches are not).
	path []string
}

func (f fact) String() string {
	if f.detail == "" {
		return fmt.Sprintf("%s by %s at %v (%s)", f.what, f.agent, f.path, f.where)
	}
	return fmt.Sprintf("%s by %s %s at %v (%s)", f.what, f.agent, f.detail, f.path, f.where)
}

// key groups the facts that must pair up one to one, in order: an agent's own, or, for
// interrupts and errors, the run's (eino reports one interrupt for the whole run, whichever
// agent raised it, and errors may come without an agent).
func (f fact) key() string {
	if f.what == "interrupt" || f.what == "error" {
		return "*" + f.what
	}
	return f.agent
}

// streamFacts returns the facts of a turn's events, as the app read them.
func streamFacts(turn realapps.Turn) []fact {
	var out []fact
	for p, part := range turn.Parts {
		for i, e := range part.Events {
			where := fmt.Sprintf("stream event %d of %s", i+1, partName(p))
			add := func(what, detail string) {
				out = append(out, fact{agent: e.Agent, what: what, detail: detail, where: where, path: e.RunPath})
			}
			if e.Role != "" {
				add("message", messageDetail(e.Role, e.Text, e.ToolCalls, e.ToolName))
			}
			switch {
			case e.TransferTo != "":
				add("transfer", "to "+e.TransferTo)
			case e.Exit:
				add("exit", "")
			case e.BreakLoop != "":
				add("breakloop", "from "+e.BreakLoop)
			case e.Interrupt != "":
				add("interrupt", e.Interrupt)
			}
			if e.Error != "" {
				add("error", fmt.Sprintf("%q", e.Error))
			}
		}
	}
	return out
}

func partName(p int) string {
	if p == 0 {
		return "the query"
	}
	return fmt.Sprintf("resume %d", p)
}

// traceFacts returns the facts of a trace's events.
func traceFacts(tr traces.Trace) []fact {
	var out []fact
	for _, e := range tr.Events {
		f := fact{agent: e.Agent, where: fmt.Sprintf("trace seq %d", e.Seq), path: e.RunPath}
		switch {
		case e.Kind == traces.KindMessage && e.Message != nil:
			var calls []string
			for _, c := range e.Message.ToolCalls {
				calls = append(calls, c.Name)
			}
			f.what, f.detail = "message", messageDetail(e.Message.Role, e.Message.Content, calls, e.Message.ToolName)
		case e.Kind == traces.KindTransfer && e.Transfer != nil:
			f.agent, f.what, f.detail = e.Transfer.From, "transfer", "to "+e.Transfer.To
		case e.Kind == traces.KindExit:
			f.what = "exit"
		case e.Kind == traces.KindBreakLoop && e.BreakLoop != nil:
			f.what, f.detail = "breakloop", "from "+e.BreakLoop.From
		case e.Kind == traces.KindInterrupted && e.Interrupt != nil:
			f.what, f.detail = "interrupt", e.Interrupt.ID
		case e.Kind == traces.KindError && e.Error != nil:
			f.what, f.detail = "error", fmt.Sprintf("%q", e.Error.Message)
		default:
			continue
		}
		out = append(out, f)
	}
	return out
}

func messageDetail(role, text string, calls []string, toolName string) string {
	s := fmt.Sprintf("%s %q", role, text)
	if len(calls) > 0 {
		s += " calling " + strings.Join(calls, ", ")
	}
	if toolName != "" {
		s += " from tool " + toolName
	}
	return s
}

// storyDiff compares what the app's stream told with what the trace holds and describes the
// first difference, or returns "". Every stream fact must have its counterpart in the trace, by
// the same agent, and the trace no other fact by an agent the stream shows (agents run as tools
// may tell more, from callbacks); counterparts must keep the stream's order wherever the stream
// fixes one (parallel branches are free).
func storyDiff(stream, trace []fact) string {
	onStream := map[string]bool{}
	for _, f := range stream {
		onStream[f.key()] = true
	}
	var shown []fact
	for _, f := range trace {
		if onStream[f.key()] || strings.HasPrefix(f.key(), "*") {
			shown = append(shown, f)
		}
	}
	pair, paired := pairFacts(stream, shown)
	for i := range stream {
		if pair[i] < 0 {
			return missingDiff(stream, shown, pair, paired, i) + whereMissing(stream, shown, pair, i)
		}
	}
	for j, f := range shown {
		if !paired[j] {
			return fmt.Sprintf("extra in the trace: %s%s", f, after(shown, paired, j))
		}
	}
	for i := range stream {
		for j := i + 1; j < len(stream); j++ {
			if ordered(stream[i].path, stream[j].path) && pair[i] > pair[j] {
				return fmt.Sprintf("out of order: the stream has %s before %s; the trace has them the other way round (%s, %s)",
					stream[i], stream[j], shown[pair[i]].where, shown[pair[j]].where)
			}
		}
	}
	return ""
}

// pairFacts pairs the stream's facts with the trace's, key by key, along their longest common
// subsequence: pair[i] is the index in shown of stream fact i's counterpart, or -1; paired[j]
// says whether shown[j] has one.
func pairFacts(stream, shown []fact) (pair []int, paired []bool) {
	byKey := func(fs []fact) map[string][]int {
		m := map[string][]int{}
		for i, f := range fs {
			m[f.key()] = append(m[f.key()], i)
		}
		return m
	}
	streamBy, shownBy := byKey(stream), byKey(shown)
	pair, paired = make([]int, len(stream)), make([]bool, len(shown))
	for k, a := range streamBy {
		b := shownBy[k]
		for x, y := range lcs(len(a), len(b), func(x, y int) bool { return same(stream[a[x]], shown[b[y]]) }) {
			pair[a[x]] = -1
			if y >= 0 {
				pair[a[x]], paired[b[y]] = b[y], true
			}
		}
	}
	return pair, paired
}

// same reports whether a and b tell the same: and, but for an interrupt or an error (which eino
// reports for the whole run), at the same run path.
func same(a, b fact) bool {
	return a.what == b.what && a.detail == b.detail && (strings.HasPrefix(a.key(), "*") || slices.Equal(a.path, b.path))
}

// lcs aligns n items with m along a longest common subsequence under eq and returns, for each of
// the n, the index of its partner among the m, or -1.
func lcs(n, m int, eq func(x, y int) bool) []int {
	l := make([][]int, n+1)
	for x := range l {
		l[x] = make([]int, m+1)
	}
	for x := n - 1; x >= 0; x-- {
		for y := m - 1; y >= 0; y-- {
			if eq(x, y) {
				l[x][y] = l[x+1][y+1] + 1
			} else {
				l[x][y] = max(l[x+1][y], l[x][y+1])
			}
		}
	}
	out := make([]int, n)
	for x, y := 0, 0; x < n; {
		switch {
		case y < m && eq(x, y):
			out[x] = y
			x, y = x+1, y+1
		case y >= m || l[x+1][y] >= l[x][y+1]:
			out[x] = -1
			x++
		default:
			y++
		}
	}
	return out
}

// missingDiff describes stream fact i, which has no counterpart: "differs" when the trace has
// an unpaired fact of the same key where it should be, "missing" otherwise.
func missingDiff(stream, shown []fact, pair []int, paired []bool, i int) string {
	f := stream[i]
	lo, hi := -1, len(shown) // the counterparts of f's neighbours of the same key
	for k := i - 1; k >= 0 && lo < 0; k-- {
		if stream[k].key() == f.key() && pair[k] >= 0 {
			lo = pair[k]
		}
	}
	for k := i + 1; k < len(stream) && hi == len(shown); k++ {
		if stream[k].key() == f.key() && pair[k] >= 0 {
			hi = pair[k]
		}
	}
	for j := lo + 1; j < hi; j++ {
		if !paired[j] && shown[j].key() == f.key() {
			return fmt.Sprintf("differs: the stream has %s; the trace has, in its place, %s", f, shown[j])
		}
	}
	for j := range shown {
		if shown[j].key() == f.key() && same(shown[j], f) {
			return fmt.Sprintf("out of order: the stream has %s, which the trace has out of place, at %s", f, shown[j].where)
		}
	}
	return fmt.Sprintf("missing from the trace: %s", f)
}

// whereMissing says what the trace holds around where stream fact i, which has no counterpart,
// should be: the counterpart of the stream's fact before it, and the trace's last fact.
func whereMissing(stream, shown []fact, pair []int, i int) string {
	if len(shown) == 0 {
		return "; the trace has no message or action at all"
	}
	d := ""
	for k := i - 1; k >= 0; k-- {
		if pair[k] >= 0 {
			d = fmt.Sprintf("; the stream's fact before it is at %s", shown[pair[k]].where)
			break
		}
	}
	return d + fmt.Sprintf("; the trace ends with %s", shown[len(shown)-1])
}

// after says which paired fact an extra one comes after.
func after(shown []fact, paired []bool, j int) string {
	for k := j - 1; k >= 0; k-- {
		if paired[k] {
			return fmt.Sprintf(", after %s", shown[k])
		}
	}
	return ", before anything the stream has"
}

// ordered reports whether the stream fixes the order of two events: one's run path is the start
// of the other's (run paths are histories; parallel branches diverge).
func ordered(a, b []string) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	return slices.Equal(a, b[:len(a)])
}

// TestStoryDiff holds the comparison itself to what it promises, on small stories.
func TestStoryDiff(t *testing.T) {
	say := func(agent, text string, path ...string) fact {
		return fact{agent: agent, what: "message", detail: text, where: agent + " " + text, path: path}
	}
	interrupt := fact{agent: "ops", what: "interrupt", detail: "id-1", where: "interrupt", path: []string{"ops"}}
	inner := say("deployer", "deploying", "ops", "deployer")
	a, b := say("writer", "a", "seq", "writer"), say("editor", "b", "seq", "writer", "editor")
	left, right := say("left", "l", "par", "left"), say("right", "r", "par", "right")
	cases := []struct {
		name          string
		stream, trace []fact
		want          string // the start of the difference, "" for none
	}{
		{"same", []fact{a, b}, []fact{a, b}, ""},
		{"tail lost", []fact{a, b}, []fact{a}, "missing from the trace: message by editor b"},
		{"text changed", []fact{a, b}, []fact{a, say("editor", "c")}, "differs: the stream has message by editor b"},
		{"at another run path", []fact{a, b}, []fact{a, say("editor", "b", "seq", "editor")}, "differs: the stream has message by editor b"},
		{"one interrupt twice", []fact{interrupt}, []fact{interrupt, interrupt}, "extra in the trace: interrupt by ops id-1"},
		{"a duplicate before the rest", []fact{a, b}, []fact{a, a, b}, "extra in the trace: message by writer a"},
		{"out of order", []fact{a, b}, []fact{b, a}, "out of order"},
		{"one agent's out of order", []fact{a, say("writer", "a2")}, []fact{say("writer", "a2"), a}, "out of order"},
		{"parallel branches in another order", []fact{left, right}, []fact{right, left}, ""},
		{"an agent run as a tool tells more", []fact{interrupt}, []fact{inner, interrupt}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := storyDiff(c.stream, c.trace)
			if c.want == "" && got != "" || !strings.HasPrefix(got, c.want) {
				t.Errorf("storyDiff = %q, want it to start with %q", got, c.want)
			}
		})
	}
}

// TestConcurrentAnswer holds the final answer's one allowance to branches that ran at once.
func TestConcurrentAnswer(t *testing.T) {
	say := func(agent, text string, path ...string) realapps.Event {
		return realapps.Event{Agent: agent, RunPath: path, Role: "assistant", Text: text}
	}
	turn := func(events ...realapps.Event) realapps.Turn {
		last := events[len(events)-1]
		return realapps.Turn{Parts: []realapps.Part{{Events: events}}, Final: last.Text, FinalBy: last.Agent}
	}
	hotel, flight := say("hotel", "Casa", "trip", "hotel"), say("flight", "TP 541", "trip", "flight")
	writer, editor := say("writer", "draft", "seq", "writer"), say("editor", "final", "seq", "writer", "editor")
	cases := []struct {
		name string
		turn realapps.Turn
		out  web.Outcome
		want bool
	}{
		{"parallel branches", turn(hotel, flight), web.Outcome{Answer: "Casa", AnswerBy: "hotel"}, true},
		{"one after the other", turn(writer, editor), web.Outcome{Answer: "draft", AnswerBy: "writer"}, false},
		{"not the branch's last word", turn(say("hotel", "Looking", "trip", "hotel"), hotel, flight), web.Outcome{Answer: "Looking", AnswerBy: "hotel"}, false},
		{"said by no one", turn(hotel, flight), web.Outcome{Answer: "Casa", AnswerBy: "train"}, false},
	}
	for _, c := range cases {
		if got := concurrentAnswer(c.turn, c.out); got != c.want {
			t.Errorf("%s: concurrentAnswer = %v, want %v", c.name, got, c.want)
		}
	}
}
