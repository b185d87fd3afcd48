package realapps

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/schema"
)

// Journal is what an app saw of its own runs, written without Baton: every event of the
// Runner's stream, what its models and tools were asked, and how long its runs took. An app
// prints it line by line as it goes (see Line), as apps print events, so that it has nothing
// left to do after its last event but exit; ReadJournal puts it together.
type Journal struct {
	// Turns are the app's queries, in order, each with the parts (the query, then every resume)
	// it took.
	Turns []Turn `json:"turns"`
	// ModelCalls counts each agent's model calls; ToolCalls each tool's calls (the app's own
	// tools, not eino's).
	ModelCalls map[string]int `json:"model_calls"`
	ToolCalls  map[string]int `json:"tool_calls"`
	// ElapsedMS is the time from the first query to the end of the last event stream: what a user
	// waits for, with Baton attached or not.
	ElapsedMS float64 `json:"elapsed_ms"`
}

// Turn is one query and what followed from it until its stream ended without an interrupt.
type Turn struct {
	Query string `json:"query"`
	Parts []Part `json:"parts"`
	// Final is the last message of the turn's last stream (the app's answer) and FinalBy the agent
	// that said it.
	Final   string `json:"final"`
	FinalBy string `json:"final_by"`
	// EndedAt is when the app saw the turn's last event stream end.
	EndedAt time.Time `json:"ended_at"`
}

// Part is one event stream: the query's own, or a resume's.
type Part struct {
	Resume bool    `json:"resume,omitempty"`
	Events []Event `json:"events"`
	// Status is how the stream ended: completed, interrupted (its last event interrupts) or
	// failed (an event carried an error).
	Status string `json:"status"`
}

// Event is one event of the Runner's stream as the app read it.
type Event struct {
	Agent   string   `json:"agent"`
	RunPath []string `json:"run_path,omitempty"`
	// Role and Text are the event's message, joined from the app's own copy when streamed.
	Role string `json:"role,omitempty"`
	Text string `json:"text,omitempty"`
	// ToolCalls names the tools an assistant message calls; ToolName is the tool a tool message
	// answers for.
	ToolCalls []string `json:"tool_calls,omitempty"`
	ToolName  string   `json:"tool_name,omitempty"`
	// The event's action, if any.
	TransferTo string `json:"transfer_to,omitempty"`
	Exit       bool   `json:"exit,omitempty"`
	BreakLoop  string `json:"break_loop,omitempty"` // the agent that broke the loop
	Interrupt  string `json:"interrupt,omitempty"`  // the root cause's interrupt id
	Error      string `json:"error,omitempty"`
}

// Line is one line an app prints: an event it read (with its turn and its part of the turn,
// both from 1: part 1 is the query's stream, the next ones its resumes' streams), the end of a
// turn, or, last, what its models and tools counted.
type Line struct {
	Turn    int        `json:"turn,omitempty"`
	Query   string     `json:"query,omitempty"`
	Part    int        `json:"part,omitempty"`
	Event   *Event     `json:"event,omitempty"`
	EndedAt *time.Time `json:"ended_at,omitempty"`
	Summary *Summary   `json:"summary,omitempty"`
}

// Summary is an app's last line.
type Summary struct {
	ModelCalls map[string]int `json:"model_calls"`
	ToolCalls  map[string]int `json:"tool_calls"`
	ElapsedMS  float64        `json:"elapsed_ms"`
}

// ReadJournal puts together the journal an app printed.
func ReadJournal(r io.Reader) (Journal, error) {
	var j Journal
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l Line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return j, fmt.Errorf("journal line %q: %w", sc.Text(), err)
		}
		switch {
		case l.Summary != nil:
			j.ModelCalls, j.ToolCalls, j.ElapsedMS = l.Summary.ModelCalls, l.Summary.ToolCalls, l.Summary.ElapsedMS
			return j, j.settle()
		case l.Turn > len(j.Turns)+1 || l.Turn < 1:
			return j, fmt.Errorf("journal line %q: turn out of order", sc.Text())
		case l.Turn == len(j.Turns)+1:
			j.Turns = append(j.Turns, Turn{Query: l.Query})
		}
		t := &j.Turns[l.Turn-1]
		switch {
		case l.EndedAt != nil:
			t.EndedAt = *l.EndedAt
		case l.Event != nil:
			if l.Part > len(t.Parts)+1 || l.Part < len(t.Parts) || l.Part < 1 {
				return j, fmt.Errorf("journal line %q: part out of order", sc.Text())
			}
			if l.Part == len(t.Parts)+1 {
				t.Parts = append(t.Parts, Part{Resume: l.Part > 1})
			}
			p := &t.Parts[l.Part-1]
			p.Events = append(p.Events, *l.Event)
			p.Status = status(p.Events)
		}
	}
	if err := sc.Err(); err != nil {
		return j, err
	}
	return j, errors.New("the journal has no summary: the app did not finish")
}

// settle works out what the lines imply: each turn's final answer.
func (j *Journal) settle() error {
	for i := range j.Turns {
		t := &j.Turns[i]
		if len(t.Parts) == 0 {
			return fmt.Errorf("turn %d (%q) has no event", i+1, t.Query)
		}
		for _, p := range t.Parts {
			for _, e := range p.Events {
				if e.Role != "" {
					t.Final, t.FinalBy = e.Text, e.Agent
				}
			}
		}
	}
	return nil
}

// status says how a stream of events ended.
func status(events []Event) string {
	for _, e := range events {
		if e.Error != "" {
			return "failed"
		}
	}
	if n := len(events); n > 0 && events[n-1].Interrupt != "" {
		return "interrupted"
	}
	return "completed"
}

// tally counts what the app's models and tools were asked; it is shared by every agent.
type tally struct {
	mu     sync.Mutex
	models map[string]int
	tools  map[string]int
}

func newTally() *tally { return &tally{models: map[string]int{}, tools: map[string]int{}} }

func (t *tally) model(agent string) {
	t.mu.Lock()
	t.models[agent]++
	t.mu.Unlock()
}

func (t *tally) tool(name string) {
	t.mu.Lock()
	t.tools[name]++
	t.mu.Unlock()
}

func (t *tally) summary(elapsed time.Duration) *Summary {
	t.mu.Lock()
	defer t.mu.Unlock()
	return &Summary{ModelCalls: t.models, ToolCalls: t.tools, ElapsedMS: float64(elapsed) / float64(time.Millisecond)}
}

// readEvent describes ev. A streamed message is read from a copy of its own, chunk by chunk, as
// an app that shows tokens as they come does; the event keeps the other copy.
func readEvent(ev *adk.AgentEvent) Event {
	e := Event{Agent: ev.AgentName}
	for _, step := range ev.RunPath {
		e.RunPath = append(e.RunPath, step.String())
	}
	if ev.Output != nil && ev.Output.MessageOutput != nil {
		mo := ev.Output.MessageOutput
		msg := mo.Message
		if mo.IsStreaming {
			copies := mo.MessageStream.Copy(2)
			mo.MessageStream = copies[0]
			msg = joinChunks(copies[1])
		}
		if msg != nil {
			e.Role, e.Text, e.ToolName = string(msg.Role), msg.Content, msg.ToolName
			for _, tc := range msg.ToolCalls {
				e.ToolCalls = append(e.ToolCalls, tc.Function.Name)
			}
		}
	}
	if a := ev.Action; a != nil {
		if a.TransferToAgent != nil {
			e.TransferTo = a.TransferToAgent.DestAgentName
		}
		e.Exit = a.Exit
		if a.BreakLoop != nil {
			e.BreakLoop = a.BreakLoop.From
		}
		if a.Interrupted != nil {
			e.Interrupt = rootCause(a.Interrupted)
		}
	}
	if ev.Err != nil {
		e.Error = ev.Err.Error()
	}
	return e
}

// joinChunks reads a streamed message to its end and joins its chunks.
func joinChunks(sr *schema.StreamReader[*schema.Message]) *schema.Message {
	defer sr.Close()
	var chunks []*schema.Message
	for {
		chunk, err := sr.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return &schema.Message{Role: schema.Assistant, Content: "(stream failed: " + err.Error() + ")"}
		}
		chunks = append(chunks, chunk)
	}
	msg, err := schema.ConcatMessages(chunks)
	if err != nil {
		return &schema.Message{Role: schema.Assistant, Content: "(chunks do not join: " + err.Error() + ")"}
	}
	return msg
}

// rootCause returns the id of the interrupt's root cause: the one to resume.
func rootCause(info *adk.InterruptInfo) string {
	for _, c := range info.InterruptContexts {
		if c.IsRootCause {
			return c.ID
		}
	}
	return "(no root cause)"
}
