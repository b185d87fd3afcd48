// Package agentstest provides small flows for the tests of packages that record, store or show
// runs, as net/http/httptest does for HTTP: Hostile (markup everywhere a user sees text),
// FailingTool (a tool error and a tool panic), Long and LongTurns (thousands of events, for
// benchmarks) and Specialists (a supervisor's many handoffs). They run on real eino agents
// driven by agents.NewScriptedModel, and none is in the catalogue. A Gate holds any flow's run
// before a given model reply, for tests that must act while it goes on; FakeOpenAI is an
// OpenAI-compatible chat server, for tests of the openai: model; Record runs a flow to its trace.
package agentstest
