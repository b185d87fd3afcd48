package record

import (
	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/schema"

	"github.com/baton-dev/baton/traces"
)

// A chat model agent hands its model, and the Runner's stream, each tool result as a message it
// builds once the call has come back out through every middleware around the tool: eino's
// reduction cuts a long result short, an app's middleware makes a result of an error. The
// tool's callbacks run inside them, and see the tool's own result. So a chat model agent's tool
// call is recorded ended from its callbacks, with the tool's own result, and its message, as the
// agent sent it, where the visit goes on: before its model's next call, from that call's input
// (what the model reads); else before what ends the visit's tools (an action, an error, the end
// of its work, a transfer's target starting), as its copy of events carried it (its echo,
// heard), or, not carried by then, with the tool's own result. Not where, nor from what, its echo
// is read, which races with the callbacks: a run's story is the same each time.

// pendingAnswer is a chat model agent's tool call that ended and whose message is not recorded
// yet: the call's end, as recorded, where it was written (of; see traces.Recording.RecordMessages:
// a slot of the visit's input cache, which the log checks before it refers to it, as a slot is
// reused once an input is taken) and what its echo said, if heard.
type pendingAnswer struct {
	name, callID, result string
	of                   *traces.ToolResult
	failed               bool // a message comes only if a middleware made a result of its error
	heard                bool
	said                 string
}

// awaitAnswer notes that v's tool call tc ended, or failed, written at of, and that its message
// is to come. Callers hold r.mu.
func (v *visit) awaitAnswer(tc *traces.ToolCall, of *traces.ToolResult, failed bool) {
	v.answers = append(v.answers, pendingAnswer{name: tc.Name, callID: tc.CallID, result: tc.Result, of: of, failed: failed})
}

// pending returns the index of v's pending tool call callID (the oldest when callID is empty),
// or -1.
func (v *visit) pending(callID string) int {
	for i := range v.answers { // by index: a range over values copies each
		if sameID(v.answers[i].callID, callID) {
			return i
		}
	}
	if callID == "" && len(v.answers) > 0 {
		return 0
	}
	return -1
}

// sameID reports whether call ids a and b are equal, looking first at their last bytes: ids of
// one reply's calls differ there (a count, a random tail), rarely in their first.
func sameID(a, b string) bool {
	return len(a) == len(b) && (len(a) == 0 || a[len(a)-1] == b[len(b)-1]) && a == b
}

// heard notes what the message of v's pending tool call callID says, as its copy of events
// carried it, and reports whether the call was pending. Callers hold r.mu.
func (v *visit) heard(callID, content string) bool {
	if v.lateEchoes > 0 {
		v.lateEchoes-- // the echo of a call answered before it came: echoes keep the calls' order
		return false
	}
	i := 0
	for i < len(v.answers) && v.answers[i].heard {
		i++
	}
	if i == len(v.answers) {
		return false // every call pending was heard: this one's end is not recorded yet
	}
	if !sameID(v.answers[i].callID, callID) { // echoes come in order, nearly always
		if i = v.pending(callID); i < 0 {
			return false
		}
	}
	a := &v.answers[i]
	a.heard, a.said = true, content
	return true
}

// heardEcho is heard for ev, the echo of a tool result. Callers hold r.mu.
func (v *visit) heardEcho(ev *adk.AgentEvent) {
	if len(v.answers) > 0 {
		m := messageOf(ev).Message
		v.heard(m.ToolCallID, m.Content)
	}
}

// answer adds the message of v's pending tool call a, saying content, to those to record (see
// delivery.recordAnswers). Callers hold r.mu.
func (r *Recorder) answer(v *visit, a *pendingAnswer, content string) {
	if sameText(content, a.result) {
		content = a.result // its very string, which the log refers to where it wrote it
	}
	if !a.heard {
		v.lateEchoes++
	}
	r.out.addAnswer(a.name, a.callID, content, a.of)
}

// answerFromInput records the messages of v's pending tool calls before its model's next call,
// as the call's input, in, carries them (after the conversation, one for each call of the latest
// reply): what the model reads, whenever the copy of events is read. A failed call's message
// found there will also be echoed. A call the input does not carry is answered as its copy
// carried it, else stays pending; a failed one is forgotten. Callers hold r.mu.
func (r *Recorder) answerFromInput(v *visit, in []*schema.Message) {
	tail := len(in)
	for tail > 0 && in[tail-1] != nil && in[tail-1].Role == schema.Tool {
		tail--
	}
	left := 0
	for i := range v.answers {
		a := &v.answers[i]
		j := tail + i // the input holds the results in the order the calls ended, nearly always
		if j >= len(in) || !sameRef(in[j].ToolCallID, a.callID) {
			j = tail + resultIn(in[tail:], a.callID)
		}
		switch {
		case j < len(in):
			if a.failed && !a.heard {
				v.echoes.expectResult(a.callID)
			}
			r.answer(v, a, in[j].Content)
		case a.heard:
			r.answer(v, a, a.said)
		case !a.failed:
			v.answers[left] = *a // in neither yet
			left++
		}
	}
	v.answers = v.answers[:left]
	r.out.recordAnswers(v.agent, v.path)
}

// resultIn returns the index of the message of call callID among results, or len(results).
func resultIn(results []*schema.Message, callID string) int {
	for j, m := range results {
		if sameText(m.ToolCallID, callID) {
			return j
		}
	}
	return len(results)
}

// answerAll records the messages of v's pending tool calls as the copy carried them, else as the
// tools returned them; failed calls, not carried, have none. Callers hold r.mu.
func (r *Recorder) answerAll(v *visit) {
	for i := range v.answers {
		switch a := &v.answers[i]; {
		case a.heard:
			r.answer(v, a, a.said)
		case !a.failed:
			r.answer(v, a, a.result)
		}
	}
	v.answers = v.answers[:0]
	r.out.recordAnswers(v.agent, v.path)
}
