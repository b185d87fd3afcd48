package web

import (
	"bytes"
	"encoding/json"
	"strings"
)

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
