// Package web is Baton's view: from a trace (up to some event) to what the pages draw. The tree's
// layout, edges and AgentTool frames, the timeline's rows with their filters and search, the
// inspector, the session, the sequence view, the agent summaries and the report are computed
// for a whole trace (NewView), event by event as a run goes on (ViewState), or as of any event
// of a run (Travel), by one piece per panel that takes in each event and copies itself for time
// travel (see analysis in state.go). It does no I/O: it imports traces and, to count prompt
// tokens where a model reported none, the tiktoken tokenizer with its cl100k_base encoding
// embedded in the binary. So every picture the run page shows can be tested without a browser.
//
// It is Baton's own, not a supported API: its exported names serve packages templates and server
// and may change in any release.
package web
