package realapps_test

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/baton-dev/baton/attach/realapps"
	"github.com/baton-dev/baton/traces"
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
	// where says where the fact is on its side: "stream event 7 of resume 1" or "trace seq 41";
	// seq orders the trace's facts.
	where string
	seq   int64
	// path is the stream event's run path: two stream facts are ordered when one's path extends
	// the other's (parallel branches are not).
	path []string
}

func (f fact) String() string {
	if f.detail == "" {
		return fmt.Sprintf("%s by %s (%s)", f.what, f.agent, f.where)
	}
	return fmt.Sprintf("%s by %s %s (%s)", f.what, f.agent, f.detail, f.where)
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
		f := fact{agent: e.Agent, where: fmt.Sprintf("trace seq %d", e.Seq), seq: e.Seq}
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
		if onStream[f.key()] || f.key()[0] == '*' {
			shown = append(shown, f)
		}
	}
	byKey := map[string][]int{} // key -> indexes into shown
	for i, f := range shown {
		byKey[f.key()] = append(byKey[f.key()], i)
	}
	used := map[string]int{}
	pair := make([]int, len(stream)) // stream fact -> index into shown
	for i, f := range stream {
		k := f.key()
		n := used[k]
		used[k]++
		if n >= len(byKey[k]) {
			return fmt.Sprintf("missing from the trace: %s%s", f, whereMissing(shown, byKey[k], f))
		}
		got := shown[byKey[k][n]]
		if got.what != f.what || got.detail != f.detail {
			return fmt.Sprintf("differs: the stream has %s, the trace has %s", f, got)
		}
		pair[i] = byKey[k][n]
	}
	if d := extraDiff(stream, shown, byKey, used, pair); d != "" {
		return d
	}
	for i := range stream {
		for j := i + 1; j < len(stream); j++ {
			if ordered(stream[i].path, stream[j].path) && pair[i] > pair[j] {
				return fmt.Sprintf("out of order: the stream has %s before %s; the trace has them the other way round",
					stream[i], stream[j]) + fmt.Sprintf(" (%s, %s)", shown[pair[i]].where, shown[pair[j]].where)
			}
		}
	}
	return ""
}

// extraDiff describes the first trace fact that no stream fact paired with, with the last one of
// its kind that did pair.
func extraDiff(stream, shown []fact, byKey map[string][]int, used map[string]int, pair []int) string {
	var extra []fact
	for k, idx := range byKey {
		for _, i := range idx[used[k]:] {
			extra = append(extra, shown[i])
		}
	}
	if len(extra) == 0 {
		return ""
	}
	slices.SortFunc(extra, func(a, b fact) int { return cmp.Compare(a.seq, b.seq) })
	first := extra[0]
	d := fmt.Sprintf("extra in the trace (%d facts the stream does not have), first: %s", len(extra), first)
	for i := len(stream) - 1; i >= 0; i-- {
		if stream[i].key() == first.key() {
			return d + fmt.Sprintf("; the stream's last of that sort is %s, which the trace has at %s", stream[i], shown[pair[i]].where)
		}
	}
	return d
}

// whereMissing says what the trace holds where a missing fact should be.
func whereMissing(shown []fact, idx []int, missing fact) string {
	if len(idx) == 0 {
		if len(shown) == 0 {
			return "; the trace has no message or action at all"
		}
		return fmt.Sprintf("; the trace has nothing by %s, and ends with %s", missing.agent, shown[len(shown)-1])
	}
	return fmt.Sprintf("; the trace's last by %s is %s, and the trace ends with %s",
		missing.agent, shown[idx[len(idx)-1]], shown[len(shown)-1])
}

// ordered reports whether the stream fixes the order of two events: one's run path is the start
// of the other's (run paths are histories; parallel branches diverge).
func ordered(a, b []string) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	return slices.Equal(a, b[:len(a)])
}
