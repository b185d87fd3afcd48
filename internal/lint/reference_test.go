package lint

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/baton-dev/baton/internal/story"
	"github.com/baton-dev/baton/traces"
)

// The linter as it was before its rules shared one index of the run (main at b03d7e7): each
// rule a plain pass over the events. TestMatchesReference holds Check to it, finding for
// finding. Frozen: a change to a rule's findings changes both.

// Tools eino gives a model for control flow: their calls are handoffs and exits, not work.
const (
	refTransferTool = "transfer_to_agent"
	refExitTool     = "exit"
)

// run is a trace indexed for the rules.
type refRun struct {
	events []traces.Event
	agents []traces.Agent
	// finished holds each model call's model.finished, by call id.
	finished map[string]*traces.Event
	// request is the user's latest request: the last user message of the root agent's first
	// input, else the run's input.
	request string
}

func refNewRun(tr traces.Trace) *refRun {
	r := &refRun{events: tr.Events, agents: tr.Agents, finished: make(map[string]*traces.Event), request: tr.Run.Input}
	rootSeen := false
	for i := range tr.Events {
		e := &tr.Events[i]
		switch {
		case e.Kind == traces.KindRunStarted && e.Run != nil && r.request == "":
			r.request = e.Run.Input
		case e.Kind == traces.KindAgentStarted && !rootSeen && e.AgentRun != nil:
			rootSeen = true
			for _, m := range e.AgentRun.Input {
				if story.Origin(m) == story.FromUser && m.Content != "" {
					r.request = m.Content
				}
			}
		case e.Kind == traces.KindModelFinished && e.Model != nil:
			r.finished[e.Model.ID] = e
		}
	}
	r.request = strings.TrimSpace(r.request)
	return r
}

// promptTokens is the size of a model call's prompt: what the model reported, else an estimate
// of four characters a token.
func (r *refRun) promptTokens(started *traces.Event) int {
	if f := r.finished[started.Model.ID]; f != nil && f.Model.Usage != nil && f.Model.Usage.PromptTokens > 0 {
		return f.Model.Usage.PromptTokens
	}
	return refEstimateTokens(started.Model.Input)
}

func refEstimateTokens(msgs []traces.Message) int {
	n := 0
	for _, m := range msgs {
		n += len(m.Content)
		for _, c := range m.ToolCalls {
			n += len(c.Name) + len(c.Arguments)
		}
	}
	return (n + 3) / 4
}

// tokensBetween sums the tokens of the model calls that finished from seq from to seq to.
func (r *refRun) tokensBetween(from, to int64) int {
	n := 0
	for _, e := range r.events {
		if e.Seq >= from && e.Seq <= to && e.Kind == traces.KindModelFinished && e.Model != nil && e.Model.Usage != nil {
			n += e.Model.Usage.TotalTokens
		}
	}
	return n
}

// callsTransfer reports whether a model's reply calls a tool that hands control on.
func refCallsTransfer(m *traces.Message) bool {
	for _, c := range m.ToolCalls {
		if c.Name == refTransferTool {
			return true
		}
	}
	return false
}

type refRule struct {
	ID       string
	Severity Severity
	Explain  string
	check    func(r *refRun, cfg Config) []Finding
}

var refRules = []refRule{
	{"ping-pong", Warning, "agents hand the work back and forth with nothing done between the handoffs", refPingPong},
	{"lost-request", Warning, "after a transfer, the user's request is not in what the target agent was fed", refLostRequest},
	{"context-growth", Warning, "a handoff's target was fed a prompt many times its source's", refContextGrowth},
	{"swallowed-action", Warning, "an exit, break-loop or transfer inside an AgentTool stopped at the tool's boundary while the caller carried on", refSwallowedAction},
	{"refused-transfer", Warning, "eino refused a transfer: no agent of that name is reachable from its source", refRefusedTransfer},
	{"unreachable-agent", Info, "an agent's instruction names an agent its transfers cannot reach", refUnreachableAgent},
	{"said-not-done", Info, "a reply announces a handoff but no transfer follows", refSaidNotDone},
	{"repeated-call", Info, "an agent called the same tool with the same arguments again, and got the same result", refRepeatedCall},
	{"overwritten-session", Info, "a session value set by one agent was overwritten by another before anything read it", refOverwrittenSession},
	{"stalled-interrupt", Info, "the run waits at an interrupt that was never resumed", refStalledInterrupt},
}

// progress reports whether e did work: a tool's result, a session value, or an answer (a reply
// with text that hands nothing on).
func refProgress(e *traces.Event) bool {
	switch e.Kind {
	case traces.KindToolFinished:
		return e.Tool != nil && e.Tool.Name != refTransferTool && e.Tool.Name != refExitTool && e.Tool.Error == "" && !e.Tool.Interrupted
	case traces.KindSessionSet:
		return true
	case traces.KindModelFinished:
		return e.Model != nil && e.Model.Output != nil && e.Model.Output.Content != "" && !refCallsTransfer(e.Model.Output)
	}
	return false
}

func refPingPong(r *refRun, cfg Config) []Finding {
	var out []Finding
	var hops []*traces.Event // transfers made since the last progress
	flush := func() {
		if len(hops) >= cfg.PingPongHops && refRevisits(hops) {
			f := Finding{Tokens: r.tokensBetween(hops[0].Seq, hops[len(hops)-1].Seq)}
			for _, h := range hops {
				f.Seqs = append(f.Seqs, h.Seq)
				for _, a := range []string{h.Transfer.From, h.Transfer.To} {
					if !slices.Contains(f.Agents, a) {
						f.Agents = append(f.Agents, a)
					}
				}
			}
			f.Message = fmt.Sprintf("%s handed the work around %d times with nothing done between (no tool result, session value or answer), for %d tokens",
				strings.Join(f.Agents, ", "), len(hops), f.Tokens)
			out = append(out, f)
		}
		hops = hops[:0]
	}
	for i := range r.events {
		e := &r.events[i]
		switch {
		case e.Kind == traces.KindTransfer && e.Transfer != nil && e.Transfer.Outcome != traces.TransferFailed:
			hops = append(hops, e)
		case refProgress(e):
			flush()
		}
	}
	flush()
	return out
}

// revisits reports whether some agent is handed the work more than once among hops: a cycle,
// not a chain.
func refRevisits(hops []*traces.Event) bool {
	seen := map[string]bool{hops[0].Transfer.From: true}
	for _, h := range hops {
		if seen[h.Transfer.To] {
			return true
		}
		seen[h.Transfer.To] = true
	}
	return false
}

func refLostRequest(r *refRun, _ Config) []Finding {
	var out []Finding
	type open struct{ callee, request string }
	var requests []open // the open AgentTool calls' requests, the latest opened last
	for i := range r.events {
		t := &r.events[i]
		switch {
		case t.Kind == traces.KindAgentToolEnter && t.AgentTool != nil && t.AgentTool.InputMode != traces.AgentToolInputFullHistory:
			requests = slices.DeleteFunc(requests, func(o open) bool { return o.callee == t.AgentTool.Callee })
			requests = append(requests, open{t.AgentTool.Callee, strings.TrimSpace(t.AgentTool.Request)})
		case t.Kind == traces.KindAgentToolExit && t.AgentTool != nil:
			requests = slices.DeleteFunc(requests, func(o open) bool { return o.callee == t.AgentTool.Callee })
		}
		if t.Kind != traces.KindTransfer || t.Transfer == nil || t.Transfer.Outcome == traces.TransferFailed {
			continue
		}
		// Inside an AgentTool call the request is the one the caller's model wrote: the
		// innermost call's, where calls nest.
		request := r.request
		for j := len(requests) - 1; j >= 0; j-- {
			if r.within(t.Transfer.From, requests[j].callee) {
				request = requests[j].request
				break
			}
		}
		if request == "" {
			continue
		}
		started := r.next(i, func(e *traces.Event) bool {
			return e.Kind == traces.KindAgentStarted && e.Agent == t.Transfer.To
		})
		if started == nil || started.AgentRun == nil || started.AgentRun.Resumed {
			continue
		}
		if slices.ContainsFunc(started.AgentRun.Input, func(m traces.Message) bool { return strings.Contains(m.Content, request) }) {
			continue
		}
		out = append(out, Finding{
			Seqs: []int64{started.Seq, t.Seq}, Agents: []string{t.Transfer.From, t.Transfer.To},
			Message: fmt.Sprintf("%s handed the run to %s, whose input (%d messages) does not hold the request %q, verbatim or as a \"For context:\" rewrite",
				t.Transfer.From, t.Transfer.To, len(started.AgentRun.Input), story.Clip(request, 80)),
		})
	}
	return out
}

func refContextGrowth(r *refRun, cfg Config) []Finding {
	var out []Finding
	for i := range r.events {
		t := &r.events[i]
		if t.Kind != traces.KindTransfer || t.Transfer == nil || t.Transfer.Outcome == traces.TransferFailed {
			continue
		}
		src := r.prev(i, func(e *traces.Event) bool {
			return e.Kind == traces.KindModelStarted && e.Agent == t.Transfer.From && e.Model != nil
		})
		dst := r.next(i, func(e *traces.Event) bool {
			return e.Kind == traces.KindModelStarted && e.Agent == t.Transfer.To && e.Model != nil
		})
		if src == nil || dst == nil {
			continue
		}
		from, to := r.promptTokens(src), r.promptTokens(dst)
		if from == 0 || to < cfg.ContextMinTokens || float64(to) <= cfg.ContextGrowth*float64(from) {
			continue
		}
		out = append(out, Finding{
			Seqs: []int64{dst.Seq, t.Seq, src.Seq}, Agents: []string{t.Transfer.From, t.Transfer.To},
			Message: fmt.Sprintf("%s's first prompt after the handoff from %s is %d tokens, %.1f times %s's %d; it was fed %s",
				t.Transfer.To, t.Transfer.From, to, float64(to)/float64(from), t.Transfer.From, from, refByOrigin(dst.Model.Input)),
		})
	}
	return out
}

// byOrigin says how a prompt's tokens split by where its messages came from, largest first.
func refByOrigin(msgs []traces.Message) string {
	type share struct {
		origin         string
		messages, toks int
	}
	var shares []share
	for _, m := range msgs {
		o := story.Origin(m)
		i := slices.IndexFunc(shares, func(s share) bool { return s.origin == o })
		if i < 0 {
			shares = append(shares, share{origin: o})
			i = len(shares) - 1
		}
		shares[i].messages++
		shares[i].toks += refEstimateTokens([]traces.Message{m})
	}
	slices.SortStableFunc(shares, func(a, b share) int { return b.toks - a.toks })
	parts := make([]string, len(shares))
	for i, s := range shares {
		parts[i] = fmt.Sprintf("~%d tokens in %d messages from %s", s.toks, s.messages, s.origin)
	}
	return strings.Join(parts, ", ")
}

func refSwallowedAction(r *refRun, _ Config) []Finding {
	type call struct {
		caller, callee string
		actions        []*traces.Event // what stopped at the boundary
	}
	open := map[string]*call{}
	var out []Finding
	for i := range r.events {
		e := &r.events[i]
		switch e.Kind {
		case traces.KindAgentToolEnter:
			if e.AgentTool != nil {
				open[e.AgentTool.CallID] = &call{caller: e.AgentTool.Caller, callee: e.AgentTool.Callee}
			}
		case traces.KindExit, traces.KindBreakLoop, traces.KindTransfer:
			for _, c := range open {
				if !r.within(e.Agent, c.callee) {
					continue
				}
				if e.Kind == traces.KindTransfer && e.Transfer != nil && r.within(e.Transfer.To, c.callee) {
					continue // a handoff among the callee's own agents: the tool's business
				}
				c.actions = append(c.actions, e)
			}
		case traces.KindAgentToolExit:
			if e.AgentTool == nil {
				continue
			}
			c := open[e.AgentTool.CallID]
			delete(open, e.AgentTool.CallID)
			if c == nil || len(c.actions) == 0 {
				continue
			}
			after := r.next(i, func(n *traces.Event) bool { return n.Kind == traces.KindModelStarted && n.Agent == c.caller })
			if after == nil {
				continue
			}
			for _, a := range c.actions {
				out = append(out, Finding{
					Seqs: []int64{a.Seq, e.Seq, after.Seq}, Agents: []string{a.Agent, c.caller},
					Message: fmt.Sprintf("%s's %s inside the AgentTool call %s → %s stopped at the tool's boundary: %s carried on as if it had been a tool result",
						a.Agent, a.Kind, c.caller, c.callee, c.caller),
				})
			}
		}
	}
	return out
}

func refRefusedTransfer(r *refRun, _ Config) []Finding {
	var out []Finding
	for _, e := range r.events {
		if e.Kind == traces.KindTransfer && e.Transfer != nil && e.Transfer.Outcome == traces.TransferFailed {
			out = append(out, Finding{
				Seqs: []int64{e.Seq}, Agents: []string{e.Transfer.From, e.Transfer.To},
				Message: fmt.Sprintf("eino refused %s's transfer to %s: %s", e.Transfer.From, e.Transfer.To, story.Clip(e.Transfer.Error, 160)),
			})
		}
	}
	return out
}

// einoAgentLine is how eino's transfer instruction lists each agent a transfer can reach.
var refEinoAgentLine = regexp.MustCompile(`(?m)^- Agent name: (.+)$`)

// transferInstruction begins the block eino appends to the instruction of an agent that may
// transfer (adk.TransferToAgentInstruction).
const refTransferInstruction = "Available other agents:"

func refUnreachableAgent(r *refRun, _ Config) []Finding {
	var out []Finding
	named := map[[2]string]bool{}
	read := map[string]string{} // the system message last read, by agent: every call repeats it
	for _, e := range r.events {
		if e.Kind != traces.KindModelStarted || e.Model == nil || !slices.Contains(e.Model.Tools, refTransferTool) {
			continue
		}
		for _, m := range e.Model.Input {
			if m.Role != "system" || read[e.Agent] == m.Content {
				continue
			}
			read[e.Agent] = m.Content
			own, block, ok := strings.Cut(m.Content, refTransferInstruction)
			if !ok {
				continue
			}
			var reachable []string
			for _, l := range refEinoAgentLine.FindAllStringSubmatch(block, -1) {
				reachable = append(reachable, strings.TrimSpace(l[1]))
			}
			for _, a := range r.agents {
				if a.Name == e.Agent || slices.Contains(reachable, a.Name) || named[[2]string{e.Agent, a.Name}] || !refMentions(own, a.Name) {
					continue
				}
				named[[2]string{e.Agent, a.Name}] = true
				out = append(out, Finding{
					Seqs: []int64{e.Seq}, Agents: []string{e.Agent, a.Name},
					Message: fmt.Sprintf("%s's instruction names %s, but its transfers reach only %s: a transfer there would be refused",
						e.Agent, a.Name, refOrNone(reachable)),
				})
			}
		}
	}
	return out
}

// announcesHandoff finds a reply's words that hand the work on.
var refAnnouncesHandoff = regexp.MustCompile(`(?i)\b(?:hand(?:ing)?\s+(?:\w+\s+){0,2}(?:over\s+|off\s+)?to|transfer(?:ring)?\s+(?:\w+\s+){0,2}to|pass(?:ing)?\s+(?:\w+\s+){0,2}(?:over|along|on)\s+to|rout(?:e|ing)\s+(?:\w+\s+){0,2}to|connect(?:ing)?\s+you\s+(?:with|to)|forward(?:ing)?\s+(?:\w+\s+){0,2}to)\b`)

func refSaidNotDone(r *refRun, _ Config) []Finding {
	var out []Finding
	for i := range r.events {
		e := &r.events[i]
		if e.Kind != traces.KindModelFinished || e.Model == nil || e.Model.Output == nil || refCallsTransfer(e.Model.Output) {
			continue
		}
		text := e.Model.Output.Content
		loc := refAnnouncesHandoff.FindStringIndex(text)
		if loc == nil {
			continue
		}
		rest := story.Clip(text[loc[1]:], 80)
		target := ""
		for _, a := range r.agents {
			if a.Name != e.Agent && refMentions(rest, a.Name) {
				target = a.Name
				break
			}
		}
		if target == "" {
			continue
		}
		handedOn := r.next(i, func(n *traces.Event) bool {
			return (n.Kind == traces.KindTransfer && n.Agent == e.Agent) || (n.Kind == traces.KindAgentFinished && n.Agent == e.Agent)
		})
		if handedOn != nil && handedOn.Kind == traces.KindTransfer {
			continue
		}
		out = append(out, Finding{
			Seqs: []int64{e.Seq}, Agents: []string{e.Agent, target},
			Message: fmt.Sprintf("%s said %q but called no transfer: the run stayed with %s", e.Agent, story.Clip(text[loc[0]:], 80), e.Agent),
		})
	}
	return out
}

func refRepeatedCall(r *refRun, _ Config) []Finding {
	started := map[string]*traces.Event{} // tool.started by call id
	type key struct{ agent, tool, args, result string }
	seen := map[key][]int64{}
	var order []key
	for i := range r.events {
		e := &r.events[i]
		if e.Tool == nil || e.Tool.Name == refTransferTool || e.Tool.Name == refExitTool {
			continue
		}
		switch e.Kind {
		case traces.KindToolStarted:
			started[e.Tool.CallID] = e
		case traces.KindToolFinished:
			s := started[e.Tool.CallID]
			if s == nil || e.Tool.Error != "" || e.Tool.Interrupted {
				continue
			}
			k := key{s.Agent, s.Tool.Name, s.Tool.Arguments, e.Tool.Result}
			if seen[k] == nil {
				order = append(order, k)
			}
			seen[k] = append(seen[k], s.Seq)
		}
	}
	var out []Finding
	for _, k := range order {
		if seqs := seen[k]; len(seqs) > 1 {
			out = append(out, Finding{
				Seqs: append(seqs[1:len(seqs):len(seqs)], seqs[0]), Agents: []string{k.agent},
				Message: fmt.Sprintf("%s called %s(%s) %d times and got the same result each time", k.agent, k.tool, story.Clip(k.args, 60), len(seqs)),
			})
		}
	}
	return out
}

func refOverwrittenSession(r *refRun, _ Config) []Finding {
	type set struct {
		by, value string
		at        int // index in r.events
	}
	last := map[string]set{}
	var out []Finding
	for i := range r.events {
		e := &r.events[i]
		if e.Kind != traces.KindSessionSet || e.Session == nil {
			continue
		}
		by := e.Session.SetBy
		if by == "" {
			by = e.Agent
		}
		now := set{by: by, value: refValueText(e.Session.Value), at: i}
		prev, ok := last[e.Session.Key]
		last[e.Session.Key] = now
		if !ok || prev.by == now.by || prev.value == now.value || r.read(prev.value, prev.at+1, i) {
			continue
		}
		out = append(out, Finding{
			Seqs: []int64{e.Seq, r.events[prev.at].Seq}, Agents: []string{now.by, prev.by},
			Message: fmt.Sprintf("%s overwrote the session's %q, which %s had set to %s, before any prompt, tool or message used it",
				now.by, e.Session.Key, prev.by, story.Clip(prev.value, 60)),
		})
	}
	return out
}

// valueText is a session value as it shows in text: a JSON string unquoted, anything else as JSON.
func refValueText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(bytes.TrimSpace(raw))
}

// read reports whether value shows in what an event of r.events[from:to] fed a model or a tool,
// or said. Values too short to tell count as read.
func (r *refRun) read(value string, from, to int) bool {
	if len(value) < 4 {
		return true
	}
	holds := func(msgs []traces.Message) bool {
		return slices.ContainsFunc(msgs, func(m traces.Message) bool { return strings.Contains(m.Content, value) })
	}
	for _, e := range r.events[from:to] {
		switch {
		case e.Model != nil && holds(e.Model.Input),
			e.AgentRun != nil && holds(e.AgentRun.Input),
			e.Tool != nil && (strings.Contains(e.Tool.Arguments, value) || strings.Contains(e.Tool.Result, value)),
			e.Message != nil && strings.Contains(e.Message.Content, value):
			return true
		}
	}
	return false
}

func refStalledInterrupt(r *refRun, _ Config) []Finding {
	n := len(r.events)
	if n == 0 || r.events[n-1].Kind != traces.KindRunFinished || r.events[n-1].Run == nil || r.events[n-1].Run.Status != traces.StatusInterrupted {
		return nil
	}
	at := r.prev(n-1, func(e *traces.Event) bool { return e.Kind == traces.KindInterrupted })
	if at == nil {
		return nil
	}
	what := "an interrupt"
	if at.Interrupt != nil && at.Interrupt.Info != "" {
		what = fmt.Sprintf("%q", story.Clip(at.Interrupt.Info, 80))
	}
	return []Finding{{
		Seqs: []int64{at.Seq, r.events[n-1].Seq}, Agents: []string{at.Agent},
		Message: fmt.Sprintf("the run stopped at %s and waits for a resume that never came", what),
	}}
}

// next returns the first event after index i that match accepts, or nil.
func (r *refRun) next(i int, match func(*traces.Event) bool) *traces.Event {
	for j := i + 1; j < len(r.events); j++ {
		if match(&r.events[j]) {
			return &r.events[j]
		}
	}
	return nil
}

// prev returns the last event before index i that match accepts, or nil.
func (r *refRun) prev(i int, match func(*traces.Event) bool) *traces.Event {
	for j := i - 1; j >= 0; j-- {
		if match(&r.events[j]) {
			return &r.events[j]
		}
	}
	return nil
}

// within reports whether agent is root or below it in the run's tree.
func (r *refRun) within(agent, root string) bool {
	for depth := 0; agent != "" && depth <= len(r.agents); depth++ {
		if agent == root {
			return true
		}
		i := slices.IndexFunc(r.agents, func(a traces.Agent) bool { return a.Name == agent })
		if i < 0 {
			return false
		}
		agent = r.agents[i].Parent
	}
	return false
}

// mentions reports whether text names agent: by its name, or by the name's first word
// ("billing" for billing_agent), as a word.
func refMentions(text, agent string) bool {
	if refHasWord(text, agent) {
		return true
	}
	first, _, ok := strings.Cut(agent, "_")
	return ok && len(first) >= 4 && refHasWord(text, first)
}

// hasWord reports whether text holds word, in any case, not as part of a longer word.
func refHasWord(text, word string) bool {
	lower, w := strings.ToLower(text), strings.ToLower(word)
	for from := 0; ; {
		i := strings.Index(lower[from:], w)
		if i < 0 {
			return false
		}
		i += from
		end := i + len(w)
		if (i == 0 || !refWordByte(lower[i-1])) && (end == len(lower) || !refWordByte(lower[end])) {
			return true
		}
		from = i + 1
	}
}

func refWordByte(b byte) bool {
	return b == '_' || b >= 'a' && b <= 'z' || b >= '0' && b <= '9' || b >= 'A' && b <= 'Z'
}

func refOrNone(names []string) string {
	if len(names) == 0 {
		return "no agent"
	}
	return strings.Join(names, ", ")
}

func refCheck(tr traces.Trace, cfg Config) []Finding {
	cfg = cfg.withDefaults()
	r := refNewRun(tr)
	var out []Finding
	for _, rule := range refRules {
		if slices.Contains(cfg.Disable, rule.ID) {
			continue
		}
		sev, ok := cfg.Severity[rule.ID]
		if !ok {
			sev = rule.Severity
		}
		for _, f := range rule.check(r, cfg) {
			f.Rule, f.Severity = rule.ID, sev
			out = append(out, f)
		}
	}
	slices.SortStableFunc(out, func(a, b Finding) int { return cmp.Compare(a.Seqs[0], b.Seqs[0]) })
	return out
}
