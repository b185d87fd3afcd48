package templates_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/baton-dev/baton/internal/webtest"
	"github.com/baton-dev/baton/templates"
	"github.com/baton-dev/baton/traces"
)

// unpackReport returns what a report's pack element holds: its gzipped, base64 JSON object.
func unpackReport(t *testing.T, data string) map[string]json.RawMessage {
	t.Helper()
	zr, err := gzip.NewReader(base64.NewDecoder(base64.StdEncoding, strings.NewReader(strings.TrimSpace(data))))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]json.RawMessage
	if err := json.Unmarshal(plain, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestReportSequence: a report carries the whole run's sequence view once, in its own pack, for
// the Agents panel it shares with the run page (both tabs, the tree's zoom buttons); its frames
// carry none; and its one script is plain, its modules inlined.
func TestReportSequence(t *testing.T) {
	tr := webtest.Big(300)
	var b bytes.Buffer
	if err := templates.Report(context.Background(), &b, tr, nil); err != nil {
		t.Fatal(err)
	}
	doc := mustParse(t, b.String())
	for _, id := range []string{"view-tree", "view-sequence", "sequence", "zoom-in", "zoom-out", "seq-axis-note"} {
		if byTestID(doc, id).Length() != 1 {
			t.Errorf("the report has %d [data-testid=%s], want 1", byTestID(doc, id).Length(), id)
		}
	}
	if v, ok := doc.Find("#seq-data").Attr("data-json"); ok {
		t.Errorf("the page carries the sequence's data inline (%d bytes), not in its pack", len(v))
	}
	packs := doc.Find(`script.report-pack[data-kind=sequence]`)
	if packs.Length() != 1 {
		t.Fatalf("%d sequence packs, want 1", packs.Length())
	}
	var html string
	if err := json.Unmarshal(unpackReport(t, packs.Text())["0"], &html); err != nil {
		t.Fatal(err)
	}
	var seq struct {
		Full   bool              `json:"full"`
		Head   int64             `json:"head"`
		Arrows []json.RawMessage `json:"arrows"`
	}
	if err := json.Unmarshal([]byte(mustParse(t, html).Find("#seq-data").AttrOr("data-json", "")), &seq); err != nil {
		t.Fatalf("the packed #seq-data: %v", err)
	}
	transfers := 0
	for _, e := range tr.Events {
		if e.Kind == traces.KindTransfer {
			transfers++
		}
	}
	if last := tr.Events[len(tr.Events)-1].Seq; !seq.Full || seq.Head != last || len(seq.Arrows) < transfers || transfers == 0 {
		t.Errorf("the packed sequence is full %v as of #%d with %d arrows, want the whole run as of #%d with its %d transfers",
			seq.Full, seq.Head, len(seq.Arrows), last, transfers)
	}
	doc.Find(`script.report-pack[data-kind=frame]`).Each(func(_ int, s *goquery.Selection) {
		if strings.Contains(string(mustJSON(t, unpackReport(t, s.Text()))), `"seq-data"`) {
			t.Errorf("a frame pack carries the sequence view")
		}
	})
	script := doc.Find("script:not([type])").Text()
	if m := regexp.MustCompile(`(?m)^\s*(import|export)\b.*`).FindString(script); m != "" || !strings.Contains(script, "function initSequence") {
		t.Errorf("the report's script is not one plain script with its modules inlined: %q", m)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
