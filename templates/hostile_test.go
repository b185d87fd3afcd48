package templates_test

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/baton-dev/baton/internal/live"
	"github.com/baton-dev/baton/internal/webtest"
	"github.com/baton-dev/baton/templates"
	"github.com/baton-dev/baton/traces"
	"github.com/baton-dev/baton/web"
)

const (
	xssScript = `<script>alert(1)</script>`
	xssImg    = `<img src=x onerror=alert(1)>`
	xss       = xssScript + xssImg + `"'><svg onload=alert(1)>javascript:alert(1)`
)

// hostileTrace puts attacker-controlled text everywhere a trace has text.
func hostileTrace() traces.Trace {
	evil := "agent" + xss
	agents := []traces.Agent{
		{Name: "root" + xssImg, Description: xss, Kind: traces.AgentSupervisor},
		{Name: evil, Description: xss, Kind: traces.AgentChatModel, Parent: "root" + xssImg, Relation: traces.RelationSubAgent},
		{Name: "tool" + xssScript, Description: xss, Kind: traces.AgentChatModel, Parent: "root" + xssImg, Relation: traces.RelationAgentTool},
	}
	b := webtest.New("r-"+xssImg, "flow"+xss, xss, agents...)
	b.Start("root"+xssImg, "run", webtest.Msg("user", xss), webtest.Said(evil, xss))
	b.Model("root"+xssImg, []traces.Message{webtest.Msg("system", xss)}, []string{xss}, webtest.Call("c"+xss, "t"+xss, xss), 10)
	b.Tool("root"+xssImg, "t"+xss, "c"+xss, `{"q":"`+strings.ReplaceAll(xss, `"`, `\"`)+`"}`, xss)
	b.Transfer("root"+xssImg, evil, traces.TransferLLM, xss)
	b.Start(evil, xss, webtest.ToolReturned("root"+xssImg, "t", xss))
	b.Set(evil, "key"+xss, map[string]string{xss: xss})
	b.Set(evil, "plain"+xss, xss)
	b.Add(traces.Event{Kind: traces.KindAgentToolEnter, Agent: "root" + xssImg, AgentTool: &traces.AgentToolCall{Caller: "root" + xssImg, Callee: "tool" + xssScript, CallID: xss, Request: xss}})
	b.Add(traces.Event{Kind: traces.KindAgentToolExit, Agent: "root" + xssImg, AgentTool: &traces.AgentToolCall{Caller: "root" + xssImg, Callee: "tool" + xssScript, CallID: xss, Result: xss}})
	b.Add(traces.Event{Kind: traces.KindMessage, Agent: "stray" + xss, Message: &traces.Message{Role: xss, Content: xss, ToolName: xss}})
	b.Add(traces.Event{Kind: traces.KindInterrupted, Agent: evil, Interrupt: &traces.Interrupt{ID: xss, Address: xss, Info: xss}})
	b.Add(traces.Event{Kind: traces.KindExit, Agent: evil, Exit: &traces.Exit{FinalResult: xss}})
	b.Add(traces.Event{Kind: traces.KindBreakLoop, Agent: evil, BreakLoop: &traces.BreakLoop{From: xss, Iterations: 2}})
	b.Error("", "transfer failed: agent '"+xss+"' not found when transferring from 'x'")
	return b.End(traces.StatusFailed, xss)
}

// assertInert fails when the HTML holds an element or attribute that could run script: any
// <script> but app.js, any <img>, <iframe> or <object>, an on* attribute, or a javascript: URL.
func assertInert(t *testing.T, where, src string) {
	t.Helper()
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(src))
	if err != nil {
		t.Fatalf("%s: parse: %v", where, err)
	}
	doc.Find("script").Each(func(_ int, s *goquery.Selection) {
		if s.AttrOr("src", "") != "/static/app.js" || strings.TrimSpace(s.Text()) != "" {
			h, _ := goquery.OuterHtml(s)
			t.Errorf("%s: unexpected <script>: %s", where, h)
		}
	})
	if n := doc.Find("img, iframe, object, embed, foreignObject").Length(); n > 0 {
		t.Errorf("%s: %d injected elements", where, n)
	}
	doc.Find("*").Each(func(_ int, s *goquery.Selection) {
		for _, a := range s.Nodes[0].Attr {
			if strings.HasPrefix(strings.ToLower(a.Key), "on") {
				t.Errorf("%s: <%s> has event handler %s", where, s.Nodes[0].Data, a.Key)
			}
			if (a.Key == "href" || a.Key == "src" || a.Key == "action") && strings.Contains(strings.ToLower(a.Val), "javascript:") {
				t.Errorf("%s: <%s %s=%q>", where, s.Nodes[0].Data, a.Key, a.Val)
			}
		}
	})
	// The text must survive, escaped: the page shows what the trace says. The agent filter and
	// the sequence view's data hold it in attributes (the sequence's is JSON, drawn as text).
	if !strings.Contains(doc.Text(), "alert(1)") && where != "fragment filter-agent" && where != "fragment seq-data" {
		t.Errorf("%s: the hostile text vanished instead of showing as text", where)
	}
}

func TestHostileStringsAreEscaped(t *testing.T) {
	ctx := context.Background()
	tr := hostileTrace()
	assertInert(t, "run page", renderString(t, templates.RunPage(tr, templates.PageOptions{Token: xss})))
	frags, err := templates.Fragments(ctx, tr, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range frags {
		assertInert(t, "fragment "+f.Target, f.HTML)
	}
	for _, e := range tr.Events {
		c, err := templates.Inspector(tr, e.Seq, &templates.Fork{}, nil) // a model call's fork form names the agents too
		if err != nil {
			t.Fatal(err)
		}
		assertInert(t, "inspector "+string(e.Kind), renderString(t, c))
	}
	idx := web.Index{
		Flows: []web.FlowInfo{{Name: xss, Title: xss, Description: xss, DefaultInput: xss, Agents: tr.Agents}},
		Runs:  web.NewRunRows([]live.RunSummary{{Run: traces.Run{ID: tr.Run.ID, Flow: xss, Input: xss, Error: xss, Status: traces.StatusFailed}}}, time.Now()),
		Query: live.RunQuery{Flow: xss, Text: xss},
		Next:  url.Values{"after": {xss}}.Encode(),
	}
	assertInert(t, "index", renderString(t, templates.IndexPage(idx, templates.PageOptions{})))
	assertInert(t, "not found", renderString(t, templates.ErrorPage(404, xss)))

	// Fragments travel as JSON: the hostile text stays inert inside the JSON too.
	raw, err := json.Marshal(frags)
	if err != nil || strings.Contains(string(raw), "<script>alert") {
		t.Errorf("fragment JSON carries a raw script tag: %v", err)
	}
}

func TestHostileNamesKeepIDsUsable(t *testing.T) {
	doc := mustParse(t, renderString(t, templates.RunPage(hostileTrace(), templates.PageOptions{})))
	seen := map[string]bool{}
	doc.Find("[id]").Each(func(_ int, s *goquery.Selection) {
		id := s.AttrOr("id", "")
		if strings.ContainsAny(id, " \t\n<>\"'") || seen[id] {
			t.Errorf("bad or duplicate id %q", id)
		}
		seen[id] = true
	})
	n := doc.Find("[data-testid]").FilterFunction(func(_ int, s *goquery.Selection) bool {
		return s.AttrOr("data-testid", "") == "node-agent"+xss
	})
	if n.Length() != 1 {
		t.Errorf("node of the hostile agent not found by its raw name")
	}
}
