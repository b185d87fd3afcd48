package agentstest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// FakeOpenAI is an OpenAI-compatible chat server for tests, answering POST /chat/completions with
// its replies in order: plain JSON, or server-sent events when the request asks to stream (the
// text in word chunks, tool calls in the first chunk, usage in a last chunk of its own, as OpenAI
// does with stream_options.include_usage). Point a model at URL with any key but "bad-key".
type FakeOpenAI struct {
	*httptest.Server

	mu       sync.Mutex
	replies  []FakeReply
	requests []FakeRequest
}

// FakeReply is one answer of a FakeOpenAI: a message (Text and ToolCalls), or a failure: Status
// with an OpenAI error Body, Malformed JSON, or Hang until the client gives up.
type FakeReply struct {
	Text      string
	ToolCalls []FakeToolCall
	Status    int
	Message   string // the error's message, with Status
	Malformed bool
	Hang      bool
}

// FakeToolCall is a tool call of a FakeReply.
type FakeToolCall struct{ Name, Arguments string }

// FakeRequest is what the fake was asked: the request's model, whether it streamed, and the names
// of the tools it offered.
type FakeRequest struct {
	Model  string
	Stream bool
	Tools  []string
}

// NewFakeOpenAI starts a fake that answers replies in order (then "no more replies", 500); it is
// closed when tb ends.
func NewFakeOpenAI(tb testing.TB, replies ...FakeReply) *FakeOpenAI {
	tb.Helper()
	f := &FakeOpenAI{replies: replies}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	tb.Cleanup(f.Close)
	return f
}

// BaseURL is what OPENAI_BASE_URL would say.
func (f *FakeOpenAI) BaseURL() string { return f.URL + "/v1" }

// Requests returns what the fake was asked, in order.
func (f *FakeOpenAI) Requests() []FakeRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]FakeRequest(nil), f.requests...)
}

func (f *FakeOpenAI) serve(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model  string `json:"model"`
		Stream bool   `json:"stream"`
		Tools  []struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
	}
	if r.URL.Path != "/v1/chat/completions" || json.NewDecoder(r.Body).Decode(&req) != nil {
		http.Error(w, `{"error":{"message":"bad request to the fake"}}`, http.StatusBadRequest)
		return
	}
	fr := FakeRequest{Model: req.Model, Stream: req.Stream}
	for _, t := range req.Tools {
		fr.Tools = append(fr.Tools, t.Function.Name)
	}
	f.mu.Lock()
	f.requests = append(f.requests, fr)
	n := len(f.requests)
	reply := FakeReply{Status: http.StatusInternalServerError, Message: "the fake has no more replies"}
	if len(f.replies) > 0 {
		reply, f.replies = f.replies[0], f.replies[1:]
	}
	f.mu.Unlock()
	if r.Header.Get("Authorization") == "Bearer bad-key" {
		reply = FakeReply{Status: http.StatusUnauthorized, Message: "Incorrect API key provided: bad-key."}
	}
	w.Header().Set("Content-Type", "application/json")
	switch {
	case reply.Hang:
		<-r.Context().Done()
	case reply.Status != 0:
		w.WriteHeader(reply.Status)
		json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": reply.Message, "type": "fake_error"}})
	case reply.Malformed:
		fmt.Fprint(w, `{"id":"chatcmpl-x","choices":[{"message":{"role":"assistant","content":"cut off`)
	case req.Stream:
		streamReply(w, reply, n)
	default:
		json.NewEncoder(w).Encode(completion(reply, n))
	}
}

// usage is the fake's token count: 10 prompt tokens, and one completion token per word.
func usage(reply FakeReply) map[string]int {
	n := len(strings.Fields(reply.Text)) + len(reply.ToolCalls)
	return map[string]int{"prompt_tokens": 10, "completion_tokens": n, "total_tokens": 10 + n}
}

// toolCalls are reply's calls as OpenAI writes them, with ids unique in the fake's life: request
// n's calls are call_n_1, call_n_2...
func toolCalls(reply FakeReply, n int, indexed bool) []map[string]any {
	var out []map[string]any
	for i, tc := range reply.ToolCalls {
		c := map[string]any{"id": fmt.Sprintf("call_%d_%d", n, i+1), "type": "function",
			"function": map[string]any{"name": tc.Name, "arguments": tc.Arguments}}
		if indexed {
			c["index"] = i
		}
		out = append(out, c)
	}
	return out
}

func finishReason(reply FakeReply) string {
	if len(reply.ToolCalls) > 0 {
		return "tool_calls"
	}
	return "stop"
}

func completion(reply FakeReply, n int) map[string]any {
	msg := map[string]any{"role": "assistant", "content": reply.Text}
	if tc := toolCalls(reply, n, false); tc != nil {
		msg["tool_calls"] = tc
	}
	return map[string]any{"id": "chatcmpl-fake", "object": "chat.completion", "model": "fake",
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finishReason(reply)}},
		"usage":   usage(reply)}
}

func streamReply(w http.ResponseWriter, reply FakeReply, n int) {
	w.Header().Set("Content-Type", "text/event-stream")
	send := func(v any) {
		data, _ := json.Marshal(v)
		fmt.Fprintf(w, "data: %s\n\n", data)
		if fl, ok := w.(http.Flusher); ok {
			fl.Flush()
		}
	}
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": "chatcmpl-fake", "object": "chat.completion.chunk", "model": "fake",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
	}
	words := strings.SplitAfter(reply.Text, " ")
	for i, word := range words {
		delta := map[string]any{"content": word}
		if i == 0 {
			delta["role"] = "assistant"
			if tc := toolCalls(reply, n, true); tc != nil {
				delta["tool_calls"] = tc
			}
		}
		var finish any
		if i == len(words)-1 {
			finish = finishReason(reply)
		}
		send(chunk(delta, finish))
	}
	send(map[string]any{"id": "chatcmpl-fake", "object": "chat.completion.chunk", "model": "fake",
		"choices": []any{}, "usage": usage(reply)})
	fmt.Fprint(w, "data: [DONE]\n\n")
}
