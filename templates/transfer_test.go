package templates_test

import (
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/baton-dev/baton/templates"
	"github.com/baton-dev/baton/traces"
	"github.com/baton-dev/baton/web"
)

// TestRefusedTransferInspectorSaysWhoseWords: the inspector of a transfer eino refused shows its
// error and says, beside it, whose words it is: Baton's, when eino's were out of the recorder's
// reach, and why.
func TestRefusedTransferInspectorSaysWhoseWords(t *testing.T) {
	msg := `transfer to "support" refused: eino found no agent "support" reachable from "sales"`
	tr := traces.Trace{Run: traces.Run{ID: "r-refused", Flow: "sales", Status: traces.StatusFailed}, Events: []traces.Event{
		{Seq: 1, Kind: traces.KindRunStarted, Run: &traces.RunMark{Flow: "sales", Status: traces.StatusRunning}},
		{Seq: 2, Kind: traces.KindAgentStarted, Agent: "sales", RunPath: []string{"sales"}, AgentRun: &traces.AgentRun{Via: "run"}},
		{Seq: 3, Kind: traces.KindTransfer, Agent: "sales", RunPath: []string{"sales"}, Transfer: &traces.Transfer{From: "sales", To: "support",
			Mode: traces.TransferLLM, CallID: "c1", Outcome: traces.TransferFailed, Error: msg, ErrorBy: traces.ErrorByRecorder}},
		{Seq: 4, Kind: traces.KindError, Agent: "sales", RunPath: []string{"sales"}, Error: &traces.ErrorDetail{Message: msg}},
	}}
	c, err := templates.Inspector(tr, 3, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	in := byTestID(mustDoc(t, c), "inspection")
	words := ""
	in.Find("dl.facts > div").Each(func(_ int, f *goquery.Selection) {
		if f.Find("dt").Text() == web.ErrorWordsLabel {
			words = f.Find("dd").Text()
		}
	})
	if !strings.HasPrefix(words, "Baton: ") || !strings.Contains(words, "only on the Runner's event stream") {
		t.Errorf("the refused transfer's inspector says %q of its error's words, want Baton's and why", words)
	}
	if !strings.Contains(in.Text(), msg) {
		t.Errorf("the inspector does not show the error %q", msg)
	}
}
