package traces

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/baton-dev/baton/internal/jsonstr"
)

// eventWriter appends an event as compact JSON, byte for byte as encoding/json writes the
// format's types with HTML escaping off, without reflection or an allocation per event: writing
// a trace of 100,000 events is then a matter of milliseconds per ten thousand. The round trip
// tests (richTrace sets every field) catch a field it forgets.
type eventWriter struct {
	b   []byte
	err error
}

// event writes e; model and agentRun are the input references of its payloads (zero for none),
// whose kept messages are left out of their inputs.
func (w *eventWriter) event(e *Event, model, agentRun InputRef) {
	w.b = append(w.b, '{')
	w.key("seq")
	w.b = strconv.AppendInt(w.b, e.Seq, 10)
	w.key("time")
	w.b = append(w.b, '"')
	b, err := e.Time.AppendText(w.b)
	if err != nil {
		w.fail(fmt.Errorf("time: %w", err))
	} else {
		w.b = b
	}
	w.b = append(w.b, '"')
	w.str("kind", string(e.Kind))
	w.optStr("agent", e.Agent)
	if len(e.RunPath) > 0 {
		w.strings("run_path", e.RunPath)
	}
	if r := e.Run; r != nil {
		w.open("run")
		w.optStr("flow", r.Flow)
		w.optStr("input", r.Input)
		w.str("status", string(r.Status))
		w.optStr("error", r.Error)
		if f := r.ForkedFrom; f != nil {
			w.open("forked_from")
			w.str("run", f.Run)
			w.int("seq", f.Seq)
			w.close()
		}
		w.close()
	}
	if a := e.AgentRun; a != nil {
		w.open("agent_run")
		w.inputRef(agentRun)
		w.messages("input", a.Input[agentRun.Keep:])
		w.optBool("resumed", a.Resumed)
		w.optStr("via", a.Via)
		w.optStr("error", a.Error)
		w.optBool("interrupted", a.Interrupted)
		w.optInt("iteration", int64(a.Iteration))
		w.close()
	}
	if m := e.Model; m != nil {
		w.open("model")
		w.str("id", m.ID)
		w.optStr("name", m.Name)
		w.inputRef(model)
		w.messages("input", m.Input[model.Keep:])
		if len(m.Tools) > 0 {
			w.strings("tools", m.Tools)
		}
		if m.Output != nil {
			w.key("output")
			w.message(m.Output)
		}
		if u := m.Usage; u != nil {
			w.open("usage")
			w.int("prompt_tokens", int64(u.PromptTokens))
			w.int("completion_tokens", int64(u.CompletionTokens))
			w.int("total_tokens", int64(u.TotalTokens))
			w.close()
		}
		w.optFloat("duration_ms", m.DurationMS)
		w.optStr("error", m.Error)
		w.close()
	}
	if t := e.Tool; t != nil {
		w.open("tool")
		w.str("name", t.Name)
		w.optStr("call_id", t.CallID)
		w.optStr("arguments", t.Arguments)
		w.optStr("result", t.Result)
		w.optStr("error", t.Error)
		w.optFloat("duration_ms", t.DurationMS)
		w.optBool("interrupted", t.Interrupted)
		w.close()
	}
	if e.Message != nil {
		w.key("message")
		w.message(e.Message)
	}
	w.payloads(e)
	w.b = append(w.b, '}')
}

// payloads writes the payloads event leaves out: those that hold no messages.
func (w *eventWriter) payloads(e *Event) {
	if t := e.Transfer; t != nil {
		w.open("transfer")
		w.str("from", t.From)
		w.str("to", t.To)
		w.str("mode", t.Mode)
		w.optStr("call_id", t.CallID)
		w.optStr("outcome", t.Outcome)
		w.optStr("error", t.Error)
		w.optStr("error_by", t.ErrorBy)
		w.close()
	}
	if a := e.AgentTool; a != nil {
		w.open("agenttool")
		w.str("caller", a.Caller)
		w.str("callee", a.Callee)
		w.str("call_id", a.CallID)
		w.optStr("request", a.Request)
		w.optStr("input_mode", a.InputMode)
		w.optStr("result", a.Result)
		w.optStr("inner_events", a.InnerEvents)
		w.close()
	}
	if s := e.Session; s != nil {
		w.open("session")
		w.str("key", s.Key)
		w.key("value")
		if len(s.Value) == 0 {
			w.b = append(w.b, "null"...)
		} else if b, err := appendCompact(w.b, s.Value); err != nil {
			w.fail(fmt.Errorf("session value %q is not JSON: %w", s.Key, err))
		} else {
			w.b = b
		}
		w.optStr("set_by", s.SetBy)
		w.close()
	}
	if i := e.Interrupt; i != nil {
		w.open("interrupt")
		w.optStr("id", i.ID)
		w.optStr("address", i.Address)
		w.optStr("info", i.Info)
		w.close()
	}
	if x := e.Exit; x != nil {
		w.open("exit")
		w.optStr("final_result", x.FinalResult)
		w.close()
	}
	if l := e.BreakLoop; l != nil {
		w.open("breakloop")
		w.str("from", l.From)
		w.int("iterations", int64(l.Iterations))
		w.close()
	}
	if x := e.Error; x != nil {
		w.open("error")
		w.str("message", x.Message)
		w.close()
	}
	if l := e.Lost; l != nil {
		w.open("lost")
		w.int("count", l.Count)
		w.close()
	}
	if p := e.Pause; p != nil {
		w.open("pause")
		w.str("break", p.Break)
		w.optStr("on", p.On)
		w.optStr("target", p.Target)
		if p.At != 0 {
			w.int("at", p.At)
		}
		w.optStr("detail", p.Detail)
		w.optStr("feed", p.Feed)
		w.optStr("action", p.Action)
		w.optStr("by", p.By)
		w.optStr("edited", p.Edited)
		if p.Reply != nil {
			w.key("reply")
			w.message(p.Reply)
		}
		w.messages("input", p.Input)
		if p.Args != nil {
			w.str("args", *p.Args)
		}
		if p.Result != nil {
			w.str("result", *p.Result)
		}
		if len(p.Value) > 0 {
			w.key("value")
			if b, err := appendCompact(w.b, p.Value); err != nil {
				w.fail(fmt.Errorf("pause value is not JSON: %w", err))
			} else {
				w.b = b
			}
		}
		w.close()
	}
}

func (w *eventWriter) inputRef(r InputRef) {
	if r.Keep > 0 {
		w.int("input_from", r.From)
		w.int("input_keep", int64(r.Keep))
	}
}

func (w *eventWriter) messages(k string, ms []Message) {
	if len(ms) == 0 {
		return
	}
	w.key(k)
	w.b = append(w.b, '[')
	for i := range ms {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		w.message(&ms[i])
	}
	w.b = append(w.b, ']')
}

func (w *eventWriter) message(m *Message) {
	w.b = append(w.b, '{')
	w.str("role", m.Role)
	w.optStr("content", m.Content)
	if len(m.ToolCalls) > 0 {
		w.key("tool_calls")
		w.b = append(w.b, '[')
		for i, tc := range m.ToolCalls {
			if i > 0 {
				w.b = append(w.b, ',')
			}
			w.b = append(w.b, '{')
			w.str("id", tc.ID)
			w.str("name", tc.Name)
			w.str("arguments", tc.Arguments)
			w.b = append(w.b, '}')
		}
		w.b = append(w.b, ']')
	}
	w.optStr("tool_call_id", m.ToolCallID)
	w.optStr("tool_name", m.ToolName)
	w.b = append(w.b, '}')
}

func (w *eventWriter) fail(err error) {
	if w.err == nil {
		w.err = err
	}
}

// key writes a field name, after a comma unless it is the object's first.
func (w *eventWriter) key(k string) {
	if w.b[len(w.b)-1] != '{' {
		w.b = append(w.b, ',')
	}
	w.b = append(w.b, '"')
	w.b = append(w.b, k...)
	w.b = append(w.b, '"', ':')
}

func (w *eventWriter) open(k string) {
	w.key(k)
	w.b = append(w.b, '{')
}

func (w *eventWriter) close() { w.b = append(w.b, '}') }

func (w *eventWriter) str(k, v string) {
	w.key(k)
	w.b = appendString(w.b, v)
}

func (w *eventWriter) optStr(k, v string) {
	if v != "" {
		w.str(k, v)
	}
}

func (w *eventWriter) strings(k string, vs []string) {
	w.key(k)
	w.b = append(w.b, '[')
	for i, v := range vs {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		w.b = appendString(w.b, v)
	}
	w.b = append(w.b, ']')
}

func (w *eventWriter) int(k string, v int64) {
	w.key(k)
	w.b = strconv.AppendInt(w.b, v, 10)
}

func (w *eventWriter) optInt(k string, v int64) {
	if v != 0 {
		w.int(k, v)
	}
}

func (w *eventWriter) optBool(k string, v bool) {
	if v {
		w.key(k)
		w.b = append(w.b, "true"...)
	}
}

// optFloat writes a non-zero v as encoding/json does: plain notation from 1e-6 to 1e21,
// exponent notation outside, with a short exponent.
func (w *eventWriter) optFloat(k string, v float64) {
	if v == 0 {
		return
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		w.fail(fmt.Errorf("field %s: %v is not a JSON number", k, v))
		return
	}
	w.key(k)
	format := byte('f')
	if abs := math.Abs(v); abs < 1e-6 || abs >= 1e21 {
		format = 'e'
	}
	w.b = strconv.AppendFloat(w.b, v, format, -1, 64)
	if n := len(w.b); format == 'e' && n >= 4 && w.b[n-4] == 'e' && w.b[n-3] == '-' && w.b[n-2] == '0' {
		w.b[n-2] = w.b[n-1] // e-07 -> e-7
		w.b = w.b[:n-1]
	}
}

// appendString writes s as a JSON string (jsonstr.Append, quoted).
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	return append(jsonstr.Append(b, s), '"')
}

// appendCompact appends the JSON value v without its insignificant spaces.
func appendCompact(b []byte, v json.RawMessage) ([]byte, error) {
	buf := bytes.NewBuffer(b)
	if err := json.Compact(buf, v); err != nil {
		return b, err
	}
	return buf.Bytes(), nil
}
