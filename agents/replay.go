package agents

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/schema"

	"github.com/baton-dev/baton/internal/record"
	"github.com/baton-dev/baton/traces"
)

// ReplayModelType is what a replay model's GetType returns.
const ReplayModelType = "Replay"

// recordedCall is one model call of a trace, as a replay gives it back.
type recordedCall = record.RecordedCall

// recordedCalls are the model calls of one recorded run, in the order they started.
type recordedCalls struct {
	flow, input string
	calls       []*recordedCall
	byAgent     map[string][]*recordedCall
}

// ReplayOf returns a model that replays tr's model calls, agent by agent and call by call, for a
// new run of tr's flow on tr's input; a reply edited at a breakpoint replays as edited (its
// continued event's). A trace without a model call is a traces.CodeInvalid error.
func ReplayOf(tr traces.Trace) (*Model, error) {
	rc := &recordedCalls{flow: tr.Run.Flow, input: tr.Run.Input, calls: record.RecordedCalls(tr), byAgent: map[string][]*recordedCall{}}
	for _, c := range rc.calls {
		rc.byAgent[c.Agent] = append(rc.byAgent[c.Agent], c)
	}
	if len(rc.calls) == 0 {
		return nil, traces.Errorf(traces.CodeInvalid, "run %s recorded no model call: there is nothing to replay", tr.Run.ID)
	}
	return &Model{spec: specReplay + "run " + tr.Run.ID, name: "replay of " + tr.Run.ID + " (" + tr.Run.Model + ")", replay: rc}, nil
}

// Replaying returns the models of one new run that replays tr's model calls (see ReplayOf), and
// the check to make once that run has completed: the recorded calls it left unplayed.
func Replaying(tr traces.Trace) (ModelFor, func() *Divergence, error) {
	m, err := ReplayOf(tr)
	if err != nil {
		return nil, nil, err
	}
	p := newReplay(m.replay)
	return p.modelFor(nil), p.unplayed, nil
}

// Divergence is where a replayed run departed from its recording: at its Call-th model call
// (from 1), asked by Agent, Reason says what differed. A replay model fails that call with it,
// and every later one.
type Divergence struct {
	Call   int
	Agent  string
	Reason string
}

func (d *Divergence) Error() string {
	return fmt.Sprintf("replay diverged from the recording at model call %d (%s): %s", d.Call, d.Agent, d.Reason)
}

// replay is one run's progress through a recording; the models of all its agents share it.
type replay struct {
	rec *recordedCalls

	mu       sync.Mutex
	asked    int                    // calls asked so far
	next     map[string]int         // per agent, the index of its next call in rec.byAgent
	played   map[*recordedCall]bool // calls given back
	diverged *Divergence            // the first divergence, once there is one
}

func newReplay(rec *recordedCalls) *replay {
	return &replay{rec: rec, next: map[string]int{}, played: map[*recordedCall]bool{}}
}

// modelFor returns the replay models of the run's agents.
func (p *replay) modelFor(pace *Pace) ModelFor {
	return func(agent string) (model.ToolCallingChatModel, error) {
		return &cannedModel{typ: ReplayModelType, name: "replay", pace: pace,
			next: func(_ []*schema.Message, tools []*schema.ToolInfo) (*schema.Message, error) {
				return p.reply(agent, tools)
			}}, nil
	}
}

// reply gives agent its next recorded reply, or fails with the divergence.
func (p *replay) reply(agent string, tools []*schema.ToolInfo) (*schema.Message, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.asked++
	if p.diverged != nil {
		return nil, p.diverged
	}
	queue, k := p.rec.byAgent[agent], p.next[agent]
	if k >= len(queue) {
		return nil, p.diverge(agent, p.extraCall(agent, len(queue)))
	}
	c := queue[k]
	p.next[agent] = k + 1
	// A recording without tools may just not know them: eino's callbacks carry a model's tools
	// only when the model reports its own callbacks (as eino-ext's do); then nothing is checked.
	if reason := toolsDiffer(c.Tools, tools); len(c.Tools) > 0 && reason != "" {
		return nil, p.diverge(agent, fmt.Sprintf("the tools offered differ from those of recorded call %d: %s", c.N, reason))
	}
	p.played[c] = true
	switch {
	case !c.Done:
		return nil, p.diverge(agent, fmt.Sprintf("recorded call %d never finished: the recording ends there", c.N))
	case c.Err != "":
		return nil, errors.New(c.Err) // the recorded failure, as the provider worded it
	}
	return replyMessage(c), nil
}

// diverge records the run's first divergence and returns it.
func (p *replay) diverge(agent, reason string) *Divergence {
	p.diverged = &Divergence{Call: p.asked, Agent: agent, Reason: reason}
	return p.diverged
}

// extraCall says why a call by agent, which made had calls in the recording, has no recorded reply.
func (p *replay) extraCall(agent string, had int) string {
	next := ""
	if c := p.firstUnplayed(); c != nil {
		next = fmt.Sprintf("; the recording's next call is %d, by %s", c.N, c.Agent)
	}
	if had == 0 {
		return "another agent asks: " + agent + " made no model call in the recording" + next
	}
	return fmt.Sprintf("more calls than recorded: %s made %d in the recording%s", agent, had, next)
}

// firstUnplayed is the earliest recorded call not given back yet, or nil.
func (p *replay) firstUnplayed() *recordedCall {
	for _, c := range p.rec.calls {
		if !p.played[c] {
			return c
		}
	}
	return nil
}

// unplayed is the check once the run has completed: a recorded call nobody asked for is a
// divergence (the run did less than the recording).
func (p *replay) unplayed() *Divergence {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.firstUnplayed()
	if p.diverged != nil || c == nil {
		return p.diverged
	}
	return &Divergence{Call: p.asked + 1, Agent: c.Agent, Reason: fmt.Sprintf(
		"fewer calls than recorded: the run ended after %d of the recording's %d calls; recorded call %d, by %s, was never asked for",
		p.asked, len(p.rec.calls), c.N, c.Agent)}
}

// toolsDiffer says how the tools offered now differ from those recorded (order aside), or "".
func toolsDiffer(recorded []string, offered []*schema.ToolInfo) string {
	var now []string
	for _, t := range offered {
		if t != nil {
			now = append(now, t.Name)
		}
	}
	var missing, added []string
	for _, r := range recorded {
		if !slices.Contains(now, r) {
			missing = append(missing, r)
		}
	}
	for _, n := range now {
		if !slices.Contains(recorded, n) {
			added = append(added, n)
		}
	}
	var parts []string
	if len(missing) > 0 {
		parts = append(parts, "no longer offered: "+strings.Join(missing, ", "))
	}
	if len(added) > 0 {
		parts = append(parts, "newly offered: "+strings.Join(added, ", "))
	}
	return strings.Join(parts, "; ")
}

// replyMessage rebuilds the recorded reply of c as eino's message.
func replyMessage(c *recordedCall) *schema.Message {
	msg := &schema.Message{Role: schema.Assistant}
	finish := "stop"
	if o := c.Output; o != nil {
		msg.Content = o.Content
		for _, tc := range o.ToolCalls {
			msg.ToolCalls = append(msg.ToolCalls, schema.ToolCall{ID: tc.ID, Type: "function",
				Function: schema.FunctionCall{Name: tc.Name, Arguments: tc.Arguments}})
		}
		if len(msg.ToolCalls) > 0 {
			finish = "tool_calls"
		}
	}
	msg.ResponseMeta = &schema.ResponseMeta{FinishReason: finish}
	if u := c.Usage; u != nil {
		msg.ResponseMeta.Usage = &schema.TokenUsage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.TotalTokens}
	}
	return msg
}
