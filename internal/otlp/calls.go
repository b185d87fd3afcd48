package otlp

import (
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/baton-dev/baton/traces"
)

// startModel starts a chat span under the visit of the agent whose model is called.
func (s *runSpans) startModel(e traces.Event) {
	m := e.Model
	attrs := []attribute.KeyValue{attribute.String("gen_ai.operation.name", opChat)}
	name := m.Name // the model the call named, else the run's
	if name == "" {
		name = s.run.Model
	}
	if name != "" {
		attrs = append(attrs, attribute.String("gen_ai.request.model", name))
	}
	if e.Agent != "" {
		attrs = append(attrs, attribute.String("gen_ai.agent.name", e.Agent))
	}
	if s.content && len(m.Input) > 0 {
		attrs = s.inputAttrs(attrs, m.Input)
	}
	_, span := s.tracer.Start(s.contextOf(e.Agent, e.RunPath), spanName(opChat, name),
		trace.WithTimestamp(e.Time), trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	s.models[m.ID] = &modelSpan{span: span, agent: e.Agent}
}

// finishModel ends a chat span with the call's token usage, reply and error.
func (s *runSpans) finishModel(e traces.Event) {
	m := e.Model
	ms, ok := s.models[m.ID]
	if !ok {
		return
	}
	span := ms.span
	delete(s.models, m.ID)
	if u := m.Usage; u != nil {
		span.SetAttributes(attribute.Int("gen_ai.usage.input_tokens", u.PromptTokens),
			attribute.Int("gen_ai.usage.output_tokens", u.CompletionTokens))
	}
	if s.content && m.Output != nil {
		span.SetAttributes(attribute.String("gen_ai.output.messages", outputJSON(*m.Output)))
	}
	if m.Error != "" {
		span.SetStatus(codes.Error, m.Error)
	}
	span.End(trace.WithTimestamp(e.Time))
}

// startTool starts an execute_tool span under the visit of the agent whose model called the tool.
func (s *runSpans) startTool(e traces.Event) {
	t := e.Tool
	attrs := []attribute.KeyValue{
		attribute.String("gen_ai.operation.name", opExecuteTool),
		attribute.String("gen_ai.tool.name", t.Name),
		attribute.String("gen_ai.tool.type", "function"),
	}
	if e.Agent != "" {
		attrs = append(attrs, attribute.String("gen_ai.agent.name", e.Agent)) // the agent executing the tool
	}
	if t.CallID != "" {
		attrs = append(attrs, attribute.String("gen_ai.tool.call.id", t.CallID))
	}
	if s.content && t.Arguments != "" {
		attrs = append(attrs, attribute.String("gen_ai.tool.call.arguments", t.Arguments))
	}
	ctx, span := s.tracer.Start(s.contextOf(e.Agent, e.RunPath), spanName(opExecuteTool, t.Name),
		trace.WithTimestamp(e.Time), trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	s.tools[toolKey(e)] = &toolSpan{span: span, ctx: ctx, agent: e.Agent, callID: t.CallID}
}

// finishTool ends an execute_tool span with its result or error; a transfer_to_agent call waits
// for its transfer event.
func (s *runSpans) finishTool(e traces.Event) {
	key := toolKey(e)
	ts, ok := s.tools[key]
	if !ok {
		return
	}
	t := e.Tool
	if s.content && t.Result != "" {
		ts.span.SetAttributes(attribute.String("gen_ai.tool.call.result", t.Result))
	}
	switch {
	case t.Error != "":
		ts.span.SetStatus(codes.Error, t.Error)
		ts.span.SetAttributes(attribute.String("error.type", "tool_error"))
	case t.Interrupted:
		ts.span.SetAttributes(attribute.Bool("baton.tool.interrupted", true))
	}
	if t.Name == transferTool && t.Error == "" {
		ts.ended = &e // the transfer event, next, says where control went
		return
	}
	delete(s.tools, key)
	ts.span.End(trace.WithTimestamp(e.Time))
}

// toolKey identifies a tool call among the open ones: by its call id, which parallel calls of
// one tool tell apart, else by agent and tool.
func toolKey(e traces.Event) string {
	if e.Tool.CallID != "" {
		return e.Tool.CallID
	}
	return e.Agent + "\x00" + e.Tool.Name
}

// transfer completes the span of a model's transfer_to_agent call with the transfer, or makes
// one for a transfer no tool call ran (a deterministic one), and notes where its target starts.
func (s *runSpans) transfer(e traces.Event) {
	tr := e.Transfer
	attrs := append(transferAttrs(modePassControl, tr.To),
		attribute.String("baton.transfer.mode", tr.Mode),
		attribute.String("baton.transfer.from", tr.From),
		attribute.String("baton.transfer.to", tr.To))
	var span trace.Span
	if ts, ok := s.tools[tr.CallID]; ok && tr.CallID != "" {
		delete(s.tools, tr.CallID)
		span = ts.span
		span.SetAttributes(attrs...)
		end := e.Time
		if ts.ended != nil {
			end = ts.ended.Time
		}
		span.End(trace.WithTimestamp(end))
	} else {
		attrs = append(attrs,
			attribute.String("gen_ai.operation.name", opExecuteTool),
			attribute.String("gen_ai.tool.name", transferTool),
			attribute.String("gen_ai.tool.type", "function"),
			attribute.String("gen_ai.agent.name", tr.From))
		if tr.CallID != "" {
			attrs = append(attrs, attribute.String("gen_ai.tool.call.id", tr.CallID))
		}
		_, span = s.tracer.Start(s.contextOf(tr.From, e.RunPath), spanName(opExecuteTool, transferTool),
			trace.WithTimestamp(e.Time), trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
		span.End(trace.WithTimestamp(e.Time))
	}
	parent := s.runCtx
	if v := s.current(tr.From); v != nil {
		parent = v.parent
	}
	s.handoff = &handoff{to: tr.To, parent: parent, link: trace.Link{
		SpanContext: span.SpanContext(),
		Attributes:  []attribute.KeyValue{attribute.String("baton.link", "transfer"), attribute.String("baton.transfer.mode", tr.Mode)},
	}}
}

// enterAgentTool notes the tool call under which the called agent's visit will start, and says
// on its span that it is a transfer that returns to its caller: eino said so (an AgentTool's
// agenttool.entered), the tool's name did not.
func (s *runSpans) enterAgentTool(e traces.Event) {
	if ts, ok := s.tools[e.AgentTool.CallID]; ok {
		ts.span.SetAttributes(transferAttrs(modeReturnToCaller, e.AgentTool.Callee)...)
		s.callees[e.AgentTool.Callee] = append(s.callees[e.AgentTool.Callee], ts)
	}
}

// The values of gen_ai.transfer.mode: control passes to the target (a transfer), or the target
// answers its caller, which goes on (an agent called as a tool).
const (
	modePassControl    = "pass_control"
	modeReturnToCaller = "return_to_caller"
)

// transferAttrs are the GenAI conventions' attributes of an execute_tool span that hands work
// to the agent target.
func transferAttrs(mode, target string) []attribute.KeyValue {
	return []attribute.KeyValue{
		attribute.String("gen_ai.transfer.mode", mode),
		attribute.String("gen_ai.transfer.target.type", "agent"),
		attribute.String("gen_ai.transfer.target.name", target),
	}
}

// exitAgentTool says on the call's span how its inner events were seen, and forgets a call whose
// agent never started, so that no later visit goes under it.
func (s *runSpans) exitAgentTool(e traces.Event) {
	if ts, ok := s.tools[e.AgentTool.CallID]; ok && e.AgentTool.InnerEvents != "" {
		ts.span.SetAttributes(attribute.String("baton.agenttool.inner_events", e.AgentTool.InnerEvents))
	}
	calls := s.callees[e.AgentTool.Callee]
	for i, ts := range calls {
		if ts.callID == e.AgentTool.CallID {
			s.callees[e.AgentTool.Callee] = append(calls[:i:i], calls[i+1:]...)
			return
		}
	}
}
