package e2e_test

import (
	"strings"
	"testing"
	"time"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/internal/agentstest"
	"github.com/baton-dev/baton/server"
	"github.com/baton-dev/baton/traces"
)

// TestForkFromTheInspector: on an ended supervisor run, a user inspects its first model call,
// asks what if it had transferred to math_agent, and lands on the fork's page, whose story shows
// the other route.
func TestForkFromTheInspector(t *testing.T) {
	t.Parallel()
	b := startStoredBaton(t)
	id := b.startRun(t, "supervisor", 0)
	b.waitRunEnded(t, id, 20*time.Second)
	tb := newTab(t, nil)
	tb.open(t, b.base+"/runs/"+id)
	tb.click(t, `#timeline-rows .row[data-kind="model.started"]`)
	tb.waitFor(t, "the fork form in the inspector", `!!document.querySelector('[data-testid=fork-form]')`)
	evalJS[bool](t, tb, `(document.querySelector('#fork-to').value = 'math_agent', true)`)
	tb.click(t, `[data-testid=fork-button]`)
	tb.waitFor(t, "the fork's page, with the other route", `location.pathname.startsWith('/runs/') && !location.pathname.endsWith('/`+id+`') &&
	  (document.querySelector('[data-testid=story-route]')?.textContent || '').startsWith('supervisor → math_agent')`)
	// The fork's page links back to the model call it changed; the original's lists the fork.
	tb.waitFor(t, "the link back to the original", `document.querySelector('[data-testid=forked-from] a')?.dataset.runId === `+jsString(id))
	fork := evalJS[string](t, tb, `document.body.dataset.runId`)
	tb.click(t, `[data-testid=forked-from] a`)
	tb.waitFor(t, "the original's page listing the fork", `location.pathname.endsWith('/`+id+`') && document.querySelector('[data-testid=forks] a')?.dataset.runId === `+jsString(fork))
}

// TestForkOnAnotherModel: on a server offering two models, the inspector's fork form offers the
// model for the rest of the run; picked, the fork's calls after its fork point go to it (the fake
// OpenAI server), the one before it answered from the recording.
func TestForkOnAnotherModel(t *testing.T) {
	t.Parallel()
	fake := agentstest.NewFakeOpenAI(t, agentstest.FakeReply{Text: "A fact from the fake."})
	real, err := agents.ParseModel("openai:fake-model", agents.ProviderEnv{APIKey: "k", BaseURL: fake.BaseURL()})
	if err != nil {
		t.Fatal(err)
	}
	b := startBatonWith(t, nil, func(c *server.Config) { c.Models = []*agents.Model{agents.Scripted(), real} })
	id := b.startRun(t, "transfer", 0) // on the first model, the scripted one
	b.waitRunEnded(t, id, 20*time.Second)
	tb := newTab(t, nil)
	tb.open(t, b.base+"/runs/"+id)
	tb.click(t, `#timeline-rows .row[data-kind="model.started"]`)
	tb.waitFor(t, "the fork form's model picker in the inspector", `!!document.querySelector('[data-testid=fork-form] [data-testid=fork-model]')`)
	evalJS[bool](t, tb, `(document.querySelector('#fork-to').value = 'chat_agent', document.querySelector('#fork-model').value = 'openai:fake-model', true)`)
	tb.click(t, `[data-testid=fork-button]`)
	tb.waitFor(t, "the fork's page", `location.pathname.startsWith('/runs/') && !location.pathname.endsWith('/`+id+`') && document.body.dataset.page === 'run'`)
	fork := b.waitRunEnded(t, evalJS[string](t, tb, `document.body.dataset.runId`), 20*time.Second)
	if fork.Run.Status != traces.StatusCompleted || !strings.HasSuffix(fork.Run.Model, "then openai:fake-model") || len(fake.Requests()) != 1 {
		t.Errorf("the fork is %s on %q after %d requests to the fake; want completed on the fake after one (chat_agent's)", fork.Run.Status, fork.Run.Model, len(fake.Requests()))
	}
	tb.waitFor(t, "the fake's answer on the fork's page", `document.body.textContent.includes('A fact from the fake.')`)
}
