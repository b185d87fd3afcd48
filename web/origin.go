package web

import (
	"io"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/baton-dev/baton/traces"
)

// Origin says where a message that a model or an agent received came from.
type Origin string

// Origins, in the order a prompt usually holds them. Each is drawn with its own label.
const (
	// OriginInstruction: the agent's own instruction (the system message).
	OriginInstruction Origin = "instruction"
	// OriginTransferInstruction: the "Available other agents" block eino appends to the
	// instruction of an agent that may transfer.
	OriginTransferInstruction Origin = "transfer instruction"
	// OriginUserInput: the run's input, or any user message eino did not write.
	OriginUserInput Origin = "user input"
	// OriginOwnTurn: one of the receiving agent's own earlier assistant messages.
	OriginOwnTurn Origin = "own turn"
	// OriginContext: eino's "For context: [X] ..." rewrite of another agent's message.
	OriginContext Origin = "for context"
	// OriginToolResult: a tool's result (an AgentTool's answer included).
	OriginToolResult Origin = "tool result"
	// OriginAgentToolRequest: the request an AgentTool's caller sent its callee.
	OriginAgentToolRequest Origin = "agenttool request"
)

// Origins lists every origin in drawing order.
var Origins = []Origin{
	OriginInstruction, OriginTransferInstruction, OriginUserInput, OriginOwnTurn,
	OriginContext, OriginToolResult, OriginAgentToolRequest,
}

// Source is the origin of one received message.
type Source struct {
	Origin Origin
	// Agent is the agent the message came from: X of "For context: [X]", the receiver for its own
	// turns and tool results, the callee for an AgentTool's answer, the caller for an AgentTool
	// request; "" for instructions and user input.
	Agent string
	// How details the origin: "said", "called a tool", "tool result", "AgentTool answer"...
	How string
	// Seq is the event the message came from (the model.finished or message that said it, the
	// tool.finished that returned it, the agenttool.entered that sent it, the run.started that
	// gave it); 0 when no event of the trace holds it.
	Seq int64
	// Instruction and Injected split a system message: the agent's own instruction, and eino's
	// transfer instruction appended to it ("" when there is none).
	Instruction, Injected string
}

// InputSources classifies the input of model call seq (a model.started event, or the
// model.finished of a call whose start carried the input) against the events before it. It
// fails with traces.CodeNotFound when tr has no such event, and CodeInvalid when it is no model
// call.
func InputSources(tr traces.Trace, seq int64) ([]traces.Message, []Source, error) {
	i := eventIndex(tr, seq)
	if i < 0 {
		return nil, nil, traces.Errorf(traces.CodeNotFound, "run %s has no event %d", tr.Run.ID, seq)
	}
	e := &tr.Events[i]
	if e.Model == nil {
		return nil, nil, traces.Errorf(traces.CodeInvalid, "event %d is a %s, not a model call", seq, e.Kind)
	}
	if e.Kind == traces.KindModelFinished && len(e.Model.Input) == 0 {
		if j := modelStart(tr, i); j >= 0 {
			i, e = j, &tr.Events[j]
		}
	}
	return e.Model.Input, Sources(tr, i, e.Agent, e.Model.Input), nil
}

// modelStart returns the index of the model.started of the call whose model.finished is at i,
// or -1.
func modelStart(tr traces.Trace, i int) int {
	fin := &tr.Events[i]
	for j := i - 1; j >= 0; j-- {
		o := &tr.Events[j]
		if o.Kind == traces.KindModelStarted && o.Model != nil && o.Model.ID == fin.Model.ID && o.Agent == fin.Agent {
			return j
		}
	}
	return -1
}

// Sources classifies msgs, which agent received at event index i of tr (its model.started or
// agent.started), against the events before i. It returns one Source per message.
func Sources(tr traces.Trace, i int, agent string, msgs []traces.Message) []Source {
	return newSourceIndex().sources(tr, i, agent, msgs)
}

// sources is Sources on an index that callers share: it only reads the events it has not read
// yet, and one that has read past i answers as of i, so inputs can be classified in any order.
//
// The slice it returns is the index's: callers read it before they call the index again. An
// input that begins as the last one classified for the same agent did (a growing conversation,
// or one that branches off it: all but its last message kept, others added) has only the
// messages after what they share classified, as they follow the others: a run of n calls each
// fed the one before's input and a message or two costs n messages, not n², however its inputs
// share their arrays.
func (x *sourceIndex) sources(tr traces.Trace, i int, agent string, msgs []traces.Message) []Source {
	x.advance(tr, i)
	before := int64(math.MaxInt64)
	if i < len(tr.Events) {
		before = tr.Events[i].Seq
	}
	if len(msgs) == 0 {
		return nil
	}
	c, shared := x.chainOf(agent, msgs, before)
	if c != nil && x.requested.between(agent, c.q.before, before) {
		shared = 0 // a message classified as the user's may be a request sent since
	}
	if c == nil {
		c = &chain{q: query{x: x, used: make(map[msgKey]int)}}
		slots := x.chains[agent]
		if slots == nil {
			slots = new([2]*chain)
			x.chains[agent] = slots
		}
		slots[1], slots[0] = slots[0], c
	}
	c.rewind(shared)
	c.msgs = msgs
	c.q.before = before
	for _, m := range msgs[len(c.srcs):] {
		c.q.took = msgKey{}
		c.srcs = append(c.srcs, c.q.classify(agent, m))
		c.took = append(c.took, c.q.took)
	}
	return c.srcs[:len(msgs):len(msgs)]
}

// chainOf returns the chain of agent whose input, classified as of before, shares the most
// messages with the start of msgs, and how many; nil when none shares any.
func (x *sourceIndex) chainOf(agent string, msgs []traces.Message, before int64) (*chain, int) {
	slots := x.chains[agent]
	if slots == nil {
		return nil, 0
	}
	best, shared := -1, 0
	for k, c := range slots {
		if c == nil || before < c.q.before {
			continue
		}
		if n := sharedMessages(c.msgs[:len(c.srcs)], msgs); n > shared {
			best, shared = k, n
		}
	}
	if best < 0 {
		return nil, 0
	}
	slots[0], slots[best] = slots[best], slots[0] // the latest first
	return slots[0], shared
}

// sharedMessages returns how many messages a and b begin with alike. Inputs of one conversation
// share their array, and then need no comparing; an input that branched off another holds
// copies of its messages, whose strings are the same strings.
func sharedMessages(a, b []traces.Message) int {
	n := min(len(a), len(b))
	if n == 0 || &a[0] == &b[0] {
		return n
	}
	for k := range n {
		if x, y := &a[k], &b[k]; x.Role != y.Role || x.Content != y.Content || x.ToolCallID != y.ToolCallID ||
			x.ToolName != y.ToolName || !slices.Equal(x.ToolCalls, y.ToolCalls) {
			return k
		}
	}
	return n
}

// chain is one of the latest inputs of an agent that a sourceIndex classified (two: its agent
// runs' and its model calls' inputs are two conversations): its messages, their sources, and the
// query that classified them, to go on with.
type chain struct {
	msgs []traces.Message // the input last classified; srcs covers its first len(srcs)
	srcs []Source
	took []msgKey // for each message of srcs, the copy it took of the index's events (see query.took)
	q    query
	// cum[k] is the prompt tokens of the first k messages by origin (in Origins' order), as
	// promptTokens counts them, for as many messages as were asked for.
	cum [][numOrigins]int
}

// rewind forgets the chain's messages after its first n, and the copies they took, so that an
// input that shares only those goes on from there.
func (c *chain) rewind(n int) {
	for k := len(c.srcs) - 1; k >= n; k-- {
		if key := c.took[k]; key != (msgKey{}) {
			c.q.used[key]--
		}
	}
	c.srcs, c.took = c.srcs[:min(n, len(c.srcs))], c.took[:min(n, len(c.took))]
	if len(c.cum) > n+1 {
		c.cum = c.cum[:n+1]
	}
}

const numOrigins = 7 // len(Origins)

// promptTokens returns the tokens of msgs (see sources) by origin, in Origins' order, counted
// with tokens: an instruction with eino's transfer block counts as both origins.
func (x *sourceIndex) promptTokens(tr traces.Trace, i int, agent string, msgs []traces.Message, tokens tokenCache) [numOrigins]int {
	srcs := x.sources(tr, i, agent, msgs)
	if len(msgs) == 0 {
		return [numOrigins]int{}
	}
	c := x.chains[agent][0] // the chain of msgs, as sources left it
	if len(c.cum) == 0 {
		c.cum = append(c.cum, [numOrigins]int{})
	}
	for k := len(c.cum) - 1; k < len(msgs); k++ {
		sum := c.cum[k]
		tokens.add(&sum, srcs[k].Origin, msgs[k])
		c.cum = append(c.cum, sum)
	}
	return c.cum[len(msgs)]
}

// add adds m's tokens, of origin o, to sum (by origin, in Origins' order): an instruction with
// eino's transfer block counts as both origins.
func (c tokenCache) add(sum *[numOrigins]int, o Origin, m traces.Message) {
	if o == OriginInstruction {
		if own, injected := splitInstruction(m.Content); injected != "" {
			sum[originIndex(OriginInstruction)] += c.count(own)
			sum[originIndex(OriginTransferInstruction)] += c.count(injected)
			return
		}
	}
	if k := originIndex(o); k >= 0 {
		sum[k] += c.message(m)
	}
}

func originIndex(o Origin) int {
	for k, known := range Origins {
		if known == o {
			return k
		}
	}
	return -1
}

// transferBlock starts eino's transfer instruction (adk.TransferToAgentInstruction), which eino
// joins to the agent's instruction with a blank line; transferBlockEnd ends it.
const (
	transferBlock    = "Available other agents: "
	transferBlockEnd = "When transferring: OUTPUT ONLY THE FUNCTION CALL"
	forContext       = "For context: ["
)

// splitInstruction separates eino's transfer instruction from the agent's own.
func splitInstruction(s string) (own, injected string) {
	at := strings.Index(s, transferBlock)
	if at < 0 {
		return s, ""
	}
	own, injected = strings.TrimRight(s[:at], "\n"), s[at:]
	if end := strings.Index(injected, transferBlockEnd); end >= 0 {
		end += len(transferBlockEnd)
		if rest := strings.TrimLeft(injected[end:], "\n"); rest != "" {
			own += "\n\n" + rest // an additional instruction eino put after the block
		}
		injected = injected[:end]
	}
	return own, injected
}

// rewritten is eino's "For context:" rewrite of m as agent said it (adk's rewriteMessage).
func rewritten(agent string, m traces.Message) string {
	var b strings.Builder
	writeRewritten(&b, agent, m)
	return b.String()
}

// writeRewritten writes rewritten's text to w, piece by piece.
func writeRewritten(w io.StringWriter, agent string, m traces.Message) {
	put := func(pieces ...string) {
		for _, p := range pieces {
			w.WriteString(p)
		}
	}
	put("For context:")
	switch m.Role {
	case "assistant":
		if m.Content != "" {
			put(" [", agent, "] said: ", m.Content, ".")
		}
		for _, c := range m.ToolCalls {
			put(" [", agent, "] called tool: `", c.Name, "` with arguments: ", c.Arguments, ".")
		}
	case "tool":
		if m.Content != "" {
			put(" [", agent, "] `", m.ToolName, "` tool returned result: ", m.Content, ".")
		}
	}
}

// requestSeqs are the agenttool.entered events that sent each agent a request, by the agent, in
// order.
type requestSeqs map[string][]int64

// between reports whether an AgentTool call sent agent a request from seq from up to seq to
// (excluded).
func (r requestSeqs) between(agent string, from, to int64) bool {
	seqs := r[agent]
	k := sort.Search(len(seqs), func(k int) bool { return seqs[k] >= from })
	return k < len(seqs) && seqs[k] < to
}

// clone returns a copy of r that later appends to r leave as it is.
func (r requestSeqs) clone() requestSeqs {
	c := make(requestSeqs, len(r))
	for k, s := range r {
		c[k] = capped(s)
	}
	return c
}

// sourceIndex maps what a received message can be to the events that hold it, for the events
// before next. Each key keeps its events in trace order, so that the n-th copy of a repeated
// message links to the n-th event; primary events (model and tool calls, from callbacks) come
// before stream messages, which mostly echo them and alone hold eino's synthetic transfer
// messages.
type sourceIndex struct {
	primary, echo map[msgKey][]int64
	callees       map[string]int64 // agents that ran as AgentTools: the seq of their first call
	callers       map[int64]string // the caller of each agenttool.entered
	requested     requestSeqs
	runInput      string
	runSeq        int64
	next          int // the index of the first event not read yet
	chains        map[string]*[2]*chain
}

func newSourceIndex() *sourceIndex {
	return &sourceIndex{primary: map[msgKey][]int64{}, echo: map[msgKey][]int64{},
		callees: map[string]int64{}, callers: map[int64]string{}, requested: requestSeqs{}, chains: map[string]*[2]*chain{}}
}

func (x *sourceIndex) add(primary bool, key msgKey, seq int64) {
	if primary {
		x.primary[key] = append(x.primary[key], seq)
	} else {
		x.echo[key] = append(x.echo[key], seq)
	}
}

// query classifies the messages of one input against the index's events before seq before,
// counting in used the copies of each message it has met.
type query struct {
	x      *sourceIndex
	used   map[msgKey]int
	before int64
	took   msgKey // the key the last take counted in used, if any (else zero): what a rewind gives back
}

// take returns the event for the next copy of key, or 0.
func (q *query) take(key msgKey) int64 {
	seqs := q.x.primary[key]
	if !q.has(seqs) {
		seqs = q.x.echo[key]
	}
	if !q.has(seqs) {
		return 0
	}
	seqs = seqs[:sort.Search(len(seqs), func(k int) bool { return seqs[k] >= q.before })]
	n := q.used[key]
	q.used[key] = n + 1
	q.took = key
	return seqs[min(n, len(seqs)-1)]
}

// has reports whether seqs (ascending) holds an event before q.before.
func (q *query) has(seqs []int64) bool { return len(seqs) > 0 && seqs[0] < q.before }

// advance reads the events of tr up to index end (excluded).
func (x *sourceIndex) advance(tr traces.Trace, end int) {
	for ; x.next < end && x.next < len(tr.Events); x.next++ {
		e := &tr.Events[x.next]
		switch {
		case e.Kind == traces.KindRunStarted && e.Run != nil && x.runSeq == 0:
			x.runInput, x.runSeq = e.Run.Input, e.Seq
		case e.Kind == traces.KindModelFinished && e.Model != nil && e.Model.Output != nil:
			x.addMessage(true, e.Agent, *e.Model.Output, e.Seq)
		case e.Kind == traces.KindMessage && e.Message != nil:
			x.addMessage(false, e.Agent, *e.Message, e.Seq)
		case e.Kind == traces.KindToolFinished && e.Tool != nil:
			m := traces.Message{Role: "tool", Content: e.Tool.Result, ToolName: e.Tool.Name, ToolCallID: e.Tool.CallID}
			x.addMessage(true, e.Agent, m, e.Seq)
		case e.Kind == traces.KindAgentToolEnter && e.AgentTool != nil:
			if _, ok := x.callees[e.AgentTool.Callee]; !ok {
				x.callees[e.AgentTool.Callee] = e.Seq
			}
			x.add(true, requestKey(e.AgentTool.Callee, e.AgentTool.Request), e.Seq)
			x.callers[e.Seq] = e.AgentTool.Caller
			x.requested[e.AgentTool.Callee] = append(x.requested[e.AgentTool.Callee], e.Seq)
		}
	}
}

func (x *sourceIndex) addMessage(primary bool, agent string, m traces.Message, seq int64) {
	switch m.Role {
	case "assistant":
		x.add(primary, ownKey(agent, m), seq)
	case "tool":
		x.add(primary, resultKey(m.ToolName, m.ToolCallID), seq)
	default:
		return
	}
	x.add(primary, rewrittenKey(agent, m), seq)
}

// textOrigin returns the origin of m that its role and text say, whoever received it: "" for a
// user message that names no agent, which is an AgentTool request when an AgentTool call sent its
// receiver that request (see classify), else user input.
func textOrigin(m traces.Message) Origin {
	switch m.Role {
	case "system":
		return OriginInstruction
	case "assistant":
		return OriginOwnTurn
	case "tool":
		return OriginToolResult
	}
	if _, _, ok := contextSpeaker(m.Content); ok || m.Content == emptyContext {
		return OriginContext
	}
	return ""
}

// emptyContext is eino's rewrite of another agent's empty message: it does not name the agent.
const emptyContext = "For context:"

// contextSpeaker returns X and what follows "[X]" in eino's "For context: [X] ..." rewrite; ok is
// false when text is no such rewrite.
func contextSpeaker(text string) (name, tail string, ok bool) {
	rest, ok := strings.CutPrefix(text, forContext)
	if !ok {
		return "", "", false
	}
	name, tail, ok = strings.Cut(rest, "]")
	return name, tail, ok && name != ""
}

// classify says where m, received by agent, came from.
func (q *query) classify(agent string, m traces.Message) Source {
	x := q.x
	switch textOrigin(m) {
	case OriginInstruction:
		own, injected := splitInstruction(m.Content)
		return Source{Origin: OriginInstruction, How: "instruction", Instruction: own, Injected: injected}
	case OriginOwnTurn:
		return Source{Origin: OriginOwnTurn, Agent: agent, How: "own turn", Seq: q.take(ownKey(agent, m))}
	case OriginToolResult:
		s := Source{Origin: OriginToolResult, Agent: agent, How: "tool result", Seq: q.take(resultKey(m.ToolName, m.ToolCallID))}
		if first, ok := x.callees[m.ToolName]; ok && first < q.before {
			s.Agent, s.How = m.ToolName, "AgentTool answer"
		}
		return s
	case OriginContext:
		if name, tail, ok := contextSpeaker(m.Content); ok {
			return Source{Origin: OriginContext, Agent: name, How: contextHow(tail), Seq: q.take(contextKey(m.Content))}
		}
		return Source{Origin: OriginContext, How: "empty message", Seq: q.take(contextKey(m.Content))}
	}
	if seq := q.take(requestKey(agent, m.Content)); seq > 0 {
		return Source{Origin: OriginAgentToolRequest, Agent: x.callers[seq], How: "AgentTool request", Seq: seq}
	}
	s := Source{Origin: OriginUserInput, How: "input"}
	if m.Content == x.runInput && x.runSeq < q.before {
		s.Seq = x.runSeq
	}
	return s
}

// contextHow names what a "For context: [X]" message reports: what X said, a tool X called, or a
// tool's result.
func contextHow(tail string) string {
	tail = strings.TrimSpace(tail)
	switch {
	case strings.HasPrefix(tail, "said"):
		return "said"
	case strings.HasPrefix(tail, "called tool"):
		return "called a tool"
	case strings.Contains(tail, "tool returned"):
		return "tool result"
	}
	return "said"
}

// Label is the origin as the page names it.
func (o Origin) Label() string {
	switch o {
	case OriginContext:
		return "For context"
	case OriginAgentToolRequest:
		return "AgentTool request"
	case "":
		return "unknown"
	}
	return strings.ToUpper(string(o[:1])) + string(o[1:])
}
