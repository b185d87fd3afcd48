package agents_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/flow/agent"
	"github.com/cloudwego/eino/flow/agent/multiagent/host"
	"github.com/cloudwego/eino/schema"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/traces"
)

// handOffs collects what host's own MultiAgentCallback reports, as "to reason".
type handOffs struct {
	mu   sync.Mutex
	seen []string
}

func (h *handOffs) OnHandOff(ctx context.Context, info *host.HandOffInfo) context.Context {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seen = append(h.seen, info.ToAgentName+" "+info.Argument)
	return ctx
}

// await returns the first n handoffs reported. In streaming runs host reports them on a
// goroutine of its own, after the host's reply is read: possibly after the run has ended.
func (h *handOffs) await(t *testing.T, n int) []string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		h.mu.Lock()
		got := slices.Clone(h.seen)
		h.mu.Unlock()
		if len(got) >= n || time.Now().After(deadline) {
			return got
		}
		time.Sleep(time.Millisecond)
	}
}

// TestHostFlow checks the host flow's handoffs: one transfer edge per host's OnHandOff, in its
// order, each followed by the specialist's own visit, fed the user's messages and not the host's.
func TestHostFlow(t *testing.T) {
	for _, c := range []struct {
		input string
		want  []string
	}{
		{mustFlow(t, "host").DefaultInput, []string{"concierge -> refunds_desk (llm)"}},
		{"Refund me, then rebook me; also I left my umbrella on it",
			[]string{"concierge -> refunds_desk (llm)", "concierge -> bookings_desk (llm)", "concierge -> lost_property_desk (llm)"}},
	} {
		modes(t, func(t *testing.T, streaming bool) {
			seen := &handOffs{}
			flow := mustFlow(t, "host")
			flow.Build = func(ctx context.Context, models agents.ModelFor) (adk.Agent, error) {
				return agents.BuildHost(ctx, models, host.WithAgentCallbacks(seen))
			}
			tr := recordInput(t, flow, c.input, streaming)
			checkTrace(t, tr, traces.StatusCompleted)
			f := facts{t: t, tr: tr}
			assertEqual(t, "transfers", f.transfers(), c.want)

			// Each edge is one of host's handoffs, with the tool call the host's model made.
			var fromTrace []string
			reply := f.of(traces.KindModelFinished, "concierge")[0].Model.Output
			for i, e := range f.of(traces.KindTransfer, "") {
				tc := reply.ToolCalls[i]
				if e.Transfer.CallID != tc.ID || e.Transfer.To != tc.Name {
					t.Errorf("transfer %d is %s %s, the host's call %d is %s %s", i, e.Transfer.To, e.Transfer.CallID, i, tc.Name, tc.ID)
				}
				fromTrace = append(fromTrace, tc.Name+" "+tc.Arguments)
			}
			assertEqual(t, "host's OnHandOff", seen.await(t, len(c.want)), fromTrace)

			// Every specialist picked runs in a visit of its own, after its edge, below concierge,
			// fed the user's request alone: host keeps its own reply from them.
			for _, e := range f.of(traces.KindTransfer, "") {
				desk := e.Transfer.To
				edge := f.index(traces.KindTransfer, "concierge", func(x traces.Event) bool { return x.Transfer.To == desk })
				start := f.index(traces.KindAgentStarted, desk, nil)
				end := f.index(traces.KindAgentFinished, desk, nil)
				if !(edge < start && start < end && end < f.index(traces.KindAgentFinished, "concierge", nil)) {
					t.Errorf("%s: edge at %d, visit %d..%d, not in order inside concierge's", desk, edge, start, end)
				}
				if in := tr.Events[start].AgentRun.Input; len(in) != 1 || in[0].Content != c.input || hasRole(f.modelInputs(desk)[0], "assistant") {
					t.Errorf("%s was not fed the request alone: %s", desk, joined(in))
				}
				if got := fmt.Sprint(tr.Events[start].RunPath); got != "[concierge "+desk+"]" {
					t.Errorf("%s's run path %s", desk, got)
				}
			}
			if unpicked := len(f.of(traces.KindAgentStarted, "")) - 1 - len(c.want); unpicked != 0 {
				t.Errorf("%d visits of desks the host did not pick", unpicked)
			}
		})
	}
}

// TestHostLambdaSpecialists: a plain host multi-agent app whose specialists are given as an
// Invokable and as a Streamable (not chat models) records each call as a visit of that
// specialist, after its handoff edge: fed the user's messages, ending with its answer.
func TestHostLambdaSpecialists(t *testing.T) {
	const input = "My train was cancelled: refund me and rebook me."
	answers := map[string]string{"refunds_desk": "Refunded 84 EUR.", "bookings_desk": "Rebooked on the 14:04, seat 42."}
	var mu sync.Mutex
	got := map[string][]*schema.Message{} // what each specialist was given
	given := func(name string, in []*schema.Message) {
		mu.Lock()
		defer mu.Unlock()
		got[name] = in
	}
	flow := agents.Flow{
		Name: "host-lambdas", DefaultInput: input,
		Scripts: map[string]agents.Script{"concierge": agents.NewScript(agents.Do(
			agents.Call("refunds_desk", map[string]string{"reason": "refund"}),
			agents.Call("bookings_desk", map[string]string{"reason": "rebook"})))},
		Build: func(ctx context.Context, models agents.ModelFor) (adk.Agent, error) {
			hm, err := models("concierge")
			if err != nil {
				return nil, err
			}
			ma, err := host.NewMultiAgent(ctx, &host.MultiAgentConfig{Name: "concierge", Host: host.Host{ToolCallingModel: hm},
				Specialists: []*host.Specialist{{
					AgentMeta: host.AgentMeta{Name: "refunds_desk", IntendedUse: "refunds"},
					Invokable: func(_ context.Context, in []*schema.Message, _ ...agent.AgentOption) (*schema.Message, error) {
						given("refunds_desk", in)
						return schema.AssistantMessage(answers["refunds_desk"], nil), nil
					},
				}, {
					AgentMeta: host.AgentMeta{Name: "bookings_desk", IntendedUse: "bookings"},
					Streamable: func(_ context.Context, in []*schema.Message, _ ...agent.AgentOption) (*schema.StreamReader[*schema.Message], error) {
						given("bookings_desk", in)
						return schema.StreamReaderFromArray([]*schema.Message{
							schema.AssistantMessage("Rebooked on the 14:04,", nil), schema.AssistantMessage(" seat 42.", nil)}), nil
					},
				}}})
			if err != nil {
				return nil, err
			}
			return agents.HostAgent("concierge", ma), nil
		},
	}
	modes(t, func(t *testing.T, streaming bool) {
		tr := recordInput(t, flow, input, streaming)
		checkTrace(t, tr, traces.StatusCompleted)
		f := facts{t: t, tr: tr}
		assertEqual(t, "transfers", f.transfers(), []string{"concierge -> refunds_desk (llm)", "concierge -> bookings_desk (llm)"})
		for desk, answer := range answers {
			edge := f.index(traces.KindTransfer, "concierge", func(x traces.Event) bool { return x.Transfer.To == desk })
			start := f.index(traces.KindAgentStarted, desk, nil)
			said := f.index(traces.KindMessage, desk, func(x traces.Event) bool { return x.Message.Content == answer })
			end := f.index(traces.KindAgentFinished, desk, nil)
			if !(edge >= 0 && edge < start && start < said && said < end && end < f.index(traces.KindAgentFinished, "concierge", nil)) {
				t.Errorf("%s: edge %d, visit %d..%d, answer %d: not in order inside concierge's", desk, edge, start, end, said)
				continue
			}
			e := tr.Events[start]
			if e.AgentRun.Via != "transfer" || fmt.Sprint(e.RunPath) != "[concierge "+desk+"]" {
				t.Errorf("%s's visit: via %s, run path %v", desk, e.AgentRun.Via, e.RunPath)
			}
			mu.Lock()
			in := got[desk]
			mu.Unlock()
			if len(e.AgentRun.Input) != len(in) || len(in) == 0 || e.AgentRun.Input[0].Content != in[0].Content {
				t.Errorf("%s's visit says it was fed %s, it was given %v", desk, joined(e.AgentRun.Input), in)
			}
		}
	})
}
