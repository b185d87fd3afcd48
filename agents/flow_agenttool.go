package agents

import (
	"context"
	"fmt"
	"strings"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/schema"

	"github.com/baton-dev/baton/traces"
)

// Agent descriptions of the agenttool flow; eino uses a callee's description as its tool's.
const (
	pmDesc         = "Plans the work and delegates it to the research, code and review agents."
	researcherDesc = "Researches an engineering question on the web and writes short notes."
	codeDesc       = "Writes Go code into the workspace."
	reviewDesc     = "Reviews code in the workspace and runs its tests."
	notesKey       = "research_notes" // session key research_agent's answer is stored under (OutputKey)
	filePrefix     = "file:"          // session keys of files write_file stores: "file:<path>"
	rateLimitGo    = "middleware/ratelimit.go"
	testsPassing   = "ok  \tgithub.com/acme/api/middleware\t0.014s\t(3 tests passed: allows a burst of 20, rejects the 21st with 429, sets Retry-After)"
)

func init() {
	register(Flow{
		Name:  "agenttool",
		Title: "AgentTool: a project manager calls agents as tools",
		Group: GroupAgentTool,
		Plain: "A project manager calls other agents the way it calls tools: each works in a conversation of its own and returns one answer, and they share notes through the session.",
		Description: "A project_manager ChatModelAgent whose tools are other agents, wrapped with adk.NewAgentTool " +
			"(ToolsConfig.EmitInternalEvents on, so their inner events reach the stream). Each call runs the callee " +
			"in its own history with only the request as input, and its final answer becomes the tool result; " +
			"the callees share the caller's session: research_agent's answer lands in the session under " +
			"research_notes (OutputKey) and eino's prompt builder fills {research_notes} in code_agent's " +
			"instruction; write_file stores the file in the session, where review_agent's run_tests reads it.",
		DefaultInput: "Add rate limiting to the public API",
		InputNote:    fixedAnswers,
		Agents: []traces.Agent{
			{Name: "project_manager", Description: pmDesc, Kind: traces.AgentChatModel,
				Tools: []string{"research_agent", "code_agent", "review_agent"}},
			{Name: "research_agent", Description: researcherDesc, Kind: traces.AgentChatModel, Parent: "project_manager",
				Relation: traces.RelationAgentTool, Tools: []string{"web_search"}, OutputKey: notesKey},
			{Name: "code_agent", Description: codeDesc, Kind: traces.AgentChatModel, Parent: "project_manager",
				Relation: traces.RelationAgentTool, Tools: []string{"write_file"}},
			{Name: "review_agent", Description: reviewDesc, Kind: traces.AgentChatModel, Parent: "project_manager",
				Relation: traces.RelationAgentTool, Tools: []string{"run_tests"}},
		},
		Scripts: map[string]Script{
			"project_manager": NewScript(
				SayAndDo("Plan: research how to do it, implement it, then have it reviewed. Research first.",
					Ask("research_agent", "How should a public HTTP API written in Go do rate limiting?")),
				Do(Ask("code_agent", "Add rate limiting middleware to the public API, following the research notes.")),
				Do(Ask("review_agent", "Review "+rateLimitGo+" and run its tests.")),
				Say("Rate limiting is in: "+rateLimitGo+" adds a per-API-key token bucket (10 requests/s, bursts of 20) "+
					"and answers 429 Too Many Requests with a Retry-After header. The review passed and all 3 tests pass."),
			),
			"research_agent": NewScript(
				Do(Call("web_search", searchArg{Query: "rate limiting public HTTP API Go best practices"})),
				Say("Use a token bucket per API key (golang.org/x/time/rate), e.g. 10 requests/s with bursts of 20. "+
					"Reject excess requests with 429 Too Many Requests and a Retry-After header."),
			),
			"code_agent": NewScript(
				Computed(writeRateLimiter),
				Say("I wrote "+rateLimitGo+": a per-key token bucket middleware that answers 429 with Retry-After."),
			),
			"review_agent": NewScript(
				Do(Call("run_tests", pathArg{Path: rateLimitGo})),
				QuoteToolResult("The middleware looks right and the tests pass:\n%s"),
			),
		},
		Build: buildAgentTool,
	})
}

// buildAgentTool builds the agenttool flow anew.
func buildAgentTool(ctx context.Context, models ModelFor) (adk.Agent, error) {
	callees, err := newCallees(ctx, models)
	if err != nil {
		return nil, err
	}
	var tools []tool.BaseTool
	for _, a := range callees {
		tools = append(tools, adk.NewAgentTool(ctx, a))
	}
	var conf adk.ToolsConfig
	conf.Tools = tools
	conf.EmitInternalEvents = true
	return NewChatAgent(ctx, models, adk.ChatModelAgentConfig{
		Name:        "project_manager",
		Description: pmDesc,
		Instruction: "You are a project manager. Break the request into research, implementation and review, " +
			"give each to the matching agent tool in that order, then report to the user.",
		ToolsConfig: conf,
	})
}

// newCallees builds research_agent, code_agent and review_agent, in that order.
func newCallees(ctx context.Context, models ModelFor) ([]adk.Agent, error) {
	var rt, ct, vt toolBox
	addTool(&rt, "web_search", "Search the web.", webSearch)
	addTool(&ct, "write_file", "Write a file into the workspace.", writeFile)
	addTool(&vt, "run_tests", "Run the tests of the package a file belongs to.", runTests)
	confs := []adk.ChatModelAgentConfig{{
		Name:        "research_agent",
		Description: researcherDesc,
		Instruction: "You research engineering questions. Search the web, then answer with short, concrete notes.",
		ToolsConfig: rt.toolsConfig(),
		OutputKey:   notesKey,
	}, {
		Name:        "code_agent",
		Description: codeDesc,
		// eino's default prompt builder replaces {research_notes} with the session value.
		Instruction: "You write Go code and save it with write_file. Follow these research notes:\n{" + notesKey + "}",
		ToolsConfig: ct.toolsConfig(),
	}, {
		Name:        "review_agent",
		Description: reviewDesc,
		Instruction: "You review code: run the tests of the files you are asked about and report.",
		ToolsConfig: vt.toolsConfig(),
	}}
	for _, box := range []*toolBox{&rt, &ct, &vt} {
		if box.err != nil {
			return nil, box.err
		}
	}
	return newChatAgents(ctx, models, confs...)
}

// searchArg is web_search's argument.
type searchArg struct {
	Query string `json:"query" jsonschema:"description=what to search for"`
}

// webSearch answers the three best matches in engineeringCorpus.
func webSearch(_ context.Context, in searchArg) (string, error) {
	found := engineeringCorpus.search(in.Query, 3)
	if len(found) == 0 {
		return fmt.Sprintf("No results for %q.", in.Query), nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Results for %q:", in.Query)
	for i, f := range found {
		fmt.Fprintf(&b, "\n%d. %s", i+1, f)
	}
	return b.String(), nil
}

// fileArg is write_file's argument.
type fileArg struct {
	Path    string `json:"path" jsonschema:"description=the file's path in the workspace"`
	Content string `json:"content" jsonschema:"description=the whole file"`
}

// writeFile "writes" a file into the run's session (the workspace), under "file:<path>".
func writeFile(ctx context.Context, in fileArg) (string, error) {
	if in.Path == "" {
		return "", fmt.Errorf("write_file: empty path")
	}
	adk.AddSessionValue(ctx, filePrefix+in.Path, in.Content)
	return fmt.Sprintf("wrote %s (%d bytes)", in.Path, len(in.Content)), nil
}

// pathArg is run_tests's argument.
type pathArg struct {
	Path string `json:"path" jsonschema:"description=a file of the package to test"`
}

// runTests checks the file write_file stored in the session, so it fails when the code was never
// written or lacks what the tests exercise.
func runTests(ctx context.Context, in pathArg) (string, error) {
	v, ok := adk.GetSessionValue(ctx, filePrefix+in.Path)
	code, _ := v.(string)
	if !ok || code == "" {
		return fmt.Sprintf("FAIL\t%s: no such file in the workspace", in.Path), nil
	}
	for _, want := range []string{"rate.NewLimiter", "StatusTooManyRequests", "Retry-After"} {
		if !strings.Contains(code, want) {
			return fmt.Sprintf("FAIL\t%s: expected the code to use %s", in.Path, want), nil
		}
	}
	return testsPassing, nil
}

// writeRateLimiter is code_agent's first move: write the middleware, as the research notes in its
// system prompt say, or a plainer one when they never arrived.
func writeRateLimiter(input []*schema.Message) Reply {
	if !strings.Contains(systemPromptText(input), "token bucket") {
		return Reply{Text: "I got no research notes, so I'll write the simplest limiter.",
			ToolCalls: []ToolCall{Call("write_file", fileArg{Path: rateLimitGo, Content: plainLimiterGo})}}
	}
	return Reply{ToolCalls: []ToolCall{Call("write_file", fileArg{Path: rateLimitGo, Content: rateLimiterGo})}}
}

// systemPromptText joins the content of the system messages of input.
func systemPromptText(input []*schema.Message) string {
	var b strings.Builder
	for _, m := range input {
		if m != nil && m.Role == schema.System {
			b.WriteString(m.Content)
		}
	}
	return b.String()
}

// rateLimiterGo is the file code_agent writes when it has the research notes.
const rateLimiterGo = `package middleware

import (
	"net/http"
	"sync"

	"golang.org/x/time/rate"
)

// RateLimit allows each API key 10 requests/s with bursts of 20.
func RateLimit(next http.Handler) http.Handler {
	var mu sync.Mutex
	limiters := map[string]*rate.Limiter{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get("X-API-Key")
		mu.Lock()
		l, ok := limiters[key]
		if !ok {
			l = rate.NewLimiter(10, 20)
			limiters[key] = l
		}
		mu.Unlock()
		if !l.Allow() {
			w.Header().Set("Retry-After", "1")
			http.Error(w, "rate limit exceeded", http.StatusTooManyRequests)
			return
		}
		next.ServeHTTP(w, r)
	})
}
`

// plainLimiterGo is what code_agent writes without notes; run_tests rejects it.
const plainLimiterGo = `package middleware

import "net/http"

// RateLimit is a placeholder that lets everything through.
func RateLimit(next http.Handler) http.Handler { return next }
`
