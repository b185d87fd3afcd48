package agents

import (
	"context"
	"encoding/json"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/callbacks"
	"github.com/cloudwego/eino/components"
	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"

	"github.com/baton-dev/baton/traces"
)

// call is what a callback's OnStart leaves in the context for its OnEnd. Inside the prebuilt
// supervisor every callback fires twice with the same *RunInfo: the second OnStart finds the
// first one's call in its context, and only the first OnEnd passes ended.
type call struct {
	info    *callbacks.RunInfo
	at      place
	started time.Time
	modelID string
	ended   atomic.Bool
}

type callKey struct{}

func callOf(ctx context.Context, info *callbacks.RunInfo) *call {
	c, _ := ctx.Value(callKey{}).(*call)
	if c == nil || c.info != info {
		return nil
	}
	return c
}

// end reports whether this is the first end of the call started in ctx.
func end(ctx context.Context, info *callbacks.RunInfo) (*call, bool) {
	c := callOf(ctx, info)
	if c == nil || !c.ended.CompareAndSwap(false, true) {
		return nil, false
	}
	return c, true
}

// handler is the run's callback handler. Every method returns quickly: streamed outputs are read
// on goroutines of their own, and nothing is changed in eino's inputs or outputs.
type handler struct{ r *Recorder }

// handler returns the run's callback handler.
func (r *Recorder) handler() callbacks.Handler { return handler{r} }

// Needed tells eino which components to call the recorder for: agents, models, tools, and the
// runnables that carry an agent's work. Saying no to the rest (lambdas, tool nodes...) spares
// eino the calls and, in streaming runs, the stream copies it would make for us.
func (h handler) Needed(_ context.Context, info *callbacks.RunInfo, _ callbacks.CallbackTiming) bool {
	if info == nil {
		return false
	}
	switch info.Component {
	case adk.ComponentOfAgent, components.ComponentOfChatModel, components.ComponentOfTool,
		compose.ComponentOfChain, compose.ComponentOfGraph, compose.ComponentOfWorkflow:
		return true
	}
	return false
}

func (h handler) OnStart(ctx context.Context, info *callbacks.RunInfo, in callbacks.CallbackInput) context.Context {
	return h.r.onStart(ctx, info, in)
}

func (h handler) OnEnd(ctx context.Context, info *callbacks.RunInfo, out callbacks.CallbackOutput) context.Context {
	return h.r.onEnd(ctx, info, out)
}

func (h handler) OnError(ctx context.Context, info *callbacks.RunInfo, err error) context.Context {
	return h.r.onError(ctx, info, err)
}

func (h handler) OnStartWithStreamInput(ctx context.Context, info *callbacks.RunInfo, in *schema.StreamReader[callbacks.CallbackInput]) context.Context {
	return h.r.onStartStream(ctx, info, in)
}

func (h handler) OnEndWithStreamOutput(ctx context.Context, info *callbacks.RunInfo, out *schema.StreamReader[callbacks.CallbackOutput]) context.Context {
	return h.r.onEndStream(ctx, info, out)
}

func (r *Recorder) onStart(ctx context.Context, info *callbacks.RunInfo, in callbacks.CallbackInput) context.Context {
	if info == nil || callOf(ctx, info) != nil {
		return ctx
	}
	at := placeOf(ctx)
	c := &call{info: info, at: at, started: time.Now()}
	switch {
	case info.Component == adk.ComponentOfAgent:
		r.agentStarted(ctx, info, at, adk.ConvAgentCallbackInput(in))
	case info.Component == components.ComponentOfChatModel:
		r.waitOutputs(at.path)
		c.modelID = r.modelStarted(at, model.ConvCallbackInput(in))
	case info.Component == components.ComponentOfTool:
		r.waitOutputs(at.path)
		r.toolStarted(info, at, tool.ConvCallbackInput(in))
	case at.runnable:
		r.waitOutputs(at.path)
	default:
		return ctx
	}
	return context.WithValue(ctx, callKey{}, c)
}

// onStartStream handles a component started on a stream: in streaming runs, that is how an agent's
// runnable starts. Nothing of the input is needed.
func (r *Recorder) onStartStream(ctx context.Context, info *callbacks.RunInfo, in *schema.StreamReader[callbacks.CallbackInput]) context.Context {
	in.Close()
	return r.onStart(ctx, info, nil)
}

func (r *Recorder) onEnd(ctx context.Context, info *callbacks.RunInfo, out callbacks.CallbackOutput) context.Context {
	c, first := end(ctx, info)
	if !first || info.Component == adk.ComponentOfAgent {
		return ctx // an agent's OnEnd says nothing: it fires when its events start, not end
	}
	switch {
	case info.Component == components.ComponentOfChatModel:
		o := model.ConvCallbackOutput(out)
		var msg *schema.Message
		var usage *model.TokenUsage
		if o != nil {
			msg, usage = o.Message, o.TokenUsage
		}
		if msg != nil {
			r.mu.Lock()
			r.visitAt(c.at.path).expectEcho(false)
			r.mu.Unlock()
		}
		r.modelFinished(c, msg, usage, "")
	case info.Component == components.ComponentOfTool:
		result := ""
		if o := tool.ConvCallbackOutput(out); o != nil {
			result = o.Response
		}
		r.mu.Lock()
		r.visitAt(c.at.path).expectEcho(true)
		r.mu.Unlock()
		r.toolFinished(info, c, result, "")
	case c.at.runnable:
		r.agentFinished(c.at, "")
	}
	r.noticeSession(ctx, c.at)
	return ctx
}

func (r *Recorder) onError(ctx context.Context, info *callbacks.RunInfo, err error) context.Context {
	c, first := end(ctx, info)
	if !first || info.Component == adk.ComponentOfAgent {
		return ctx // an agent's OnEnd says nothing: it fires when its events start, not end
	}
	switch {
	case info.Component == components.ComponentOfChatModel:
		r.modelFinished(c, nil, nil, err.Error())
	case info.Component == components.ComponentOfTool:
		r.toolFinished(info, c, "", err.Error())
	case c.at.runnable:
		r.agentFinished(c.at, err.Error())
	}
	r.noticeSession(ctx, c.at)
	return ctx
}

// onEndStream handles an output that is a stream: a model's streamed reply, a tool's streamed
// result, or an agent's runnable whose output streams until the agent's work ends. It is read on a
// goroutine of its own and recorded when complete; what follows it in the trace waits for it.
func (r *Recorder) onEndStream(ctx context.Context, info *callbacks.RunInfo, out *schema.StreamReader[callbacks.CallbackOutput]) context.Context {
	c, first := end(ctx, info)
	isModel, isTool := info.Component == components.ComponentOfChatModel, info.Component == components.ComponentOfTool
	if !first || !(isModel || isTool || c.at.runnable) {
		out.Close()
		return ctx
	}
	r.mu.Lock()
	v := r.visitAt(c.at.path)
	work := &v.closing
	if isModel || isTool {
		v.expectEcho(isTool) // the echo may reach the stream consumer before we finish reading
		work = &v.outputs
	}
	work.add()
	r.streams.add()
	r.mu.Unlock()
	go func() {
		defer r.streams.done()
		defer work.done()
		switch {
		case isModel:
			reply, usage, failed := readModelStream(out)
			r.modelFinished(c, reply, usage, failed)
		case isTool:
			result, failed := readToolStream(out)
			r.toolFinished(info, c, result, failed)
		default:
			_, failed := readToolStream(out) // nothing in it is needed but its end
			// The agent's work ends after the replies and results it streamed on the way.
			v.outputs.wait()
			r.agentFinished(c.at, failed)
		}
	}()
	return ctx
}

// expectEcho counts a reply or tool result recorded from a callback whose copy the stream will
// also carry. Callers hold the recorder's lock.
func (v *visit) expectEcho(tool bool) {
	if tool {
		v.toolResults++
	} else {
		v.modelOutputs++
	}
}

// readModelStream joins a model's streamed reply from the callback's copy of its chunks.
func readModelStream(out *schema.StreamReader[callbacks.CallbackOutput]) (*schema.Message, *model.TokenUsage, string) {
	defer out.Close()
	var reply streamedMessage
	var usage *model.TokenUsage
	for {
		chunk, err := out.Recv()
		if err == io.EOF {
			return reply.message(), usage, ""
		}
		if err != nil {
			return reply.message(), usage, err.Error()
		}
		if o := model.ConvCallbackOutput(chunk); o != nil {
			reply.add(o.Message)
			if o.TokenUsage != nil {
				usage = o.TokenUsage
			}
		}
	}
}

// readToolStream joins a tool's streamed result from the callback's copy of its chunks.
func readToolStream(out *schema.StreamReader[callbacks.CallbackOutput]) (string, string) {
	defer out.Close()
	var result []byte
	for {
		chunk, err := out.Recv()
		if err == io.EOF {
			return string(result), ""
		}
		if err != nil {
			return string(result), err.Error()
		}
		if o := tool.ConvCallbackOutput(chunk); o != nil {
			result = append(result, o.Response...)
		}
	}
}

// waitOutputs waits until the streamed replies and results of the visit at path are recorded.
func (r *Recorder) waitOutputs(path []string) {
	r.visitOf(path).outputs.wait()
}

// waitVisit waits until everything v streamed is recorded, its end included.
func (r *Recorder) waitVisit(v *visit) {
	v.outputs.wait()
	v.closing.wait()
}

// visitOf returns the visit at a callback's path, creating it when new.
func (r *Recorder) visitOf(path []string) *visit {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.visitAt(path)
}

// workflowKind returns the eino type of the visit at path when it is a workflow agent's
// ("Sequential", "Parallel", "Loop"), else "".
func (r *Recorder) workflowKind(path []string) string {
	switch kind := r.visitOf(path).kind; kind {
	case "Sequential", "Parallel", "Loop":
		return kind
	}
	return ""
}

func (r *Recorder) agentStarted(ctx context.Context, info *callbacks.RunInfo, at place, in *adk.AgentCallbackInput) {
	via := "run"
	switch {
	case at.callerTool != "":
		via = "agenttool"
	case at.previous() == "":
	case r.workflowKind(at.path[:len(at.path)-1]) != "":
		// A sequential, parallel or loop agent runs its sub-agents itself. One step after another
		// is recorded after what the steps before it streamed; parallel branches run as they run.
		via = "workflow"
		if r.workflowKind(at.path[:len(at.path)-1]) != "Parallel" {
			r.waitUnder(at.path[:len(at.path)-1], false)
		}
	default:
		via = "transfer"
		r.waitVisit(r.visitOf(at.path[:len(at.path)-1]))
		r.awaitTransfer(ctx, at.agent())
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sessionCtx == nil {
		r.sessionCtx = ctx
	}
	key := at.key()
	if _, seen := r.visits[key]; seen {
		return // the agent inside the prebuilt supervisor's container: the same visit
	}
	v := r.visitAt(at.path)
	v.kind = info.Type
	if via == "agenttool" {
		call := traces.AgentToolCall{Caller: callerOf(at.path), Callee: v.agent, CallID: at.callID, Request: requestOf(r.openTools[at.callID].args)}
		r.agentTools[at.callID] = agentToolCall{AgentToolCall: call, path: at.path}
		r.emit(traces.Event{Kind: traces.KindAgentToolEnter, Agent: call.Caller, RunPath: at.path[:len(at.path)-1], AgentTool: &call})
	}
	run := &traces.AgentRun{Via: via}
	if in != nil {
		run.Resumed = in.ResumeInfo != nil
		if in.Input != nil {
			run.Input = traceMessages(in.Input.Messages)
		}
	}
	r.emit(traces.Event{Kind: traces.KindAgentStarted, Agent: v.agent, RunPath: at.path, AgentRun: run})
	r.diffSession(ctx, v.agent, at.path)
}

func (r *Recorder) agentFinished(at place, errMsg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	v := r.visitAt(at.path)
	if v.finished {
		return
	}
	v.finished = true
	r.emit(traces.Event{Kind: traces.KindAgentFinished, Agent: v.agent, RunPath: at.path, AgentRun: &traces.AgentRun{Error: errMsg}})
}

func (r *Recorder) modelStarted(at place, in *model.CallbackInput) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.models++
	id := "m" + strconv.Itoa(r.models)
	mc := &traces.ModelCall{ID: id}
	if in != nil {
		mc.Input = r.visitAt(at.path).input(in.Messages)
		for _, t := range in.Tools {
			if t != nil {
				mc.Tools = append(mc.Tools, t.Name)
			}
		}
	}
	r.emit(traces.Event{Kind: traces.KindModelStarted, Agent: at.agent(), RunPath: at.path, Model: mc})
	return id
}

// modelFinished records a model's reply (or failure) and the reply as the agent's message.
func (r *Recorder) modelFinished(c *call, msg *schema.Message, usage *model.TokenUsage, errMsg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	mc := &traces.ModelCall{ID: c.modelID, DurationMS: millis(time.Since(c.started)), Error: errMsg}
	if msg != nil {
		mc.Output = ptr(traceMessage(msg))
		mc.Usage = traceUsage(msg)
	}
	if usage != nil {
		mc.Usage = &traces.Usage{PromptTokens: usage.PromptTokens, CompletionTokens: usage.CompletionTokens, TotalTokens: usage.TotalTokens}
	}
	agent := c.at.agent()
	r.emit(traces.Event{Kind: traces.KindModelFinished, Agent: agent, RunPath: c.at.path, Model: mc})
	if msg != nil {
		r.emit(traces.Event{Kind: traces.KindMessage, Agent: agent, RunPath: c.at.path, Message: mc.Output})
	}
}

func (r *Recorder) toolStarted(info *callbacks.RunInfo, at place, in *tool.CallbackInput) {
	args := ""
	if in != nil {
		args = in.ArgumentsInJSON
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.toolCalls++
	r.openTools[at.toolCallID] = openTool{name: info.Name, args: args, at: at, order: r.toolCalls}
	r.emit(traces.Event{Kind: traces.KindToolStarted, Agent: at.agent(), RunPath: at.path,
		Tool: &traces.ToolCall{Name: info.Name, CallID: at.toolCallID, Arguments: args}})
}

// toolFinished records a tool's result, and what it meant: the end of an AgentTool call, or a
// transfer chosen by the model.
func (r *Recorder) toolFinished(info *callbacks.RunInfo, c *call, result, errMsg string) {
	r.waitCallee(c.at.toolCallID)
	r.mu.Lock()
	defer r.mu.Unlock()
	agent, callID := c.at.agent(), c.at.toolCallID
	args := r.openTools[callID].args
	delete(r.openTools, callID)
	if open, ok := r.agentTools[callID]; ok {
		call := open.AgentToolCall
		call.Result = result
		delete(r.agentTools, callID)
		r.emit(traces.Event{Kind: traces.KindAgentToolExit, Agent: agent, RunPath: c.at.path, AgentTool: &call})
	}
	r.emit(traces.Event{Kind: traces.KindToolFinished, Agent: agent, RunPath: c.at.path,
		Tool: &traces.ToolCall{Name: info.Name, CallID: callID, Result: result, Error: errMsg, DurationMS: millis(time.Since(c.started))}})
	if errMsg != "" {
		return
	}
	r.emit(traces.Event{Kind: traces.KindMessage, Agent: agent, RunPath: c.at.path,
		Message: &traces.Message{Role: string(schema.Tool), Content: result, ToolCallID: callID, ToolName: info.Name}})
	if info.Name == transferToolName {
		var target struct {
			AgentName string `json:"agent_name"`
		}
		if json.Unmarshal([]byte(args), &target) == nil && target.AgentName != "" {
			r.recordTransfer(c.at.path, traces.Transfer{From: agent, To: target.AgentName, Mode: traces.TransferLLM, CallID: callID})
		}
	}
}

// waitCallee waits, when callID is an AgentTool call, until everything the callee and the agents
// it handed work to streamed is recorded: their work ended before the tool returned.
func (r *Recorder) waitCallee(callID string) {
	r.mu.Lock()
	call, ok := r.agentTools[callID]
	r.mu.Unlock()
	if ok {
		r.waitUnder(call.path, true)
	}
}

// waitUnder waits until everything streamed by the visits below path (and path's own, with self)
// is recorded.
func (r *Recorder) waitUnder(path []string, self bool) {
	prefix := pathKey(path)
	r.mu.Lock()
	var under []*visit
	for key, v := range r.visits {
		if (self && key == prefix) || strings.HasPrefix(key, prefix+">") {
			under = append(under, v)
		}
	}
	r.mu.Unlock()
	for _, v := range under {
		r.waitVisit(v)
	}
}

// transferToolName is the tool eino gives a model that may transfer to other agents.
const transferToolName = "transfer_to_agent"

// noticeSession records the session values changed since the last look, from a callback that
// runs where the work happens. Goroutines reading streams never look: eino may be writing the
// session at that very moment, and the trace would then depend on timing.
func (r *Recorder) noticeSession(ctx context.Context, at place) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.diffSession(ctx, at.agent(), at.path)
}

// diffSession records every session value that changed since the last look. A value stored under
// an agent's OutputKey is that agent's answer, whoever's callback noticed it. Callers hold r.mu.
func (r *Recorder) diffSession(ctx context.Context, agent string, path []string) {
	values := adk.GetSessionValues(ctx)
	for _, k := range slices.Sorted(maps.Keys(values)) {
		js := jsonValue(values[k])
		if r.session[k] == js {
			continue
		}
		r.session[k] = js
		setBy := agent
		for _, a := range r.tree {
			if a.OutputKey == k {
				setBy = a.Name
			}
		}
		r.emit(traces.Event{Kind: traces.KindSessionSet, Agent: agent, RunPath: path,
			Session: &traces.SessionSet{Key: k, Value: json.RawMessage(js), SetBy: setBy}})
	}
}

// callerOf returns the agent that called the last agent of path as a tool.
func callerOf(path []string) string {
	c := collapse(path)
	if len(c) < 2 {
		return ""
	}
	return c[len(c)-2]
}

// requestOf extracts the request an AgentTool received from its JSON arguments.
func requestOf(args string) string {
	var in struct {
		Request string `json:"request"`
	}
	if json.Unmarshal([]byte(args), &in) == nil && in.Request != "" {
		return in.Request
	}
	return args
}

func millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
