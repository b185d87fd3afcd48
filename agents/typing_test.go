package agents_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/traces"
)

func TestTypingFollowsStreamedReplies(t *testing.T) {
	flow, err := agents.Lookup("transfer")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	seen := map[string][]string{} // agent -> texts so far, "done: ..." last
	typing := func(agent, text string, done bool) {
		mu.Lock()
		defer mu.Unlock()
		if done {
			if text == "" {
				return // the end of a reply of tool calls only
			}
			text = "done: " + text
		}
		seen[agent] = append(seen[agent], text)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rec := traces.NewRecording(traces.Run{ID: "r-typing", Flow: flow.Name}, flow.Agents)
	status := agents.RunFlow(ctx, flow, "What's the weather in Tokyo?", agents.Options{Streaming: true, Typing: typing}, rec)
	if status != traces.StatusCompleted {
		t.Fatalf("run ended %s", status)
	}
	answer := lastAssistant(rec.Snapshot()).Message.Content // "Here's the forecast: Tokyo, ..."
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		got := append([]string(nil), seen["weather_agent"]...)
		mu.Unlock()
		if len(got) > 0 && got[len(got)-1] == "done: "+answer {
			// Word by word: each text extends the one before, the first is one word.
			for i := 1; i < len(got)-1; i++ {
				if !strings.HasPrefix(got[i], got[i-1]) || got[i] == got[i-1] {
					t.Fatalf("texts do not grow chunk by chunk: %q", got)
				}
			}
			if len(got) < 4 || got[0] != "Here's " {
				t.Fatalf("texts = %q, want one per word of %q", got, answer)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("weather_agent's typing = %q, want it to end with %q", got, "done: "+answer)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
