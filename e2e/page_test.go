package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// waitTimeout bounds every wait on the page: generous for 2 busy cores under -race, and still
// far below the package's budget, so a hang fails with a message instead of a test timeout.
const waitTimeout = 20 * time.Second

// edge is a transfer edge as the page draws it.
type edge struct {
	Order int    `json:"order"`
	Mode  string `json:"mode"`
	From  string `json:"from"`
	To    string `json:"to"`
	Seq   int64  `json:"seq"`
}

func (e edge) String() string { return fmt.Sprintf("%d %s %s->%s", e.Order, e.Mode, e.From, e.To) }

// sessionValue is a row of the session values table.
type sessionValue struct {
	Key   string `json:"key"`
	SetBy string `json:"setBy"`
}

// pageState is what the run page shows, read from its data-testid hooks.
type pageState struct {
	URL       string            `json:"url"`
	Page      string            `json:"page"`
	Status    string            `json:"status"`
	Live      string            `json:"live"`
	Seqs      []int64           `json:"seqs"`
	Edges     []edge            `json:"edges"`
	Nodes     map[string]string `json:"nodes"` // agent -> data-state
	Active    []string          `json:"active"`
	Histories []string          `json:"histories"` // agents with a session-history panel
	Fed       map[string]int    `json:"fed"`       // agent -> fed-message count in its history
	Values    []sessionValue    `json:"values"`
	At        float64           `json:"at"` // Date.now() when a recorder took it
	Hash      string            `json:"hash"`
	Inspector string            `json:"inspector"` // the start of what the inspector shows
}

// snapJS is a page function returning a pageState.
const snapJS = `(() => {
  const q = (s, root) => Array.from((root || document).querySelectorAll(s));
  const st = document.querySelector('[data-testid=run-status]');
  const nodes = {}, active = [], fed = {};
  for (const n of q('#graph [data-testid^="node-"]')) {
    nodes[n.dataset.agent] = n.dataset.state;
    if (n.dataset.state === 'active') active.push(n.dataset.agent);
  }
  const histories = [];
  for (const h of q('[data-testid^="session-history-"]')) {
    const a = h.dataset.testid.slice('session-history-'.length);
    histories.push(a);
    fed[a] = q('[data-testid=fed-message]', h).length;
  }
  return {
    url: location.href,
    page: document.body ? (document.body.dataset.page || '') : '',
    status: st ? st.dataset.status : '',
    live: document.body ? (document.body.dataset.live || '') : '',
    seqs: q('[data-testid=timeline-row]').map(r => Number(r.dataset.seq)),
    edges: q('[data-testid=transfer-edge]').map(e => ({order: Number(e.dataset.order), mode: e.dataset.mode,
      from: e.dataset.from, to: e.dataset.to, seq: Number(e.dataset.seq)})),
    nodes, active, histories, fed,
    values: q('[data-testid=session-value]').map(v => ({key: v.dataset.key, setBy: v.dataset.setBy})),
    at: Date.now(),
    hash: location.hash,
    inspector: (document.getElementById('inspector')?.textContent || '').replace(/\s+/g, ' ').trim().slice(0, 160),
  };
})`

// evalJS evaluates expr in the tab and decodes its value into T, failing t on error.
func evalJS[T any](t *testing.T, tb *tab, expr string) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, waitTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluate %.80q: %v", expr, err)
	}
	return v
}

// chromedpRun runs a with a deadline.
func chromedpRun[T any](tb *tab, a chromedp.Action[T]) (T, error) {
	ctx, cancel := context.WithTimeout(tb.ctx, waitTimeout)
	defer cancel()
	return chromedp.Run(ctx, a)
}

// state returns what the page shows now.
func (tb *tab) state(t *testing.T) pageState {
	t.Helper()
	return evalJS[pageState](t, tb, snapJS+"()")
}

// do runs steps with a deadline, failing t with what was being done.
func (tb *tab) do(t *testing.T, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, waitTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// open navigates to url and waits until its page's script has run (body[data-page]).
func (tb *tab) open(t *testing.T, url string) {
	t.Helper()
	tb.do(t, "navigate to "+url, chromedp.Navigate(url))
	tb.waitFor(t, "the page at "+url+" to load", `document.readyState === 'complete' && !!document.body.dataset.page`)
}

// clickPointJS scrolls the element sel selects into view and returns a point of it that a mouse
// would hit: its centre if nothing covers it, else the first uncovered point of a grid over it.
const clickPointJS = `((sel) => {
  const el = document.querySelector(sel);
  if (!el || !el.checkVisibility()) return {found: false};
  el.scrollIntoView({block: 'nearest', inline: 'nearest'});
  const r = el.getBoundingClientRect();
  const name = (n) => n ? (n.tagName.toLowerCase() + (n.id ? '#' + n.id : '') +
    (n.getAttribute('class') ? '.' + n.getAttribute('class').trim().split(/\\s+/).join('.') : '')) : 'nothing';
  const hits = (x, y) => { const at = document.elementFromPoint(x, y); return [at && (at === el || el.contains(at)), at]; };
  const [ok, at] = hits(r.left + r.width / 2, r.top + r.height / 2);
  if (ok) return {found: true, ok: true, x: r.left + r.width / 2, y: r.top + r.height / 2};
  for (const fy of [0.5, 0.25, 0.75]) for (const fx of [0.1, 0.25, 0.4, 0.6, 0.75, 0.9]) {
    const x = r.left + r.width * fx, y = r.top + r.height * fy;
    if (hits(x, y)[0]) return {found: true, ok: true, x, y, covered: name(at)};
  }
  return {found: true, ok: false, covered: name(at)};
})`

// click clicks the first element the CSS selector sel selects with the mouse, as a user would:
// once the page has loaded (a page the app navigated to shows its server-rendered controls before
// its scripts have run, and a click then would go to the browser, not to the page's handlers), it
// waits until the element is visible, scrolls it into view and clicks a point of it that no other
// element covers, failing t when there is none. A covered centre is logged: a user aiming at the
// middle would hit the other element.
func (tb *tab) click(t *testing.T, sel string) {
	t.Helper()
	tb.waitFor(t, "the page to finish loading", `document.readyState === 'complete'`)
	tb.waitVisible(t, sel)
	pt := evalJS[struct {
		Found, OK bool
		X, Y      float64
		Covered   string
	}](t, tb, clickPointJS+"("+jsString(sel)+")")
	switch {
	case !pt.Found:
		t.Fatalf("click %s: it went away", sel)
	case !pt.OK:
		t.Fatalf("click %s: %s covers all of it", sel, pt.Covered)
	case pt.Covered != "":
		t.Logf("click %s: its centre is covered by %s; clicked at (%.0f, %.0f)", sel, pt.Covered, pt.X, pt.Y)
	}
	tb.do(t, "click "+sel, chromedp.MouseClickXY(pt.X, pt.Y))
}

// waitVisible waits until the element sel selects is rendered (checkVisibility).
func (tb *tab) waitVisible(t *testing.T, sel string) {
	t.Helper()
	tb.waitFor(t, sel+" to be visible", `document.querySelector(`+jsString(sel)+`)?.checkVisibility()`)
}

// waitFor polls the JavaScript expression cond until it is truthy, failing t with what it
// waited for and the page's state after waitTimeout. Errors while the page navigates count as
// "not yet".
func (tb *tab) waitFor(t *testing.T, what, cond string) {
	t.Helper()
	tb.waitForWithin(t, what, cond, waitTimeout)
}

func (tb *tab) waitForWithin(t *testing.T, what, cond string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var lastErr error
	for {
		ctx, cancel := context.WithTimeout(tb.ctx, 5*time.Second)
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool]("!!("+cond+")"))
		cancel()
		if err == nil && ok {
			return
		}
		if err != nil {
			lastErr = err
		}
		if time.Now().After(deadline) || tb.ctx.Err() != nil {
			t.Fatalf("timed out after %s waiting for %s (%s); last error: %v\npage: %s",
				timeout, what, cond, lastErr, tb.describe())
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// describe sums up the page for a failure message, without failing.
func (tb *tab) describe() string {
	ctx, cancel := context.WithTimeout(tb.ctx, 5*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[pageState](snapJS+"()"))
	if err != nil {
		return "(cannot read the page: " + err.Error() + ")"
	}
	last := int64(0)
	if len(s.Seqs) > 0 {
		last = s.Seqs[len(s.Seqs)-1]
	}
	return fmt.Sprintf("url=%s%s page=%s status=%s live=%s rows=%d (last #%d) edges=%v nodes=%v histories=%v values=%v inspector=%q",
		s.URL, s.Hash, s.Page, s.Status, s.Live, len(s.Seqs), last, s.Edges, s.Nodes, s.Histories, s.Values, s.Inspector)
}

// runPageLoaded is true once the browser, sent to a run's page (by Run, a fork...), shows that
// page parsed whole with its scripts run. Before, the server's HTML may be there only in part:
// the parser stops at the end of each piece the network hands it, and a look then may find a
// section without what follows it in the HTML (the held run's outcome without its form).
const runPageLoaded = `location.pathname.startsWith('/runs/') && document.readyState === 'complete' && document.body.dataset.page === 'run'`

// waitStatus waits until the run page's header says status.
func (tb *tab) waitStatus(t *testing.T, status string) {
	t.Helper()
	tb.waitFor(t, "run status "+status, `document.querySelector('[data-testid=run-status]')?.dataset.status === `+jsString(status))
}

// recorderJS installs window.__e2e: every distinct state the page goes through (a MutationObserver
// takes a pageState after each DOM change) and, per timeline row seq, when it was inserted
// (Date.now()) and when the next frame after that ran. Rows already there are listed in initial.
const recorderJS = `(() => {
  const snap = ` + snapJS + `;
  const rec = {states: [], dom: {}, frame: {}, initial: []};
  window.__e2e = rec;
  let last = '';
  const record = () => {
    const s = snap();
    delete s.seqs;
    const key = JSON.stringify([s.status, s.edges, s.nodes, s.histories, s.fed, s.values]);
    if (key !== last) { last = key; rec.states.push(s); }
  };
  for (const r of document.querySelectorAll('[data-testid=timeline-row]')) rec.initial.push(Number(r.dataset.seq));
  record();
  new MutationObserver((muts) => {
    const now = Date.now();
    const added = [];
    for (const m of muts) for (const n of m.addedNodes) {
      if (n.nodeType === 1 && n.dataset.testid === 'timeline-row' && !(n.dataset.seq in rec.dom)) {
        rec.dom[n.dataset.seq] = now;
        added.push(n.dataset.seq);
      }
    }
    if (added.length) requestAnimationFrame(() => { const f = Date.now(); for (const s of added) rec.frame[s] = f; });
    record();
  }).observe(document.body, {childList: true, subtree: true, attributes: true});
  return true;
})()`

// recording is what recorderJS collected.
type recording struct {
	States  []pageState        `json:"states"`
	DOM     map[string]float64 `json:"dom"`
	Frame   map[string]float64 `json:"frame"`
	Initial []int64            `json:"initial"`
}

func (tb *tab) startRecording(t *testing.T) {
	t.Helper()
	evalJS[bool](t, tb, recorderJS)
}

func (tb *tab) recording(t *testing.T) recording {
	t.Helper()
	return evalJS[recording](t, tb, `window.__e2e`)
}

// jsString quotes s as a JavaScript string literal (and a CSS string, for the plain text of
// the tests' selectors). It leaves < > & alone: CSS would read json.Marshal's \u003c as "u003c".
func jsString(s string) string {
	var sb strings.Builder
	enc := json.NewEncoder(&sb)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(sb.String(), "\n")
}

// contiguous reports whether seqs is exactly 1..n in order.
func contiguous(seqs []int64, n int) bool {
	if len(seqs) != n {
		return false
	}
	for i, s := range seqs {
		if s != int64(i+1) {
			return false
		}
	}
	return true
}

// edgeStrings renders edges for comparison and messages.
func edgeStrings(es []edge) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.String()
	}
	return out
}

// isSubset reports whether every element of a is in b.
func isSubset[T comparable](a, b []T) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

// attrSel is a CSS attribute selector [name="value"] with value quoted.
func attrSel(name, value string) string {
	return "[" + name + "=" + jsString(value) + "]"
}

// span returns 1..n.
func span(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i + 1
	}
	return out
}

// keys returns m's keys, sorted.
func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func itoa(n int) string { return fmt.Sprint(n) }

// runID returns the run id of a run page's URL.
func runID(t *testing.T, url string) string {
	t.Helper()
	_, rest, ok := strings.Cut(url, "/runs/")
	if !ok {
		t.Fatalf("%s is not a run page", url)
	}
	id, _, _ := strings.Cut(rest, "#")
	id, _, _ = strings.Cut(id, "?")
	return id
}
