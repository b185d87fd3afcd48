// Package story reads a trace as its handoff story: the route, then each agent's turn (how control
// reached it, what it was fed, the tools it called and what they returned, what it said, where it
// handed off), then the session and the final answer. batontest keeps a story's text in golden
// files and `baton diff` aligns two runs' turns by agent and handoff. Baton's own, not API.
package story

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/baton-dev/baton/traces"
)

// Story is a run read as who handed what to whom.
type Story struct {
	Route  []string // the agents control reached by transfer or as the root, in order
	Status traces.Status
	Error  string
	Turns  []Turn
	// Session holds the session's values as the run left them, as JSON.
	Session map[string]string
	// AnswerBy gave Answer: an exit's final result, else the last reply with text and no tool call.
	AnswerBy, Answer string
	// Left is how many turns a window of the story (Window, templates.PageStory) leaves out
	// after the first quarter of Turns, LeftHops how many agents after the first quarter of
	// Route; 0 when the story is whole.
	Left, LeftHops int
}

// Turn is one agent's turn: from its agent.started to what it did before the next began.
type Turn struct {
	Seq     int64            `json:"seq"` // its agent.started
	Agent   string           `json:"agent"`
	Reached string           `json:"reached"` // how control reached it: "as the root", "by transfer from triage", "as a tool"…
	Fed     []traces.Message `json:"fed"`
	Steps   []Step           `json:"steps"`
	Tokens  int              `json:"tokens"`  // its model calls'
	Took    time.Duration    `json:"took_ns"` // from its start to its agent.finished (0 when it has none)
	Outcome string           `json:"outcome"` // "finished", "failed: …", "interrupted", or "" when it never finished
	// PromptTokens and CompletionTokens split Tokens: what its calls cost.
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	// Models splits them by the model each call named (traces.ModelCall.Name), in the order the
	// turn first called each: what prices them, each call at its own model's price.
	Models []ModelUsage `json:"models,omitempty"`
	// Cost is what its calls cost, once the comparison is priced (Comparison.Price): with
	// Money.Unpriced set when a call named a model with no price; nil when a call that named no
	// model has none.
	Cost *Money `json:"cost,omitempty"`
}

// ModelUsage is the tokens of a turn's calls that named one model ("" for calls that named none).
type ModelUsage struct {
	Model            string `json:"model,omitempty"`
	Calls            int    `json:"calls"`
	PromptTokens     int    `json:"prompt_tokens"`
	CompletionTokens int    `json:"completion_tokens"`
}

// Key is what aligns two runs' turns: the agent, and how control reached it.
func (t Turn) Key() string { return t.Agent + ", " + t.Reached }

// Step is one thing a turn did.
type Step struct {
	Seq  int64    `json:"seq"`
	Kind StepKind `json:"kind"`
	// Text is what the step says: the tool and its arguments, the reply, the target of a handoff.
	Text string `json:"text,omitempty"`
	// Result is a tool call's result (or error); empty for other steps.
	Result string `json:"result,omitempty"`
}

// StepKind says what a step is.
type StepKind string

// Step kinds, in the words a story's text uses.
const (
	Calls      StepKind = "calls"
	Says       StepKind = "says"
	HandsOff   StepKind = "hands off to"
	RunsAsTool StepKind = "runs"
	Exits      StepKind = "exits the run"
	Breaks     StepKind = "breaks its loop"
	Interrupts StepKind = "interrupts the run"
	Resumed    StepKind = "(resumed)"
	Fails      StepKind = "error:"
)

// Of reads tr's story.
func Of(tr traces.Trace) Story { return Window(tr, 0) }

// Window reads the turns of tr's story that a window of at most limit of them shows (all of them
// when limit is 0 or the story has no more): its first quarter and its newest, saying how many
// it leaves out between them (Left), as templates.PageStory cuts a whole story. The turns left
// out are counted, never told: a million-event run's whole story is 160 MB made for a page that
// shows 60 turns. The route, session and answer are the whole story's.
func Window(tr traces.Trace, limit int) Story {
	s := Story{Status: tr.Run.Status, Error: tr.Run.Error, Session: map[string]string{}}
	// Turns i < head and i >= tail (by the order they start) are told, as s.Turns[kept(i)].
	total := 0
	for i := range tr.Events {
		if tr.Events[i].Kind == traces.KindAgentStarted {
			total++
		}
	}
	head, tail := total, total
	if limit > 0 && total > limit {
		head, tail = limit/4, total-(limit-limit/4)
		s.Left = tail - head
	}
	kept := func(i int) int {
		switch {
		case i < head:
			return i
		case i >= tail:
			return head + i - tail
		}
		return -1
	}
	handedBy := map[string]string{} // the source of the latest transfer to each agent
	open := map[string]int{}        // each agent's latest turn, by name, as kept says
	cur := -1                       // the turn the latest event belongs to (-1: none, or left out)
	turnOf := func(agent string) *Turn {
		i, ok := open[agent]
		if !ok {
			i = cur
		}
		if i < 0 {
			return nil
		}
		return &s.Turns[i]
	}
	started := 0 // the turns started so far
	for _, e := range tr.Events {
		t := turnOf(e.Agent)
		add := func(st Step) {
			if t != nil {
				st.Seq = e.Seq
				t.Steps = append(t.Steps, st)
			}
		}
		switch e.Kind {
		case traces.KindAgentStarted:
			how := reached(e, handedBy[e.Agent])
			if how == "as the root" || strings.HasPrefix(how, "by transfer") {
				s.Route = append(s.Route, e.Agent)
			}
			cur, started = kept(started), started+1
			open[e.Agent], t = cur, nil
			if cur < 0 {
				continue // left out of the window
			}
			turn := Turn{Seq: e.Seq, Agent: e.Agent, Reached: how}
			if e.AgentRun != nil {
				turn.Fed = e.AgentRun.Input
			}
			s.Turns = append(s.Turns, turn)
			t = &s.Turns[cur]
			t.Took = -time.Duration(e.Time.UnixNano())
		case traces.KindAgentFinished:
			if t != nil && t.Agent == e.Agent {
				t.Took += time.Duration(e.Time.UnixNano())
				t.Outcome = "finished"
				if r := e.AgentRun; r != nil && r.Error != "" {
					t.Outcome = "failed: " + r.Error
				} else if r != nil && r.Interrupted {
					t.Outcome = "interrupted"
				}
			}
		case traces.KindToolStarted:
			if e.Tool != nil && e.Tool.Name != "transfer_to_agent" {
				add(Step{Kind: Calls, Text: e.Tool.Name + "(" + e.Tool.Arguments + ")"})
			}
		case traces.KindToolFinished:
			if e.Tool != nil && t != nil {
				for i := len(t.Steps) - 1; i >= 0; i-- {
					if st := &t.Steps[i]; st.Kind == Calls && strings.HasPrefix(st.Text, e.Tool.Name+"(") && st.Result == "" {
						st.Result = e.Tool.Result
						if e.Tool.Error != "" {
							st.Result = "error: " + e.Tool.Error
						}
						break
					}
				}
			}
		case traces.KindModelFinished:
			if e.Model == nil {
				continue
			}
			if t != nil && e.Model.Usage != nil {
				t.used(e.Model.Name, *e.Model.Usage)
			}
			if o := e.Model.Output; o != nil && o.Content != "" {
				add(Step{Kind: Says, Text: o.Content})
				if len(o.ToolCalls) == 0 {
					s.AnswerBy, s.Answer = e.Agent, o.Content
				}
			}
		case traces.KindTransfer:
			if tr := e.Transfer; tr != nil {
				handedBy[tr.To] = tr.From
				text := tr.To + " (" + tr.Mode + ")"
				if tr.Outcome == traces.TransferFailed {
					text += ", refused"
				}
				add(Step{Kind: HandsOff, Text: text})
			}
		case traces.KindAgentToolEnter:
			if c := e.AgentTool; c != nil {
				add(Step{Kind: RunsAsTool, Text: c.Callee + " as a tool"})
			}
		case traces.KindExit:
			add(Step{Kind: Exits})
			if e.Exit != nil {
				s.AnswerBy, s.Answer = e.Agent, e.Exit.FinalResult
			}
		case traces.KindBreakLoop:
			add(Step{Kind: Breaks})
		case traces.KindInterrupted:
			add(Step{Kind: Interrupts})
		case traces.KindResumed:
			add(Step{Kind: Resumed})
		case traces.KindError:
			if e.Error != nil {
				add(Step{Kind: Fails, Text: e.Error.Message})
			}
		case traces.KindSessionSet:
			if e.Session != nil {
				s.Session[e.Session.Key] = string(e.Session.Value)
			}
		}
	}
	for i := range s.Turns {
		if s.Turns[i].Outcome == "" {
			s.Turns[i].Took = 0
		}
	}
	return s
}

// reached says how control reached an agent's turn; from is the source of the latest transfer
// to it.
func reached(e traces.Event, from string) string {
	if e.AgentRun == nil {
		return "started"
	}
	switch e.AgentRun.Via {
	case "run":
		return "as the root"
	case "agenttool":
		return "as a tool"
	case "transfer":
		if from != "" {
			return "by transfer from " + from
		}
	case "":
		return "started"
	}
	return "by " + e.AgentRun.Via
}

// Text is the story as a golden file keeps it. Times, ids, token counts and tool results are left
// out, and long texts clipped, so that the story of a replayed run equals the recorded one's and
// reads at a glance.
func (s Story) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "route: %s\nstatus: %s", strings.Join(s.Route, " > "), s.Status)
	if s.Error != "" {
		fmt.Fprintf(&b, " (%s)", Clip(s.Error, 120))
	}
	b.WriteString("\n")
	for i, t := range s.Turns {
		fmt.Fprintf(&b, "\n%d. %s, fed %s\n", i+1, t.Key(), Fed(t.Fed))
		for _, st := range t.Steps {
			b.WriteString("   " + StepLine(st) + "\n")
		}
	}
	if len(s.Session) > 0 {
		b.WriteString("\nsession:\n")
		keys := make([]string, 0, len(s.Session))
		for k := range s.Session {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "   %s = %s\n", k, Clip(s.Session[k], 80))
		}
	}
	if s.AnswerBy != "" {
		fmt.Fprintf(&b, "\nanswer by %s: %q\n", s.AnswerBy, Clip(s.Answer, 200))
	}
	return b.String()
}

// StepLine is a step as a story's text shows it: "calls search({...})", "hands off to x (llm)".
func StepLine(st Step) string {
	switch st.Kind {
	case Calls:
		name, args, _ := strings.Cut(st.Text, "(")
		return fmt.Sprintf("calls %s(%s", name, Clip(strings.TrimSuffix(args, ")"), 60)+")")
	case Says:
		return fmt.Sprintf("says %q", Clip(st.Text, 60))
	case HandsOff, RunsAsTool:
		return string(st.Kind) + " " + st.Text
	case Fails:
		return "error: " + Clip(st.Text, 100)
	}
	return string(st.Kind)
}

// Fed says how many messages an agent was fed, by origin: "1 from the user, 2 from other agents
// (For context:)".
func Fed(msgs []traces.Message) string {
	if len(msgs) == 0 {
		return "nothing"
	}
	var origins []string
	counts := map[string]int{}
	for _, m := range msgs {
		o := Origin(m)
		if counts[o] == 0 {
			origins = append(origins, o)
		}
		counts[o]++
	}
	parts := make([]string, len(origins))
	for i, o := range origins {
		parts[i] = fmt.Sprintf("%d from %s", counts[o], o)
	}
	return strings.Join(parts, ", ")
}

// Clip is s on one line, cut to n runes with "…" when longer.
func Clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// forContext begins eino's rewrite of another agent's message in a handoff's history.
const forContext = "For context:"

// Where a message of an agent's input came from, as Origin says it.
const (
	FromUser         = "the user"
	FromOtherAgents  = "other agents (For context:)"
	FromInstructions = "instructions"
	FromTools        = "tool results"
	FromItself       = "its own replies"
)

// Origin says where a message in an agent's input came from: the user, other agents (eino's
// "For context:" rewrite of their words), instructions, tool results, or the agent's own replies.
func Origin(m traces.Message) string {
	switch {
	case m.Role == "user" && strings.HasPrefix(m.Content, forContext):
		return FromOtherAgents
	case m.Role == "user":
		return FromUser
	case m.Role == "system":
		return FromInstructions
	case m.Role == "tool":
		return FromTools
	default:
		return FromItself
	}
}

// used adds a call's usage u, of the model it named, to t's.
func (t *Turn) used(model string, u traces.Usage) {
	t.Tokens += u.TotalTokens
	t.PromptTokens += u.PromptTokens
	t.CompletionTokens += u.CompletionTokens
	i := slices.IndexFunc(t.Models, func(m ModelUsage) bool { return m.Model == model })
	if i < 0 {
		t.Models = append(t.Models, ModelUsage{Model: model})
		i = len(t.Models) - 1
	}
	m := &t.Models[i]
	m.Calls++
	m.PromptTokens += u.PromptTokens
	m.CompletionTokens += u.CompletionTokens
}
