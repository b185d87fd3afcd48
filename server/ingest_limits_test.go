package server_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/baton-dev/baton/server"
)

// TestIngestChecksWhatImportChecks: an app's run is held to the trace format's limits as an
// imported file is, by the same validator: names, agent kinds and parents, and the size its inputs expand to
// over the whole session.
func TestIngestChecksWhatImportChecks(t *testing.T) {
	ts := mustOpenServer(t, server.Config{})
	for _, tc := range []struct{ name, body, want string }{
		{"flow on two lines", `{"run":{"flow":"a\r\nSet-Cookie: x"}}`, "run.flow"},
		{"flow of a kilobyte", `{"run":{"flow":"` + strings.Repeat("f", 1024) + `"}}`, "run.flow is 1024 bytes long"},
		{"conversation with a slash", `{"run":{"conversation":"c/1"}}`, `run.conversation "c/1" holds '/'`},
		{"agent kind not documented", `{"agents":[{"name":"a","kind":"<script>"}]}`, `agents[0].kind "<script>" is not one of`},
		{"agent naming an unknown parent", `{"agents":[{"name":"a","kind":"chat_model"},{"name":"b","kind":"chat_model","parent":"c","relation":"subagent"}]}`,
			`agents[1]: agent "b" names parent "c", which is not among the agents`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := ts.do(t, request{method: http.MethodPost, path: "/api/ingest", body: tc.body})
			if res.status != http.StatusBadRequest || !strings.Contains(res.apiError(t), tc.want) {
				t.Errorf("status %d %s; want 400 saying %q", res.status, res.body, tc.want)
			}
		})
	}

	// Each call keeps all but the last message of the one before and adds two: small posts,
	// inputs quadratic once whole. The session is refused once past its budget, with a 400 that
	// says so, and its run keeps what came before.
	id := ts.startIngest(t, `{"agents":[{"name":"a","kind":"chat_model"}]}`, nil, http.StatusCreated).ID
	pad := strings.Repeat("x", 200)
	seq := 1
	post := func(n int) response {
		var b strings.Builder
		b.WriteString(`{"events":[`)
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"seq":%d,"time":"2026-01-02T03:04:05Z","kind":"model.started","agent":"a","model":{"id":"m%d",`, seq+i, seq+i)
			if seq+i > 1 {
				// call s has s+1 messages: keep all but the last of call s-1's s
				fmt.Fprintf(&b, `"input_from":%d,"input_keep":%d,`, seq+i-1, seq+i-1)
			}
			fmt.Fprintf(&b, `"input":[{"role":"user","content":"%d %s"},{"role":"user","content":"%s"}]}}`, seq+i, pad, pad)
		}
		b.WriteString(`]}`)
		return ts.do(t, request{method: http.MethodPost, path: "/api/ingest/" + id, body: b.String()})
	}
	for range 100 {
		res := post(50)
		if res.status == http.StatusBadRequest {
			if !strings.Contains(res.apiError(t), "input references would copy more than") {
				t.Fatalf("refused with %s, want the expansion budget's message", res.body)
			}
			if tr := ts.trace(t, id); len(tr.Events) != seq-1 {
				t.Errorf("the run holds %d events, want the %d accepted before", len(tr.Events), seq-1)
			}
			return
		}
		if res.status != http.StatusOK {
			t.Fatalf("post at seq %d: %d %s", seq, res.status, res.body)
		}
		seq += 50
	}
	t.Fatalf("a session whose inputs expand quadratically was accepted up to seq %d", seq)
}

// TestIngestCapsAgentsOverTheSession: a run streamed in posts may have no more agents than a
// trace file; an agent sent again is updated, not counted twice.
func TestIngestCapsAgentsOverTheSession(t *testing.T) {
	ts := mustOpenServer(t, server.Config{})
	agents := func(from, to int) string {
		var parts []string
		for i := from; i < to; i++ {
			parts = append(parts, fmt.Sprintf(`{"name":"a%d","kind":"chat_model"}`, i))
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	id := ts.startIngest(t, `{"agents":`+agents(0, 1500)+`}`, nil, http.StatusCreated).ID
	post := func(body string) response {
		return ts.do(t, request{method: http.MethodPost, path: "/api/ingest/" + id, body: body})
	}
	if res := post(`{"agents":` + agents(0, 1500) + `}`); res.status != http.StatusOK {
		t.Fatalf("the same 1,500 agents again: %d %s", res.status, res.body)
	}
	if res := post(`{"agents":` + agents(1500, 2100) + `}`); res.status != http.StatusBadRequest || !strings.Contains(res.apiError(t), "would have 2100 agents: a run may have at most 2000") {
		t.Fatalf("600 more: %d %s, want 400 naming the cap", res.status, res.body)
	}
	if res := post(`{"agents":` + agents(1500, 2000) + `}`); res.status != http.StatusOK {
		t.Fatalf("500 more, to the cap: %d %s", res.status, res.body)
	}
}
