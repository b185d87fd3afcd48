package e2e_test

import (
	"fmt"
	"testing"
)

// TestTransferWhy: clicking a model-chosen transfer in the tree shows why it happened; its
// "deciding call" link reaches the supervisor's model call whose reply called the transfer,
// and that call's inspector links back to the transfer.
func TestTransferWhy(t *testing.T) {
	t.Parallel()
	b := startBaton(t)
	id := b.startRun(t, "supervisor", 0)
	tr := b.waitRunEnded(t, id, waitTimeout)
	tb := newTab(t, nil)
	tb.open(t, b.base+"/runs/"+id)

	tb.click(t, `#graph .transfer.mode-llm`)
	tb.waitFor(t, "the inspector on a transfer with its why",
		`document.querySelector('[data-testid=inspection]')?.dataset.kind === 'transfer' && document.querySelector('[data-testid=transfer-why] .seq-link') !== null`)
	transfer := evalJS[string](t, tb, `document.querySelector('[data-testid=inspection]').dataset.seq`)
	decision := evalJS[string](t, tb, `document.querySelector('[data-testid=transfer-why]').dataset.decision`)
	if evalJS[bool](t, tb, `!Array.from(document.querySelectorAll('#inspector [data-testid=fed-message]')).some(m => m.innerText.includes('For context:'))`) {
		t.Errorf("transfer #%s's inspector does not list what its target received", transfer)
	}

	tb.click(t, `[data-testid=transfer-why] .seq-link`)
	tb.waitInspected(t, decision)
	if k := evalJS[string](t, tb, `document.querySelector('[data-testid=inspection]').dataset.kind`); k != "model.finished" {
		t.Fatalf("the deciding call #%s is a %s, want model.finished", decision, k)
	}
	var callID string
	for _, e := range tr.Events {
		if fmt.Sprint(e.Seq) == transfer {
			callID = e.Transfer.CallID
		}
	}
	if !evalJS[bool](t, tb, `document.querySelector('#inspector').innerText.includes(`+jsString(callID)+`)`) {
		t.Errorf("the deciding call #%s does not show the transfer's call id %s", decision, callID)
	}
	tb.click(t, `#inspector .related .seq-link[data-seq="`+transfer+`"]`)
	tb.waitInspected(t, transfer)
}
