package traces

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// FormatName and FormatVersion identify Baton's trace file format; see docs/trace-format.md.
// A reader of version N must keep reading every version up to N.
const (
	FormatName    = "baton.trace"
	FormatVersion = 1
)

// file is the on-disk envelope of a trace.
type file struct {
	Format  string  `json:"format"`
	Version int     `json:"version"`
	Run     Run     `json:"run"`
	Agents  []Agent `json:"agents"`
	Events  []Event `json:"events"`
}

// Marshal returns t in the current format, indented, ending in a newline. The same trace always
// gives the same bytes.
func Marshal(t Trace) ([]byte, error) {
	f := file{Format: FormatName, Version: FormatVersion, Run: t.Run, Agents: t.Agents, Events: t.Events}
	if f.Agents == nil {
		f.Agents = []Agent{}
	}
	if f.Events == nil {
		f.Events = []Event{}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(f); err != nil {
		return nil, fmt.Errorf("marshal trace %s: %w", t.Run.ID, err)
	}
	return buf.Bytes(), nil
}

// Unmarshal reads a trace file of any supported version and checks it. Every problem is an
// *Error with CodeInvalid whose message names the field at fault.
func Unmarshal(data []byte) (Trace, error) {
	var head struct {
		Format  *string `json:"format"`
		Version *int    `json:"version"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return Trace{}, Errorf(CodeInvalid, "trace is not valid JSON: %s", jsonProblem(data, err))
	}
	switch {
	case head.Format == nil:
		return Trace{}, Errorf(CodeInvalid, "trace has no \"format\" field: want %q", FormatName)
	case *head.Format != FormatName:
		return Trace{}, Errorf(CodeInvalid, "trace format is %q, want %q", *head.Format, FormatName)
	case head.Version == nil:
		return Trace{}, Errorf(CodeInvalid, "trace has no \"version\" field")
	case *head.Version < 1 || *head.Version > FormatVersion:
		return Trace{}, Errorf(CodeInvalid, "trace version %d is not supported: this Baton reads versions 1 to %d", *head.Version, FormatVersion)
	}
	var f file
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return Trace{}, Errorf(CodeInvalid, "trace does not match format version %d: %s", f.Version, jsonProblem(data, err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return Trace{}, Errorf(CodeInvalid, "trace has data after its closing brace")
	}
	t := Trace{Run: f.Run, Agents: f.Agents, Events: f.Events}
	if err := Validate(t); err != nil {
		return Trace{}, err
	}
	return t, nil
}

// Validate checks what the JSON shape cannot: known statuses and kinds, gapless sequence numbers,
// the payload each kind requires, and agents named once.
func Validate(t Trace) error {
	if t.Run.ID == "" {
		return Errorf(CodeInvalid, "run.id is empty")
	}
	if !t.Run.Status.Valid() {
		return Errorf(CodeInvalid, "run.status %q is not one of running, completed, failed, interrupted, canceled", t.Run.Status)
	}
	seen := make(map[string]bool, len(t.Agents))
	for i, a := range t.Agents {
		if a.Name == "" {
			return Errorf(CodeInvalid, "agents[%d].name is empty", i)
		}
		if seen[a.Name] {
			return Errorf(CodeInvalid, "agents[%d]: agent %q appears twice", i, a.Name)
		}
		seen[a.Name] = true
	}
	for i, e := range t.Events {
		if want := int64(i + 1); e.Seq != want {
			return Errorf(CodeInvalid, "events[%d].seq is %d, want %d: sequence numbers start at 1 with no gaps", i, e.Seq, want)
		}
		if !e.Kind.Known() {
			return Errorf(CodeInvalid, "events[%d].kind %q is not a known event kind", i, e.Kind)
		}
		if field := missingPayload(e); field != "" {
			return Errorf(CodeInvalid, "events[%d] (%s) has no %q payload", i, e.Kind, field)
		}
	}
	return nil
}

// missingPayload returns the JSON name of the payload e's kind requires when it is absent.
func missingPayload(e Event) string {
	var present bool
	var field string
	switch e.Kind {
	case KindRunStarted, KindRunFinished:
		present, field = e.Run != nil, "run"
	case KindAgentStarted, KindAgentFinished:
		present, field = e.AgentRun != nil, "agent_run"
	case KindModelStarted, KindModelFinished:
		present, field = e.Model != nil, "model"
	case KindToolStarted, KindToolFinished:
		present, field = e.Tool != nil, "tool"
	case KindMessage:
		present, field = e.Message != nil, "message"
	case KindTransfer:
		present, field = e.Transfer != nil, "transfer"
	case KindAgentToolEnter, KindAgentToolExit:
		present, field = e.AgentTool != nil, "agenttool"
	case KindSessionSet:
		present, field = e.Session != nil, "session"
	case KindInterrupted, KindResumed:
		present, field = e.Interrupt != nil, "interrupt"
	case KindExit:
		present, field = e.Exit != nil, "exit"
	case KindBreakLoop:
		present, field = e.BreakLoop != nil, "breakloop"
	case KindError:
		present, field = e.Error != nil, "error"
	}
	if present {
		return ""
	}
	return field
}

// jsonProblem describes a decoding error with the line and column where it happened.
func jsonProblem(data []byte, err error) string {
	var offset int64 = -1
	switch e := err.(type) {
	case *json.SyntaxError:
		offset = e.Offset
	case *json.UnmarshalTypeError:
		if e.Field != "" {
			return fmt.Sprintf("field %q holds a %s, want %s", e.Field, e.Value, e.Type)
		}
		offset = e.Offset
	}
	if offset < 0 {
		return err.Error()
	}
	line, col := 1, 1
	for _, b := range data[:min(int(offset), len(data))] {
		if b == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return fmt.Sprintf("%s (line %d, column %d)", err.Error(), line, col)
}
