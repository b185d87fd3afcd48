package agents_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/traces"
	"github.com/baton-dev/baton/web"
)

// TestHeldTransferShowsWhatTheTargetWillBeFed: held before each transfer of real catalogue runs
// (a model's and a deterministic wrapper's), the page's banner shows what the target will be fed;
// once the run went on, that is exactly what the target's agent.started recorded and what its
// first model call received after its instruction. Where eino's default rewriting is not what
// the run does, the banner says so instead.
func TestHeldTransferShowsWhatTheTargetWillBeFed(t *testing.T) {
	for _, flow := range []string{"transfer", "supervisor", "pipeline", "transfer-noreturn", "transfer-rewriter", "transfer-skip"} {
		t.Run(flow, func(t *testing.T) {
			modes(t, func(t *testing.T, streaming bool) {
				r := debugRun(t, flow, streaming, "transfer")
				type preview struct {
					seq    int64
					held   web.Held
					target string
				}
				var seen []preview
				for {
					var done bool
					select {
					case <-r.rec.Done():
						done = true
					default:
					}
					if done {
						break
					}
					s, tr := r.nextOrEnd(t)
					if tr == nil {
						break
					}
					h := web.NewStats(*tr).Held
					if h == nil || h.Target != s.Target {
						t.Fatalf("held at %+v: the page's banner shows %+v", s, h)
					}
					seen = append(seen, preview{seq: h.Seq, held: *h, target: s.Target})
					r.resume(t, agents.Resume{Action: traces.ActionContinue, By: "test"})
				}
				_, tr := r.end(t)
				if len(seen) == 0 {
					t.Fatal("no transfer held the run")
				}
				predicted := 0
				for _, p := range seen {
					got, first := fedAfter(tr, p.seq, p.target)
					if p.held.FeedNote != "" {
						if len(p.held.Feed) > 0 {
							t.Fatalf("#%d: both a note and a preview", p.seq)
						}
						continue
					}
					predicted++
					feed := p.held.Feed
					if len(feed) > 0 && feed[0].Role == "system" {
						// The target's instruction, from its earlier calls: what its first call
						// after the transfer begins with.
						// (The banner shows eino's transfer instruction apart, cut at the blank line.)
						if sys := firstSystem(tr, p.seq, p.target); strings.Join(strings.Fields(feed[0].Content+" "+feed[0].Injected), " ") != strings.Join(strings.Fields(sys), " ") {
							t.Fatalf("#%d: the banner's system message for %s is %q, its next call's %q", p.seq, p.target, feed[0].Content+feed[0].Injected, sys)
						}
						feed = feed[1:]
					} else if calledBefore(tr, p.seq, p.target) {
						t.Fatalf("#%d: %s called its model before, yet the banner shows no system message", p.seq, p.target)
					}
					if want, have := fmt.Sprint(got), fmt.Sprint(shown(feed)); want != have {
						t.Fatalf("held #%d before %s: the banner showed\n%s\nbut %s received\n%s", p.seq, p.target, have, p.target, want)
					}
					if first != nil && fmt.Sprint(first) != fmt.Sprint(got) {
						t.Fatalf("#%d: %s's first model call received %v after its instruction, its agent %v", p.seq, p.target, first, got)
					}
					for _, m := range p.held.Feed {
						if m.Origin == "" {
							t.Fatalf("#%d: a message without origin: %+v", p.seq, m)
						}
					}
				}
				if own := mustFlow(t, flow).OwnHistory; own != "" && predicted > 0 {
					t.Fatalf("%s feeds its targets its own way (%s), yet the banner predicted", flow, own)
				}
				if predicted == 0 && flow != "transfer-rewriter" && flow != "transfer-skip" && flow != "pipeline" {
					t.Fatalf("no preview for %s: %+v", flow, seen)
				}
			})
		})
	}
}

// firstSystem returns the system message of agent's first model call after event seq of tr.
func firstSystem(tr traces.Trace, seq int64, agent string) string {
	for _, e := range tr.Events[seq:] {
		if e.Agent == agent && e.Kind == traces.KindModelStarted && len(e.Model.Input) > 0 && e.Model.Input[0].Role == "system" {
			return e.Model.Input[0].Content
		}
	}
	return ""
}

// calledBefore reports whether agent called its model before event seq of tr.
func calledBefore(tr traces.Trace, seq int64, agent string) bool {
	for _, e := range tr.Events[:seq-1] {
		if e.Agent == agent && e.Kind == traces.KindModelStarted {
			return true
		}
	}
	return false
}

// nextOrEnd is next, or nil once the run ended without being held again.
func (r *debugged) nextOrEnd(t *testing.T) (agents.Stop, *traces.Trace) {
	t.Helper()
	select {
	case s := <-r.stops:
		r.stops <- s
		s, tr := r.next(t)
		return s, &tr
	case st := <-r.status:
		r.status <- st
		return agents.Stop{}, nil
	}
}

// fedAfter returns what agent received at its first agent.started after event seq of tr, and
// what its first model call after that received after its system message (nil for none).
func fedAfter(tr traces.Trace, seq int64, agent string) (got, first []traces.Message) {
	for i := seq; i < int64(len(tr.Events)); i++ {
		e := tr.Events[i]
		if e.Agent != agent {
			continue
		}
		if got == nil && e.Kind == traces.KindAgentStarted {
			got = e.AgentRun.Input
		}
		if got != nil && e.Kind == traces.KindModelStarted {
			in := e.Model.Input
			if len(in) > 0 && in[0].Role == "system" {
				in = in[1:]
			}
			return got, in
		}
	}
	return got, nil
}

// shown is the banner's messages as the trace holds them.
func shown(fed []web.FedMessage) []traces.Message {
	out := make([]traces.Message, len(fed))
	for i, m := range fed {
		c := m.Content
		if m.Injected != "" {
			c += m.Injected
		}
		out[i] = traces.Message{Role: m.Role, Content: c, ToolCalls: m.ToolCalls, ToolName: m.ToolName, ToolCallID: m.ToolCallID}
	}
	return out
}
