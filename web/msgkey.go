package web

import (
	"hash/maphash"

	"github.com/baton-dev/baton/traces"
)

// msgKey is what a sourceIndex files a message under: the 128-bit hash of its key's text (its
// kind, then what identifies it, as keyText writes them), not the text itself, so that the index
// of a run of a million events neither copies its messages' text nor builds a string for each of
// them. Two different texts share a key with a chance of about 2^-128 a pair.
type msgKey [2]uint64

// keySeeds are the two hashes' seeds, one per process: keys are never kept beyond it.
var keySeeds = [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}

// keyText takes a key's text piece by piece; a key is the same whatever the pieces.
type keyText struct{ h [2]maphash.Hash }

// newKey starts the text of a key of kind ("own", "result", "context", "request").
func newKey(kind string) keyText {
	var k keyText
	k.h[0].SetSeed(keySeeds[0])
	k.h[1].SetSeed(keySeeds[1])
	k.add(kind, "\x00")
	return k
}

// add writes the pieces of text.
func (k *keyText) add(pieces ...string) {
	for _, s := range pieces {
		k.h[0].WriteString(s)
		k.h[1].WriteString(s)
	}
}

func (k *keyText) WriteString(s string) (int, error) {
	k.add(s)
	return len(s), nil
}

func (k *keyText) sum() msgKey { return msgKey{k.h[0].Sum64(), k.h[1].Sum64()} }

// ownKey identifies an assistant message as its agent sent it.
func ownKey(agent string, m traces.Message) msgKey {
	k := newKey("own")
	k.add(agent, "\x00", m.Content)
	for _, c := range m.ToolCalls {
		k.add("\x00", c.ID, "\x00", c.Name, "\x00", c.Arguments)
	}
	return k.sum()
}

// resultKey identifies a tool's result by the call it answers.
func resultKey(tool, callID string) msgKey {
	k := newKey("result")
	k.add(tool, "\x00", callID)
	return k.sum()
}

// contextKey identifies a message that eino rewrote "For context:" by the text it became.
func contextKey(text string) msgKey {
	k := newKey("context")
	k.add(text)
	return k.sum()
}

// rewrittenKey is contextKey of m rewritten as agent said it, without making that text.
func rewrittenKey(agent string, m traces.Message) msgKey {
	k := newKey("context")
	writeRewritten(&k, agent, m)
	return k.sum()
}

// requestKey identifies what an AgentTool call asked its callee.
func requestKey(callee, request string) msgKey {
	k := newKey("request")
	k.add(callee, "\x00", request)
	return k.sum()
}
