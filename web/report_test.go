package web_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/baton-dev/baton/internal/webtest"
	"github.com/baton-dev/baton/traces"
	"github.com/baton-dev/baton/web"
)

// NewReport inspects every event as NewInspection does, keeping only the latest steps of a run
// path that grows with every transfer.
func TestReportInspectsEveryEvent(t *testing.T) {
	tr := webtest.Big(300)
	r := web.NewReport(tr)
	if len(r.Inspections) != len(tr.Events) {
		t.Fatalf("%d inspections, want one per event (%d)", len(r.Inspections), len(tr.Events))
	}
	if len(r.Agents) != len(r.View.Agents) {
		t.Errorf("%d agent summaries, want %d", len(r.Agents), len(r.View.Agents))
	}
	capped := 0
	for i, in := range r.Inspections {
		one, err := web.NewInspection(tr, tr.Events[i].Seq)
		if err != nil {
			t.Fatal(err)
		}
		if in.Seq != one.Seq || in.Title != one.Title || len(in.Facts) != len(one.Facts) {
			t.Errorf("inspection %d differs from NewInspection's: %+v", i, in)
		}
		if len(in.RunPath) > web.ReportRunPath+1 {
			t.Errorf("event %d: a run path of %d steps", in.Seq, len(in.RunPath))
		}
		if len(one.RunPath) > web.ReportRunPath {
			capped++
			if in.RunPath[0] != "…" || in.RunPath[len(in.RunPath)-1] != one.RunPath[len(one.RunPath)-1] {
				t.Errorf("event %d: run path %q, want … and the latest steps of %q", in.Seq, in.RunPath, one.RunPath)
			}
		}
	}
	if capped == 0 {
		t.Errorf("no run path was long enough to be capped: the test checks nothing")
	}
}

// The report's inspections share one index of message sources, read ahead of the event when a
// transfer shows what its target then received: each is still exactly what NewInspection, on a
// fresh analysis, says of its event.
func TestReportInspectionsMatchOneByOne(t *testing.T) {
	recorded := webtest.RecordedSupervisor(t)
	for name, tr := range map[string]traces.Trace{"recorded supervisor": recorded, "agenttool": webtest.AgentTool()} {
		r := web.NewReport(tr)
		fed := 0
		for i, in := range r.Inspections {
			one, err := web.NewInspection(tr, tr.Events[i].Seq)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(in, one) {
				t.Errorf("%s: the report's inspection of #%d differs from NewInspection's:\n%+v\n%+v", name, one.Seq, in, one)
			}
			fed += len(in.Messages)
		}
		if fed == 0 {
			t.Errorf("%s: no inspection shows fed messages: the test checks nothing", name)
		}
	}
}

// The report's frames are the page as of their events, as time travel on the run page draws it
// (the sequence aside: the report has the whole run's once): every event of a short run,
// ReportFrames spread over a long one, the last event last.
func TestReportFrames(t *testing.T) {
	recorded := webtest.RecordedSupervisor(t)
	long := webtest.Big(3 * web.ReportFrames)
	for name, tc := range map[string]struct {
		tr   traces.Trace
		want int
	}{"recorded supervisor": {recorded, len(recorded.Events)}, "long": {long, web.ReportFrames}} {
		frames := web.NewReport(tc.tr).Frames
		whole := web.NewViewState(tc.tr.Run, tc.tr.Agents)
		whole.Add(tc.tr.Events...)
		if len(frames) != tc.want {
			t.Fatalf("%s: %d frames, want %d", name, len(frames), tc.want)
		}
		if last := tc.tr.Events[len(tc.tr.Events)-1].Seq; frames[len(frames)-1].Seq != last {
			t.Errorf("%s: the last frame is #%d, want the last event #%d", name, frames[len(frames)-1].Seq, last)
		}
		for i, f := range frames {
			if i > 0 && f.Seq <= frames[i-1].Seq {
				t.Fatalf("%s: frame %d is #%d, after #%d", name, i, f.Seq, frames[i-1].Seq)
			}
			if f.Sequence != nil {
				t.Fatalf("%s: the frame as of #%d carries a sequence", name, f.Seq)
			}
			want := web.ViewAt(tc.tr, f.Seq).Redraw()
			want.Stats.Away = whole.AwayAt(f.Seq) // where it stands in the run, as a page put there
			if want.Sequence = nil; !reflect.DeepEqual(f, want) {
				t.Fatalf("%s: the frame as of #%d differs from time travel's", name, f.Seq)
			}
		}
	}
}

// TestReportFramesBoundedByTree: each frame draws the whole tree, so a report of a wide tree
// gets fewer frames: its work grows with its agents, not agents times frames.
func TestReportFramesBoundedByTree(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tr := traces.Trace{Run: traces.Run{ID: "r", Status: traces.StatusRunning, StartedAt: at}}
	tr.Agents = append(tr.Agents, traces.Agent{Name: "root", Kind: traces.AgentSupervisor})
	for i := range 1024 {
		name := fmt.Sprintf("a%d", i)
		tr.Agents = append(tr.Agents, traces.Agent{Name: name, Kind: traces.AgentChatModel, Parent: "root", Relation: traces.RelationSubAgent})
		tr.Events = append(tr.Events, traces.Event{Seq: int64(i + 1), Time: at, Kind: traces.KindAgentStarted, Agent: name, AgentRun: &traces.AgentRun{Via: "run"}})
	}
	r := web.NewReport(tr)
	if n := len(r.Frames); n > 256*web.ReportFrames/len(tr.Agents)+1 || n < 16 {
		t.Errorf("%d frames for %d agents, want at most %d", n, len(tr.Agents), 256*web.ReportFrames/len(tr.Agents))
	}
	if len(r.Agents) != len(tr.Agents) {
		t.Errorf("%d agent summaries, want %d", len(r.Agents), len(tr.Agents))
	}
}

// growingTrace is a run of n turns of agent a: each starts the agent with the history before it
// and one message more, then calls its model with that history and its reply; every input
// refers to the one before, so the inputs share one array, as a trace read back holds them.
func growingTrace(t *testing.T, n int) traces.Trace {
	t.Helper()
	lines := []string{`{"seq":1,"time":"2026-01-02T03:04:05Z","kind":"run.started","run":{"status":"running"}}`}
	seq, msgs, last := 2, 0, 0
	add := func(format string, args ...any) {
		lines = append(lines, fmt.Sprintf(format, args...))
		seq++
	}
	ref := func() string {
		if last == 0 {
			return ""
		}
		return fmt.Sprintf(`"input_from":%d,"input_keep":%d,`, last, msgs)
	}
	for i := range n {
		add(`{"seq":%d,"time":"2026-01-02T03:04:05Z","kind":"agent.started","agent":"a","agent_run":{%s"input":[{"role":"user","content":"ask %d"}]}}`, seq, ref(), i)
		last, msgs = seq-1, msgs+1
		add(`{"seq":%d,"time":"2026-01-02T03:04:05Z","kind":"model.started","agent":"a","model":{"id":"m%d",%s"input":[{"role":"assistant","content":"note %d"}]}}`, seq, i+1, ref(), i)
		last, msgs = seq-1, msgs+1
		add(`{"seq":%d,"time":"2026-01-02T03:04:05Z","kind":"model.finished","agent":"a","model":{"id":"m%d","output":{"role":"assistant","content":"reply %d"}}}`, seq, i+1, i)
		add(`{"seq":%d,"time":"2026-01-02T03:04:05Z","kind":"agent.finished","agent":"a","agent_run":{}}`, seq)
	}
	add(`{"seq":%d,"time":"2026-01-02T03:04:06Z","kind":"run.finished","run":{"status":"completed"}}`, seq)
	doc := `{"format":"baton.trace","version":2,"run":{"id":"r-grow","flow":"f","input":"","model":"m","status":"completed","started_at":"2026-01-02T03:04:05Z"},` +
		`"agents":[{"name":"a","kind":"chat_model"}],"events":[` + strings.Join(lines, ",\n") + "]}\n"
	tr, err := traces.Unmarshal([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// A report of a growing conversation keeps, in each inspection and each frame's history, the
// latest ReportMessages messages alone, classified as NewInspection classifies the whole input:
// whole in every inspection and frame, it would grow with the square of the run.
func TestReportKeepsTheLatestMessagesOfAGrowingHistory(t *testing.T) {
	tr := growingTrace(t, 150)
	r := web.NewReport(tr)
	cut := 0
	for i, in := range r.Inspections {
		if len(in.Messages) > web.ReportMessages {
			t.Fatalf("event %d: %d messages in the report's inspection", in.Seq, len(in.Messages))
		}
		one, err := web.NewInspection(tr, tr.Events[i].Seq)
		if err != nil {
			t.Fatal(err)
		}
		if len(one.Messages) > web.ReportMessages {
			cut++
			if !strings.Contains(in.MessagesTitle, "the last") {
				t.Errorf("event %d: title %q does not say the messages were cut", in.Seq, in.MessagesTitle)
			}
		}
		latest := one.Messages[max(0, len(one.Messages)-web.ReportMessages):]
		if !reflect.DeepEqual(in.Messages, latest) && len(latest) > 0 {
			t.Fatalf("event %d: the report shows %+v, want the latest of NewInspection's: %+v", in.Seq, in.Messages, latest)
		}
	}
	if cut == 0 {
		t.Fatal("no input was past ReportMessages: the test tests nothing")
	}
	for _, f := range r.Frames {
		for _, h := range f.Session.Histories {
			if len(h.Messages) > web.ReportMessages || h.Fed < len(h.Messages) {
				t.Fatalf("frame at %d: a history of %d messages shown of %d fed", f.Seq, len(h.Messages), h.Fed)
			}
		}
	}
}
