package templates

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/a-h/templ"

	"github.com/baton-dev/baton/internal/lint"
	"github.com/baton-dev/baton/internal/prices"
	"github.com/baton-dev/baton/internal/story"
	"github.com/baton-dev/baton/traces"
	"github.com/baton-dev/baton/web"
)

// PageOptions carries per-request settings of a page.
type PageOptions struct {
	// Token, if non-empty, is sent by the client script as ?token= on its websocket and fetch
	// calls. It is written into a <meta name="baton-token"> element of the page.
	Token string
	// PaceMS is where the pace slider starts: the run's pace, or on the index page the server's
	// default.
	PaceMS int
	// PaceFixed disables the slider: the run is over, its pace can no longer change.
	PaceFixed bool
	// NoPace leaves the slider out: the run was not started by this server, its pace is unknown.
	NoPace bool
	// Runnable says this server runs the run's flow, so that the run page offers Run again and
	// Replay; an app's run or a trace of another flow gets neither.
	Runnable bool
	// Conversation lists the runs of the run's conversation (the run itself included), oldest
	// first; empty when the run has none.
	// ConversationID and Conversation are the run's conversation and its runs, oldest first (see
	// Server.conversation); nil when the run stands alone.
	ConversationID string
	Conversation   []traces.Run
	// ForkedFrom is, for a fork, the run and model call it was forked from; Forks the runs forked
	// from this one, each with its origin (Run is then the fork's id).
	ForkedFrom *traces.ForkOrigin
	Forks      []traces.ForkOrigin
	// Findings are the handoff bugs the linter names in the run, listed under the header.
	Findings []lint.Finding
	// Story is the run's handoff story, the inspector's content while nothing is inspected.
	Story story.Story
	// Travel, when set, places a run page at one event of its run (GET /runs/:id?at=SEQ): the
	// page's view is the run as of that event, its timeline still the whole run.
	Travel *Travel
	// Breakpoints, when not nil, are the breakpoints of a run going on here that was started
	// with them: the page offers to change them.
	Breakpoints []string
	// AppRun says the run is an app's that opted in: the page offers to keep its breakpoints for
	// the app's next runs (NextRuns: they are kept), and says whether the app has them (Pending).
	AppRun, NextRuns, Pending bool
	// Prices price the run's model calls; nil shows no money.
	Prices prices.Table
	// SequenceSrc, when set, is where the page's script fetches the Sequence and Waterfall
	// views' data when one of them is first shown, rather than the page carrying it: a
	// finished run of a million events has some 35 MB of it.
	SequenceSrc string
	// HistoriesSrc, when set, is where the page's script fetches the session panel's histories
	// (HistoriesHTML) when the Session tab is first shown, rather than the page carrying them:
	// they classify every message of the run.
	HistoriesSrc string
}

// Travel places a run page at one event of its run.
type Travel struct {
	At     int64         // the event the page shows the run as of
	Head   int64         // the run's newest event: the page's script follows the run from there
	Status traces.Status // the run's status as of Head
	Kind   traces.Kind   // the kind of event At, which the page may not have a row of
}

// travel returns where a run page of v stands (at), the run's newest event (head) and status:
// opts.Travel, or the newest event of v when it is not set.
func travel(v web.View, opts PageOptions) (at, head int64, status traces.Status) {
	if t := opts.Travel; t != nil {
		return t.At, t.Head, t.Status
	}
	return v.Stats.LastSeq, v.Stats.LastSeq, v.Stats.Status
}

// scrubKind returns the kind of the event the page shows: opts.Travel's, or its row's.
func scrubKind(v web.View, opts PageOptions, at int64) string {
	if opts.Travel != nil && opts.Travel.Kind != "" {
		return string(opts.Travel.Kind)
	}
	return kindAt(v.Timeline, at)
}

// kindAt returns the kind of the timeline row of event seq, "" when there is none.
func kindAt(rows []web.Row, seq int64) string {
	i, ok := slices.BinarySearchFunc(rows, seq, func(r web.Row, s int64) int { return cmp.Compare(r.Seq, s) })
	if !ok {
		return ""
	}
	return string(rows[i].Kind)
}

// clientModules are the modules static/app.js imports, directly or not; each page preloads them.
var clientModules = []string{"index.js", "run.js", "common.js", "live.js", "travel.js", "graph.js", "sequence.js", "waterfall.js", "layout.js", "rows.js",
	"runstate.js", "filters.js", "rowfilter.js", "selection.js", "keys.js", "keymap.js", "typing.js"}

// n formats a viewBox coordinate: at most one decimal, no trailing zeros.
func n(f float64) string {
	return strconv.FormatFloat(math.Round(f*10)/10, 'f', -1, 64)
}

// translate returns an SVG transform moving to p.
func translate(x, y float64) string { return "translate(" + n(x) + " " + n(y) + ")" }

// colour returns the CSS class of an agent colour index, "agent-none" for -1.
func colour(i int) string {
	if i < 0 {
		return "agent-none"
	}
	return "agent-c" + strconv.Itoa(i%web.Palette)
}

// domID turns an arbitrary name into a fragment of an element id: ASCII letters, digits, '-' and
// '_' stay, every other byte becomes '.' and two hex digits, so distinct names stay distinct.
func domID(prefix, name string) string {
	var b strings.Builder
	b.WriteString(prefix)
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_':
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, ".%02x", c)
		}
	}
	return b.String()
}

func itoa(i int64) string { return strconv.FormatInt(i, 10) }

// runURL returns the path of a run page.
func runURL(id string) templ.SafeURL { return templ.URL("/runs/" + url.PathEscape(id)) }

// reportURL returns the path that downloads a run's self-contained HTML report.
func reportURL(id string) templ.SafeURL {
	return templ.URL("/runs/" + url.PathEscape(id) + "/report.html")
}

// downloadURL returns the path that downloads a run's trace JSON.
func downloadURL(id string) templ.SafeURL {
	return templ.URL("/api/runs/" + url.PathEscape(id) + "/trace?download=1")
}

func rfc3339(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// statusWord is a run status for people: "running", "completed"...
func statusWord(s traces.Status) string {
	if s == "" {
		return "unknown"
	}
	return string(s)
}

// paceTitle explains the pace slider, and why it does not move once the run is over.
func paceTitle(fixed bool) string {
	if fixed {
		return "The pace this run had: it is over, so its pace no longer changes; Run again uses it"
	}
	return "How long the scripted model waits before each reply"
}

func lines(s string) int { return strings.Count(s, "\n") + 1 }

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

// render renders c to a string.
func render(ctx context.Context, c templ.Component) (string, error) {
	var s string
	err := renderWith(ctx, c, func(html []byte) { s = string(html) })
	return s, err
}

// renderWith renders c and hands its HTML to use, which must not keep it. The live page renders
// its parts up to 500 times a second: each render writes into a buffer kept from an earlier one,
// and only what use makes of it is allocated.
func renderWith(ctx context.Context, c templ.Component, use func(html []byte)) error {
	b := renderBuffers.Get().(*bytes.Buffer)
	defer func() {
		if b.Cap() <= maxPooledRender {
			renderBuffers.Put(b)
		}
	}()
	b.Reset()
	if err := c.Render(ctx, b); err != nil {
		return err
	}
	use(b.Bytes())
	return nil
}

var renderBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPooledRender is the largest buffer kept for the next render: a rare big part is not worth
// holding on to.
const maxPooledRender = 1 << 20

func nodeTitle(nd web.Node) string {
	s := nd.Name + " (" + string(nd.Kind) + "): " + stateWord(nd)
	if nd.Description != "" {
		s += "\n" + nd.Description
	}
	if nd.Error != "" {
		s += "\n" + nd.Error
	}
	return s
}

// nodeLabel is an agent node's accessible name: what the node shows, in its order (name, state,
// detail), so that a person who says what they see names the node.
func nodeLabel(nd web.Node) string {
	s := nd.Name + ", " + stateWord(nd)
	if nd.Detail != "" {
		s += ", " + nd.Detail
	}
	if nd.Iteration > 0 {
		s += ", " + loopWord(nd)
	}
	return s
}

// loopWord is what a node run by a loop agent says of its loop: "loop 3", its iteration.
func loopWord(nd web.Node) string { return "loop " + strconv.Itoa(nd.Iteration) }

// loopBadgeW is the width of the pill that says loopWord in 13px bold text.
func loopBadgeW(nd web.Node) float64 { return 14 + 8*float64(len([]rune(loopWord(nd)))) }

// teamWord is what a collapsed team's badge says: "team +4", the agents its lead stands for.
func teamWord(nd web.Node) string { return "team +" + strconv.Itoa(nd.Team) }

// teamBadgeW is the width of the pill that says teamWord in 13px bold text.
func teamBadgeW(nd web.Node) float64 { return 16 + 8*float64(len([]rune(teamWord(nd)))) }

// stateWord is what an agent's node says of its state: "handed off" for one done by handing
// control to another (a supervisor waiting for its sub-agent to come back says so, not "done").
func stateWord(nd web.Node) string {
	switch {
	case nd.Missing:
		return "not found"
	case nd.State == web.StateDone && nd.HandedOff:
		return "handed off"
	}
	return string(nd.State)
}

func transferTitle(t web.TransferEdge) string {
	s := fmt.Sprintf("transfer %d: %s → %s (%s)", t.Order, t.From, t.To, t.Mode)
	if t.Failed {
		s += ", failed"
	}
	return s
}

func bundleTitle(b web.TransferBundle) string {
	s := fmt.Sprintf("%d transfers: %s → %s (%s)", b.Count, b.From, b.To, b.Mode)
	if b.Failed > 0 {
		s += fmt.Sprintf(", %d failed", b.Failed)
	}
	return s + "; inspect the newest, which lists them all"
}

// atTitle is the accessible name of an AgentTool frame's call or result arrow: its word as
// drawn, then the callee and the call's order among the run's AgentTool calls.
func atTitle(word string, b web.Boundary) string {
	return fmt.Sprintf("%s: %s, AgentTool call %d", word, b.Callee, b.Order)
}

// preview returns the head of a long text for a folded view.
func preview(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 && i < 200 {
		s = s[:i]
	}
	if r := []rune(s); len(r) > 200 {
		s = string(r[:199])
	}
	return s + "…"
}

// howDetail is what a fed message's How adds to its origin label: nothing for an instruction, an
// input or an own turn, whose label says it all.
func howDetail(m web.FedMessage) string {
	if m.How == string(m.Origin) || m.Origin == web.OriginUserInput {
		return ""
	}
	return m.How
}

// flowNames are the flows the list's filter offers: the catalogue's, and the one filtered on
// when it is another (an app's runs).
func flowNames(idx web.Index) []string {
	names := make([]string, 0, len(idx.Flows)+1)
	for _, f := range idx.Flows {
		names = append(names, f.Name)
	}
	if q := idx.Query.Flow; q != "" && !slices.Contains(names, q) {
		names = append(names, q)
	}
	return names
}

// sequenceJSON encodes s for sequenceData. A web.Sequence is plain data, finite numbers and
// strings, so it always encodes; were it not to, the view would show nothing rather than break.
func sequenceJSON(s web.Sequence) string {
	b, err := json.Marshal(s)
	if err != nil {
		return "{}"
	}
	return string(b)
}

// conversationDiff is the diff page of runs other and current, both of runs (a conversation,
// oldest first): the older one on the left.
func conversationDiff(runs []traces.Run, other, current string) templ.SafeURL {
	at := func(id string) int { return slices.IndexFunc(runs, func(r traces.Run) bool { return r.ID == id }) }
	if at(current) < at(other) {
		return diffURL(current, other)
	}
	return diffURL(other, current)
}

// errorHeading names the kind of problem an error page's HTTP status says.
func errorHeading(status int) string {
	switch {
	case status == http.StatusNotFound:
		return "Not found"
	case status == http.StatusRequestEntityTooLarge:
		return "Too large"
	case status == http.StatusServiceUnavailable:
		return "Busy"
	case status >= 400 && status < 500:
		return "Cannot show that"
	}
	return "Something went wrong"
}

// clipText is s cut to at most n runes, with "…" when cut.
func clipText(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// heldTransfers reports whether the reply a held run stopped at transfers.
func heldTransfers(h web.Held) bool {
	if h.Reply == nil {
		return false
	}
	for _, tc := range h.Reply.ToolCalls {
		if tc.Name == "transfer_to_agent" {
			return true
		}
	}
	return false
}

// heldInputJSON writes the messages a held model call is to receive as the JSON a person edits
// and POST /api/runs/:id/continue takes back as "input".
func heldInputJSON(in []traces.Message) string {
	b, err := json.MarshalIndent(in, "", "  ")
	if err != nil {
		return "[]"
	}
	return string(b)
}

// heldReplyJSON is the reply a held run stopped at, as JSON, for the page to edit ("" for none).
func heldReplyJSON(h web.Held) string {
	if h.Reply == nil {
		return ""
	}
	b, err := json.Marshal(h.Reply)
	if err != nil {
		return ""
	}
	return string(b)
}

// joinBreakpoints writes breakpoints as the page's field shows them.
func joinBreakpoints(points []string) string { return strings.Join(points, ", ") }
