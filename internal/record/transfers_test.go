package record

import (
	"errors"
	"strings"
	"testing"

	"github.com/baton-dev/baton/traces"
)

func heldTo(from *visit, to string) *heldTransfer {
	return &heldTransfer{t: traces.Transfer{From: from.agent, To: to}, from: from}
}

// TestTransfersAreClaimedInTurn: a start of the target claims the transfers to it in the order
// they were held, and one that finds none is woken when another is held.
func TestTransfersAreClaimedInTurn(t *testing.T) {
	ts := newTransfers()
	a, b := &visit{agent: "a"}, &visit{agent: "b"}
	first, second := heldTo(a, "c"), heldTo(b, "c")
	ts.hold(first)
	ts.hold(second)
	h, _ := ts.claim("d")
	if h != nil {
		t.Fatalf("claim(d) = %+v, want none: nothing was held for d", h.t)
	}
	_, wake := ts.claim("d")
	ts.hold(heldTo(a, "d"))
	select {
	case <-wake:
	default:
		t.Error("holding a transfer to d did not wake the start waiting for one")
	}
	for _, want := range []*heldTransfer{first, second} {
		if h, _ := ts.claim("c"); h != want {
			t.Errorf("claim(c) = %v, want the transfer from %s", h, want.from.agent)
		}
	}
	if h, _ := ts.claim("c"); h != nil {
		t.Error("a transfer was claimed twice")
	}
}

// TestUnclaimedTransfersAreTakenBySource: the transfers of a source no start claimed come in the
// order of their targets; heldFrom only looks, unclaimed takes them.
func TestUnclaimedTransfersAreTakenBySource(t *testing.T) {
	ts := newTransfers()
	a, b := &visit{agent: "a"}, &visit{agent: "b"}
	ts.hold(heldTo(a, "z"))
	ts.hold(heldTo(b, "y"))
	ts.hold(heldTo(a, "x"))
	targets := func(hs []*heldTransfer) string {
		var to []string
		for _, h := range hs {
			to = append(to, h.t.To)
		}
		return strings.Join(to, ",")
	}
	if got := targets(ts.heldFrom(a)); got != "x,z" {
		t.Errorf("heldFrom(a) = %s, want x,z", got)
	}
	if !ts.hasUnclaimed(a) {
		t.Error("hasUnclaimed(a) = false after heldFrom: looking took them")
	}
	if got := targets(ts.unclaimed(a)); got != "x,z" {
		t.Errorf("unclaimed(a) = %s, want x,z", got)
	}
	if ts.hasUnclaimed(a) || !ts.hasUnclaimed(b) {
		t.Errorf("after unclaimed(a): a holds some %v, b holds some %v; want false, true", ts.hasUnclaimed(a), ts.hasUnclaimed(b))
	}
}

// TestRefusalsAreExplainedByEinosError: a refusal is told in eino's words when eino's error for
// the source's scope came (kept once, and waking whoever waits for it), else in the recorder's.
func TestRefusalsAreExplainedByEinosError(t *testing.T) {
	ts := newTransfers()
	top, inCall := &visit{agent: "a"}, &visit{agent: "b", boundary: "call-1"}
	h := heldTo(top, "ghost")
	msg, by, i := ts.refusal(top, h)
	if by != traces.ErrorByRecorder || i != -1 || !strings.Contains(msg, `"ghost"`) {
		t.Errorf("refusal without eino's error = %q by %s (%d), want the recorder's words naming the target", msg, by, i)
	}
	waiting := ts.errsChanged
	refused := errors.New("transfer failed: agent 'ghost' not found")
	ts.keepEinoError(refused, "call-1")
	ts.keepEinoError(refused, "call-1")               // the stream and a workflow's copy carry the same error
	ts.keepEinoError(errors.New(refused.Error()), "") // the same text is another error
	select {
	case <-waiting:
	default:
		t.Error("keeping eino's error did not wake the refusals waiting for it")
	}
	if len(ts.einoErrs) != 2 {
		t.Errorf("kept %d errors, want 2: one error value is kept once per scope", len(ts.einoErrs))
	}
	if msg, by, i := ts.refusal(inCall, heldTo(inCall, "ghost")); by != traces.ErrorByEino || i != 0 || msg != refused.Error() {
		t.Errorf("refusal inside call-1 = %q by %s (%d), want eino's error, kept first", msg, by, i)
	}
	if _, _, i := ts.refusal(top, h); i != 1 {
		t.Errorf("refusal outside any call is explained by error %d, want 1 (the run's own)", i)
	}
}
