package otlp

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/baton-dev/baton/traces"
)

// Operation names of the GenAI semantic conventions (gen_ai.operation.name), which also start
// span names.
const (
	opInvokeAgent = "invoke_agent"
	opChat        = "chat"
	opExecuteTool = "execute_tool"
	transferTool  = "transfer_to_agent" // eino's transfer tool, and the name of a transfer's span

	// unfinished is the status of a call that never recorded its end.
	unfinished = "the call never finished: it ended with its agent"
)

// runSpans turns one run's events, fed in order, into spans: one goroutine owns it. Every span
// starts and ends at the recorded times of its events, so a finished run exported late has the
// timing it had.
type runSpans struct {
	tracer  trace.Tracer
	content bool
	run     traces.Run
	agents  map[string]traces.Agent // the tree as known when the run started: descriptions
	root    string                  // the root agent, once known

	runSpan trace.Span      // nil before run.started (or resumed) and after run.finished
	runCtx  context.Context // carries runSpan
	visits  map[string][]*visit
	models  map[string]*modelSpan // chat spans by model call id
	tools   map[string]*toolSpan  // execute_tool spans by call id
	// callees holds, per agent called as a tool, the tool spans of the calls it has not started
	// answering yet, oldest first: its visit goes under the first.
	callees map[string][]*toolSpan
	handoff *handoff // the last transfer, until its target starts
}

// visit is an agent's visit (agent.started to agent.finished) still going on.
type visit struct {
	span   trace.Span
	ctx    context.Context // carries span: the parent of the visit's calls
	parent context.Context // what span is under: a transfer's target goes there too
}

// modelSpan is a model call's span, and the agent whose call it is.
type modelSpan struct {
	span  trace.Span
	agent string
}

// toolSpan is a tool call's span. A transfer_to_agent call stays open after tool.finished until
// its transfer event says where control went; ended holds when the tool itself finished.
type toolSpan struct {
	span   trace.Span
	ctx    context.Context
	agent  string
	callID string
	ended  *traces.Event
}

// handoff is where a transfer's target agent starts: beside the agent that transferred, with a
// link to the transfer's span.
type handoff struct {
	to     string
	parent context.Context
	link   trace.Link
}

func newRunSpans(tracer trace.Tracer, content bool, run traces.Run, agents []traces.Agent) *runSpans {
	s := &runSpans{tracer: tracer, content: content, run: run, agents: make(map[string]traces.Agent, len(agents))}
	for _, a := range agents {
		s.agents[a.Name] = a
		if a.Parent == "" && s.root == "" {
			s.root = a.Name
		}
	}
	s.reset()
	return s
}

// reset forgets the spans of a part of the run that has ended.
func (s *runSpans) reset() {
	s.runSpan, s.runCtx, s.handoff = nil, nil, nil
	s.visits = make(map[string][]*visit)
	s.models = make(map[string]*modelSpan)
	s.tools = make(map[string]*toolSpan)
	s.callees = make(map[string][]*toolSpan)
}

// add turns one event into spans, span events and attributes.
func (s *runSpans) add(e traces.Event) {
	if s.runSpan == nil && e.Kind != traces.KindRunFinished {
		s.startRun(e)
	}
	switch e.Kind {
	case traces.KindRunFinished:
		s.finishRun(e)
	case traces.KindAgentStarted:
		s.startVisit(e)
	case traces.KindAgentFinished:
		s.finishVisit(e)
	case traces.KindModelStarted:
		s.startModel(e)
	case traces.KindModelFinished:
		s.finishModel(e)
	case traces.KindToolStarted:
		s.startTool(e)
	case traces.KindToolFinished:
		s.finishTool(e)
	case traces.KindTransfer:
		s.transfer(e)
	case traces.KindAgentToolEnter:
		s.enterAgentTool(e)
	case traces.KindAgentToolExit:
		s.exitAgentTool(e)
	default:
		s.mark(e)
	}
}

// startRun starts the run's span at its first event: usually run.started; resumed when a later
// part of an interrupted run begins, which goes under the run's first span (its ids derive from
// the run).
func (s *runSpans) startRun(e traces.Event) {
	ctx := context.Background()
	attrs := []attribute.KeyValue{
		attribute.String("gen_ai.operation.name", opInvokeAgent),
		attribute.String("baton.run.id", s.run.ID),
		attribute.String("baton.flow", s.run.Flow),
	}
	attrs = s.agentAttrs(attrs, s.root)
	if e.Kind != traces.KindResumed {
		// A run starts when its run.started says (an app's, by the app's clock), which the ids of
		// its spans derive from: so do those of a resumed part, from the run as recorded.
		s.run.StartedAt = e.Time
		ctx = context.WithValue(ctx, runKey{}, s.run)
		if s.content && e.Kind == traces.KindRunStarted && e.Run.Input != "" {
			attrs = append(attrs, attribute.String("gen_ai.input.messages",
				messagesJSON([]traces.Message{{Role: "user", Content: e.Run.Input}})))
		}
	} else {
		ctx = trace.ContextWithRemoteSpanContext(ctx, trace.NewSpanContext(trace.SpanContextConfig{
			TraceID: runTraceID(s.run), SpanID: runSpanID(s.run), TraceFlags: trace.FlagsSampled, Remote: true,
		}))
		attrs = append(attrs, attribute.Bool("baton.run.resumed", true))
	}
	s.runCtx, s.runSpan = s.tracer.Start(ctx, spanName(opInvokeAgent, s.root),
		trace.WithTimestamp(e.Time), trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
}

// finishRun ends every span still open, then the run's, with the run's final status.
func (s *runSpans) finishRun(e traces.Event) {
	if s.runSpan == nil {
		return
	}
	end := trace.WithTimestamp(e.Time)
	for _, m := range s.models {
		m.span.End(end)
	}
	for _, t := range s.tools {
		t.span.End(end)
	}
	for _, vs := range s.visits {
		for _, v := range vs {
			v.span.End(end)
		}
	}
	s.runSpan.SetAttributes(attribute.String("baton.run.status", string(e.Run.Status)))
	switch e.Run.Status {
	case traces.StatusFailed, traces.StatusCanceled:
		msg := e.Run.Error
		if msg == "" {
			msg = "the run " + string(e.Run.Status)
		}
		s.runSpan.SetStatus(codes.Error, msg)
	}
	s.runSpan.End(end)
	s.reset()
}

// startVisit starts an agent's visit: under the run, the workflow agent that runs it, the tool
// call that runs it as an AgentTool, or beside the agent that transferred to it.
func (s *runSpans) startVisit(e traces.Event) {
	a := e.AgentRun
	if s.root == "" && a.Via == "run" {
		s.root = e.Agent
		s.runSpan.SetName(spanName(opInvokeAgent, e.Agent))
		s.runSpan.SetAttributes(s.agentAttrs(nil, e.Agent)...)
	}
	parent := s.parentOfVisit(e)
	attrs := s.agentAttrs([]attribute.KeyValue{attribute.String("gen_ai.operation.name", opInvokeAgent)}, e.Agent)
	if a.Via != "" {
		attrs = append(attrs, attribute.String("baton.agent.via", a.Via))
	}
	if a.Iteration > 0 {
		attrs = append(attrs, attribute.Int("baton.agent.iteration", a.Iteration))
	}
	if a.Resumed {
		attrs = append(attrs, attribute.Bool("baton.agent.resumed", true))
	}
	if s.content && len(a.Input) > 0 {
		attrs = s.inputAttrs(attrs, a.Input)
	}
	opts := []trace.SpanStartOption{trace.WithTimestamp(e.Time), trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...)}
	if h := s.handoff; h != nil && h.to == e.Agent && a.Via == "transfer" {
		opts = append(opts, trace.WithLinks(h.link))
		s.handoff = nil
	}
	ctx, span := s.tracer.Start(parent, spanName(opInvokeAgent, e.Agent), opts...)
	s.visits[e.Agent] = append(s.visits[e.Agent], &visit{span: span, ctx: ctx, parent: parent})
}

// parentOfVisit returns the context a new visit's span starts in.
func (s *runSpans) parentOfVisit(e traces.Event) context.Context {
	switch e.AgentRun.Via {
	case "agenttool":
		if calls := s.callees[e.Agent]; len(calls) > 0 {
			s.callees[e.Agent] = calls[1:]
			return calls[0].ctx
		}
	case "transfer":
		if h := s.handoff; h != nil && h.to == e.Agent {
			return h.parent
		}
	}
	// The run, a workflow agent, or whoever the run path says ran it last and is still at work.
	return s.contextOf("", e.RunPath[:max(len(e.RunPath)-1, 0)])
}

// finishVisit ends an agent's current visit, with its error when its own work failed, and the
// calls it left open: transfer spans waiting for their transfer event, and calls that never
// finished (a tool that panicked gets no end), which end with the visit.
func (s *runSpans) finishVisit(e traces.Event) {
	for key, t := range s.tools {
		if t.agent != e.Agent {
			continue
		}
		delete(s.tools, key)
		if t.ended != nil {
			t.span.End(trace.WithTimestamp(t.ended.Time))
			continue
		}
		t.span.SetStatus(codes.Error, unfinished)
		t.span.End(trace.WithTimestamp(e.Time))
	}
	for id, m := range s.models {
		if m.agent == e.Agent {
			delete(s.models, id)
			m.span.SetStatus(codes.Error, unfinished)
			m.span.End(trace.WithTimestamp(e.Time))
		}
	}
	vs := s.visits[e.Agent]
	if len(vs) == 0 {
		return
	}
	v := vs[len(vs)-1]
	s.visits[e.Agent] = vs[:len(vs)-1]
	if a := e.AgentRun; a.Error != "" {
		v.span.SetStatus(codes.Error, a.Error)
	} else if a.Interrupted {
		v.span.SetAttributes(attribute.Bool("baton.agent.interrupted", true))
	}
	v.span.End(trace.WithTimestamp(e.Time))
}

// mark records the events that are moments, not spans (session changes, interrupts, exits, loop
// breaks, errors, lost events), on the span of the agent they belong to.
func (s *runSpans) mark(e traces.Event) {
	span := trace.SpanFromContext(s.contextOf(e.Agent, e.RunPath))
	at := trace.WithTimestamp(e.Time)
	var attrs []attribute.KeyValue
	switch e.Kind {
	case traces.KindSessionSet:
		attrs = append(attrs, attribute.String("baton.session.key", e.Session.Key))
		if e.Session.SetBy != "" {
			attrs = append(attrs, attribute.String("baton.session.set_by", e.Session.SetBy))
		}
		if s.content {
			attrs = append(attrs, attribute.String("baton.session.value", string(e.Session.Value)))
		}
	case traces.KindInterrupted, traces.KindResumed:
		attrs = append(attrs, attribute.String("baton.interrupt.id", e.Interrupt.ID))
		if e.Interrupt.Address != "" {
			attrs = append(attrs, attribute.String("baton.interrupt.address", e.Interrupt.Address))
		}
		if s.content && e.Interrupt.Info != "" {
			attrs = append(attrs, attribute.String("baton.interrupt.info", e.Interrupt.Info))
		}
	case traces.KindExit:
		if s.content {
			attrs = append(attrs, attribute.String("baton.exit.final_result", e.Exit.FinalResult))
		}
	case traces.KindBreakLoop:
		attrs = append(attrs, attribute.String("baton.breakloop.from", e.BreakLoop.From),
			attribute.Int("baton.breakloop.iterations", e.BreakLoop.Iterations))
	case traces.KindLost:
		span = s.runSpan
		attrs = append(attrs, attribute.Int64("baton.lost.count", e.Lost.Count))
	case traces.KindError:
		span.RecordError(errors.New(e.Error.Message), at)
		span.SetStatus(codes.Error, e.Error.Message)
		return
	default: // run.started, message: what they say is on other spans
		return
	}
	if e.Agent != "" {
		attrs = append(attrs, attribute.String("gen_ai.agent.name", e.Agent))
	}
	span.AddEvent(string(e.Kind), at, trace.WithAttributes(attrs...))
}

// current returns agent's visit going on, or nil.
func (s *runSpans) current(agent string) *visit {
	if vs := s.visits[agent]; len(vs) > 0 {
		return vs[len(vs)-1]
	}
	return nil
}

// contextOf returns the context of agent's visit going on; else of the latest agent on path whose
// visit goes on (an agent's session change can come in after its visit); else the run's.
func (s *runSpans) contextOf(agent string, path []string) context.Context {
	if v := s.current(agent); v != nil {
		return v.ctx
	}
	for i := len(path) - 1; i >= 0; i-- {
		if v := s.current(path[i]); v != nil {
			return v.ctx
		}
	}
	return s.runCtx
}

// agentAttrs appends to attrs the GenAI attributes naming agent, when it is known.
func (s *runSpans) agentAttrs(attrs []attribute.KeyValue, agent string) []attribute.KeyValue {
	if agent == "" {
		return attrs
	}
	attrs = append(attrs, attribute.String("gen_ai.agent.name", agent))
	if d := s.agents[agent].Description; d != "" {
		attrs = append(attrs, attribute.String("gen_ai.agent.description", d))
	}
	if s.run.Conversation != "" {
		attrs = append(attrs, attribute.String("gen_ai.conversation.id", s.run.Conversation))
	}
	return attrs
}

// spanName is a GenAI span's name: the operation, then what it acts on when that is known.
func spanName(op, what string) string {
	if what == "" {
		return op
	}
	return op + " " + what
}
