package lint

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/baton-dev/baton/internal/story"
	"github.com/baton-dev/baton/traces"
)

var rules = []Rule{
	{"ping-pong", Warning, "agents hand the work back and forth with nothing done between the handoffs", pingPong},
	{"lost-request", Warning, "after a transfer, the user's request is not in what the target agent was fed", lostRequest},
	{"context-growth", Warning, "a handoff's target was fed a prompt many times its source's", contextGrowth},
	{"swallowed-action", Warning, "an exit, break-loop or transfer inside an AgentTool stopped at the tool's boundary while the caller carried on", swallowedAction},
	{"refused-transfer", Warning, "eino refused a transfer: no agent of that name is reachable from its source", refusedTransfer},
	{"unreachable-agent", Info, "an agent's instruction names an agent its transfers cannot reach", unreachableAgent},
	{"said-not-done", Info, "a reply announces a handoff but no transfer follows", saidNotDone},
	{"repeated-call", Info, "an agent called the same tool with the same arguments again, and got the same result", repeatedCall},
	{"overwritten-session", Info, "a session value set by one agent was overwritten by another before anything read it", overwrittenSession},
	{"stalled-interrupt", Info, "the run waits at an interrupt that was never resumed", stalledInterrupt},
}

// progress, what ends a ping-pong, is an event that did work: a tool's result, a session value,
// or an answer (a reply with text that hands nothing on). newRun lists them.

func pingPong(r *run, cfg Config) []Finding {
	var out []Finding
	var hops []transfer // transfers made since the last progress
	flush := func() {
		if len(hops) >= cfg.PingPongHops && revisits(hops) {
			f := Finding{Tokens: r.tokensBetween(int(hops[0].at), int(hops[len(hops)-1].at))}
			for _, h := range hops {
				f.Seqs = append(f.Seqs, r.events[h.at].Seq)
				for _, a := range []string{h.from, h.to} {
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
	done := r.progress
	for _, t := range r.transfers {
		for ; len(done) > 0 && done[0] < t.at; done = done[1:] {
			flush()
		}
		if !t.failed {
			hops = append(hops, t)
		}
	}
	for range done {
		flush()
	}
	flush()
	return out
}

// revisits reports whether some agent is handed the work more than once among hops: a cycle,
// not a chain.
func revisits(hops []transfer) bool {
	seen := map[string]bool{hops[0].from: true}
	for _, h := range hops {
		if seen[h.to] {
			return true
		}
		seen[h.to] = true
	}
	return false
}

func lostRequest(r *run, _ Config) []Finding {
	var out []Finding
	var requests openRequests
	calls, starts := r.agentTools, 0
	for _, t := range r.transfers {
		for ; len(calls) > 0 && calls[0] < t.at; calls = calls[1:] {
			switch e := &r.events[calls[0]]; {
			case r.kinds[calls[0]] == kAgentToolEnter && e.AgentTool != nil && e.AgentTool.InputMode != traces.AgentToolInputFullHistory:
				requests.open(e.AgentTool.Callee, e.AgentTool.Request)
			case r.kinds[calls[0]] == kAgentToolExit && e.AgentTool != nil:
				requests.close(e.AgentTool.Callee)
			}
		}
		if t.failed {
			continue
		}
		// Inside an AgentTool call the request is the one the caller's model wrote.
		request := requests.around(t.from, r.request, r.within)
		if request == "" {
			continue
		}
		for starts < len(r.agentStarts) && r.agentStarts[starts].at < t.at {
			starts++
		}
		p := starts
		for p < len(r.agentStarts) && r.agentStarts[p].agent != t.to {
			p++
		}
		if p == len(r.agentStarts) {
			continue
		}
		started := r.agentStarts[p]
		if started.run == nil || started.run.Resumed {
			continue
		}
		if slices.ContainsFunc(started.run.Input, func(m traces.Message) bool { return strings.Contains(m.Content, request) }) {
			continue
		}
		out = append(out, Finding{
			Seqs: []int64{r.events[started.at].Seq, r.events[t.at].Seq}, Agents: []string{t.from, t.to},
			Message: fmt.Sprintf("%s handed the run to %s, whose input (%d messages) does not hold the request %q, verbatim or as a \"For context:\" rewrite",
				t.from, t.to, len(started.run.Input), story.Clip(request, 80)),
		})
	}
	return out
}

// openRequests are the open AgentTool calls' requests, the latest opened last.
type openRequests []struct{ callee, request string }

// open notes callee's call with request, replacing an open call of the same callee.
func (o *openRequests) open(callee, request string) {
	o.close(callee)
	*o = append(*o, struct{ callee, request string }{callee, strings.TrimSpace(request)})
}

// close forgets callee's open call.
func (o *openRequests) close(callee string) {
	*o = slices.DeleteFunc(*o, func(c struct{ callee, request string }) bool { return c.callee == callee })
}

// around returns the request of the innermost open call agent runs within (the latest opened of
// those it does: calls nest), or else the run's.
func (o openRequests) around(agent, run string, within func(agent, root string) bool) string {
	for _, c := range slices.Backward(o) {
		if within(agent, c.callee) {
			return c.request
		}
	}
	return run
}

func contextGrowth(r *run, cfg Config) []Finding {
	var out []Finding
	after := 0 // the place in modelStarts of the first model call after the transfer
	for _, t := range r.transfers {
		if t.failed {
			continue
		}
		after = r.modelStartAfter(t.at, after)
		src, dst := after-1, after
		for src >= 0 && r.modelStarts[src].agent != t.from {
			src--
		}
		for dst < len(r.modelStarts) && r.modelStarts[dst].agent != t.to {
			dst++
		}
		if src < 0 || dst == len(r.modelStarts) {
			continue
		}
		from, to := r.promptOf(src), r.promptOf(dst)
		if from == 0 || to < cfg.ContextMinTokens || float64(to) <= cfg.ContextGrowth*float64(from) {
			continue
		}
		out = append(out, Finding{
			Seqs: []int64{r.events[r.modelStarts[dst].at].Seq, r.events[t.at].Seq, r.events[r.modelStarts[src].at].Seq}, Agents: []string{t.from, t.to},
			Message: fmt.Sprintf("%s's first prompt after the handoff from %s is %d tokens, %.1f times %s's %d; it was fed %s",
				t.to, t.from, to, float64(to)/float64(from), t.from, from, byOrigin(r.modelStarts[dst].model.Input)),
		})
	}
	return out
}

// byOrigin says how a prompt's tokens split by where its messages came from, largest first.
func byOrigin(msgs []traces.Message) string {
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
		shares[i].toks += estimateTokens([]traces.Message{m})
	}
	slices.SortStableFunc(shares, func(a, b share) int { return b.toks - a.toks })
	parts := make([]string, len(shares))
	for i, s := range shares {
		parts[i] = fmt.Sprintf("~%d tokens in %d messages from %s", s.toks, s.messages, s.origin)
	}
	return strings.Join(parts, ", ")
}

func swallowedAction(r *run, _ Config) []Finding {
	type call struct {
		caller, callee string
		actions        []*traces.Event // what stopped at the boundary
	}
	open := map[string]*call{}
	var out []Finding
	for i, k := range r.kinds {
		if k != kAgentToolEnter && k != kAgentToolExit && (len(open) == 0 || k != kExit && k != kBreakLoop && k != kTransfer) {
			continue // what stops at a boundary is only looked at inside an AgentTool call
		}
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
			after := r.next(i, kModelStarted, func(n *traces.Event) bool { return n.Agent == c.caller })
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

func refusedTransfer(r *run, _ Config) []Finding {
	var out []Finding
	for _, t := range r.transfers {
		if t.failed {
			out = append(out, Finding{
				Seqs: []int64{r.events[t.at].Seq}, Agents: []string{t.from, t.to},
				Message: fmt.Sprintf("eino refused %s's transfer to %s: %s", t.from, t.to, story.Clip(r.events[t.at].Transfer.Error, 160)),
			})
		}
	}
	return out
}

// einoAgentLine is how eino's transfer instruction lists each agent a transfer can reach.
var einoAgentLine = regexp.MustCompile(`(?m)^- Agent name: (.+)$`)

// transferInstruction begins the block eino appends to the instruction of an agent that may
// transfer (adk.TransferToAgentInstruction).
const transferInstruction = "Available other agents:"

func unreachableAgent(r *run, _ Config) []Finding {
	var out []Finding
	named := map[[2]string]bool{}
	read := map[string]string{} // the system message last read, by agent: every call repeats it
	for _, s := range r.modelStarts {
		if !slices.Contains(s.model.Tools, transferTool) {
			continue
		}
		for _, m := range s.model.Input {
			if m.Role != "system" || read[s.agent] == m.Content {
				continue
			}
			read[s.agent] = m.Content
			own, block, ok := strings.Cut(m.Content, transferInstruction)
			if !ok {
				continue
			}
			var reachable []string
			for _, l := range einoAgentLine.FindAllStringSubmatch(block, -1) {
				reachable = append(reachable, strings.TrimSpace(l[1]))
			}
			for _, a := range r.agents {
				if a.Name == s.agent || slices.Contains(reachable, a.Name) || named[[2]string{s.agent, a.Name}] || !mentions(own, a.Name) {
					continue
				}
				named[[2]string{s.agent, a.Name}] = true
				out = append(out, Finding{
					Seqs: []int64{r.events[s.at].Seq}, Agents: []string{s.agent, a.Name},
					Message: fmt.Sprintf("%s's instruction names %s, but its transfers reach only %s: a transfer there would be refused",
						s.agent, a.Name, orNone(reachable)),
				})
			}
		}
	}
	return out
}

// announcesHandoff finds a reply's words that hand the work on.
var announcesHandoff = regexp.MustCompile(`(?i)\b(?:hand(?:ing)?\s+(?:\w+\s+){0,2}(?:over\s+|off\s+)?to|transfer(?:ring)?\s+(?:\w+\s+){0,2}to|pass(?:ing)?\s+(?:\w+\s+){0,2}(?:over|along|on)\s+to|rout(?:e|ing)\s+(?:\w+\s+){0,2}to|connect(?:ing)?\s+you\s+(?:with|to)|forward(?:ing)?\s+(?:\w+\s+){0,2}to)\b`)

// handoffStems are the words one of which every match of announcesHandoff holds.
var handoffStems = [...]string{"hand", "transfer", "pass", "rout", "connect", "forward"}

// mayAnnounceHandoff reports whether text may match announcesHandoff: whether it holds one of
// handoffStems in any case, or is not all ASCII (where the regexp's case folding goes beyond
// ASCII's: "ſ" is an "s"). Most replies hold none, and this is many times quicker than the
// regexp.
func mayAnnounceHandoff(text string) bool {
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c >= utf8.RuneSelf {
			return true
		}
		switch c | 0x20 {
		case 'h', 't', 'p', 'r', 'c', 'f':
			for _, stem := range handoffStems {
				if stem[0] == c|0x20 && len(text)-i >= len(stem) && strings.EqualFold(text[i:i+len(stem)], stem) {
					return true
				}
			}
		}
	}
	return false
}

func saidNotDone(r *run, _ Config) []Finding {
	var out []Finding
	for _, i := range r.announced {
		e := &r.events[i]
		text := e.Model.Output.Content
		loc := announcesHandoff.FindStringIndex(text)
		if loc == nil {
			continue
		}
		rest := story.Clip(text[loc[1]:], 80)
		target := ""
		for _, a := range r.agents {
			if a.Name != e.Agent && mentions(rest, a.Name) {
				target = a.Name
				break
			}
		}
		if target == "" {
			continue
		}
		handedOn := r.nextEither(int(i), kTransfer, kAgentFinished, func(n *traces.Event) bool { return n.Agent == e.Agent })
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

func repeatedCall(r *run, _ Config) []Finding {
	// Most calls are made once: only those whose key's hash is some other call's too are
	// grouped by key.
	hashes, again := newHashSet(len(r.toolCalls)), map[uint64]bool{}
	for _, c := range r.toolCalls {
		if hashes.add(c.key) {
			again[c.key|1] = true
		}
	}
	seen := map[callKey][]int64{}
	var order []callKey
	for _, c := range r.toolCalls {
		if !again[c.key|1] {
			continue
		}
		k := r.callKey(c)
		if seen[k] == nil {
			order = append(order, k)
		}
		seen[k] = append(seen[k], r.events[c.started].Seq)
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

func overwrittenSession(r *run, _ Config) []Finding {
	type set struct {
		by string
		at int // index in r.events
	}
	last := map[string]set{}
	var out []Finding
	for i := r.nextIndex(-1, kSessionSet); i >= 0; i = r.nextIndex(i, kSessionSet) {
		e := &r.events[i]
		if e.Session == nil {
			continue
		}
		by := e.Session.SetBy
		if by == "" {
			by = e.Agent
		}
		now := set{by: by, at: i}
		prev, ok := last[e.Session.Key]
		last[e.Session.Key] = now
		if !ok || prev.by == now.by {
			continue
		}
		// The values as text only now: most keys are set again by the agent that set them.
		value := valueText(r.events[prev.at].Session.Value)
		if value == valueText(e.Session.Value) || r.read(value, prev.at+1, i) {
			continue
		}
		out = append(out, Finding{
			Seqs: []int64{e.Seq, r.events[prev.at].Seq}, Agents: []string{now.by, prev.by},
			Message: fmt.Sprintf("%s overwrote the session's %q, which %s had set to %s, before any prompt, tool or message used it",
				now.by, e.Session.Key, prev.by, story.Clip(value, 60)),
		})
	}
	return out
}

// valueText is a session value as it shows in text: a JSON string unquoted, anything else as JSON.
func valueText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(bytes.TrimSpace(raw))
}

// read reports whether value shows in what an event of r.events[from:to] fed a model or a tool,
// or said. Values too short to tell count as read.
func (r *run) read(value string, from, to int) bool {
	if len(value) < 4 {
		return true
	}
	holds := func(msgs []traces.Message) bool {
		return slices.ContainsFunc(msgs, func(m traces.Message) bool { return strings.Contains(m.Content, value) })
	}
	for i := from; i < to; i++ {
		switch e := &r.events[i]; {
		case e.Model != nil && holds(e.Model.Input),
			e.AgentRun != nil && holds(e.AgentRun.Input),
			e.Tool != nil && (strings.Contains(e.Tool.Arguments, value) || strings.Contains(e.Tool.Result, value)),
			e.Message != nil && strings.Contains(e.Message.Content, value):
			return true
		}
	}
	return false
}

func stalledInterrupt(r *run, _ Config) []Finding {
	n := len(r.events)
	if n == 0 || r.kinds[n-1] != kRunFinished || r.events[n-1].Run == nil || r.events[n-1].Run.Status != traces.StatusInterrupted {
		return nil
	}
	at := r.prev(n-1, kInterrupted, func(*traces.Event) bool { return true })
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

// mentions reports whether text names agent: by its name, or by the name's first word
// ("billing" for billing_agent), as a word.
func mentions(text, agent string) bool {
	if hasWord(text, agent) {
		return true
	}
	first, _, ok := strings.Cut(agent, "_")
	return ok && len(first) >= 4 && hasWord(text, first)
}

// hasWord reports whether text holds word, in any case, not as part of a longer word.
func hasWord(text, word string) bool {
	lower, w := strings.ToLower(text), strings.ToLower(word)
	for from := 0; ; {
		i := strings.Index(lower[from:], w)
		if i < 0 {
			return false
		}
		i += from
		end := i + len(w)
		if (i == 0 || !wordByte(lower[i-1])) && (end == len(lower) || !wordByte(lower[end])) {
			return true
		}
		from = i + 1
	}
}

func wordByte(b byte) bool {
	return b == '_' || b >= 'a' && b <= 'z' || b >= '0' && b <= '9' || b >= 'A' && b <= 'Z'
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "no agent"
	}
	return strings.Join(names, ", ")
}
