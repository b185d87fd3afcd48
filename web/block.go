package web

import (
	"bytes"
	"encoding/json"
	"strings"
)

// Block is a longer value: text or pretty-printed JSON. Long blocks are folded: Preview holds
// their head and the page offers "show all". A JSON string is shown decoded, as text, with
// String set.
type Block struct {
	Label   string
	Text    string
	JSON    bool
	String  bool
	Long    bool
	Preview string
}

// Folding thresholds for Block.
const (
	foldRunes   = 1200
	foldLines   = 24
	previewRune = 480
	previewLine = 8
)

// NewBlock returns text as a Block: pretty-printed when it is JSON, folded when it is long.
func NewBlock(label, text string) Block {
	b := Block{Label: label, Text: text}
	b.Text, b.JSON = PrettyJSON(text)
	var str string
	if b.JSON && strings.HasPrefix(b.Text, `"`) && json.Unmarshal([]byte(b.Text), &str) == nil {
		b.Text, b.JSON, b.String = str, false, true
	}
	lines := strings.Count(b.Text, "\n") + 1
	if n := len([]rune(b.Text)); n > foldRunes || lines > foldLines {
		b.Long = true
		head := b.Text
		if parts := strings.SplitN(head, "\n", previewLine+1); len(parts) > previewLine {
			head = strings.Join(parts[:previewLine], "\n")
		}
		b.Preview = shorten(head, previewRune)
	}
	return b
}

// PrettyJSON returns s indented by two spaces when it is JSON, and ok false (with s unchanged)
// when it is not.
func PrettyJSON(s string) (string, bool) {
	t := strings.TrimSpace(s)
	if t == "" || (t[0] != '{' && t[0] != '[' && t[0] != '"') || !json.Valid([]byte(t)) {
		return s, false
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, []byte(t), "", "  "); err != nil {
		return s, false
	}
	return buf.String(), true
}
