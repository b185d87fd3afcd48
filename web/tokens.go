package web

import (
	"sync"

	"github.com/pkoukk/tiktoken-go"
	tiktokenloader "github.com/pkoukk/tiktoken-go-loader"

	"github.com/baton-dev/baton/traces"
)

// Estimator names the tokenizer that counts tokens where a model reported none.
const Estimator = "cl100k_base estimate"

// encoding loads cl100k_base once, from the BPE file the loader embeds (no download at run time).
var encoding = sync.OnceValues(func() (*tiktoken.Tiktoken, error) {
	tiktoken.SetBpeLoader(tiktokenloader.NewOfflineLoader())
	return tiktoken.GetEncoding("cl100k_base")
})

// CountTokens returns the number of cl100k_base tokens of s. Special tokens in s count as plain
// text, as a model's input would treat text a user typed.
func CountTokens(s string) int {
	if s == "" {
		return 0
	}
	enc, err := encoding()
	if err != nil {
		// The BPE file is embedded: this only fails if the binary itself is broken.
		panic("web: load cl100k_base: " + err.Error())
	}
	return len(enc.EncodeOrdinary(s))
}

// tokenCache counts tokens, each distinct text once: the prompts of one agent's calls repeat
// most of their messages.
type tokenCache map[string]int

func (c tokenCache) count(s string) int {
	n, ok := c[s]
	if !ok {
		n = CountTokens(s)
		c[s] = n
	}
	return n
}

// message counts a message's text: its content and its tool calls' names and arguments.
func (c tokenCache) message(m traces.Message) int {
	n := c.count(m.Content)
	for _, tc := range m.ToolCalls {
		n += c.count(tc.Name) + c.count(tc.Arguments)
	}
	return n
}
