package traces_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/baton-dev/baton/internal/webtest"
	"github.com/baton-dev/baton/traces"
)

// escapeStrings returns data with the first character of every JSON string, keys and values,
// written as a \u escape: the text the decoder cannot match, compare or parse in place, which it
// decodes before looking it up (a key, a string it shares, a time). Session values, kept as
// written, are left as they are.
func escapeStrings(t *testing.T, data []byte) []byte {
	var out bytes.Buffer
	for i := 0; i < len(data); i++ {
		c := data[i]
		if c != '"' {
			out.WriteByte(c)
			continue
		}
		end := i + 1 // past the string's closing quote
		for data[end] != '"' {
			if data[end] == '\\' {
				end++
			}
			end++
		}
		end++
		str := data[i:end]
		if str[1] >= ' ' && str[1] < 0x7f && str[1] != '\\' && str[1] != '"' {
			fmt.Fprintf(&out, `"\u%04x%s`, str[1], str[2:])
		} else {
			out.Write(str)
		}
		i = end - 1
		if string(str) == `"value"` { // copy the value as it is
			colon := bytes.IndexByte(data[end:], ':') + end + 1
			dec := json.NewDecoder(bytes.NewReader(data[colon:]))
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				t.Fatal(err)
			}
			out.Write(data[end : colon+int(dec.InputOffset())])
			i = colon + int(dec.InputOffset()) - 1
		}
	}
	return out.Bytes()
}

// TestDecoderShortcutsReadAsTheGeneralPath: what the decoder reads in place (keys matched by
// their text, a string or run path taken because it repeats the last one, the times Baton
// writes) is what it reads when every string is written with an escape, which takes the general
// path: the same trace for files of both versions, in parts and on one goroutine, and the same
// error for an unknown field, a repeated one and an input reference in a version-1 file.
func TestDecoderShortcutsReadAsTheGeneralPath(t *testing.T) {
	files := map[string][]byte{
		"rich":      mustMarshal(t, richTrace()),
		"growing":   mustMarshal(t, growingTrace(40)),
		"large":     mustMarshal(t, webtest.Large(300)),
		"version 1": mustReadFile(t, supervisorFile),
		"version 2": mustReadFile(t, "testdata/v2/supervisor.trace.json"),
		"all kinds": mustReadFile(t, allKindsGolden),
	}
	for name, data := range files {
		escaped := escapeStrings(t, data)
		if bytes.Equal(escaped, data) {
			t.Fatalf("%s: no string escaped", name)
		}
		parts, one, perr, oerr := readBothWays(data)
		eparts, eone, eperr, eoerr := readBothWays(escaped)
		for _, err := range []error{perr, oerr, eperr, eoerr} {
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
		assertEqualTraces(t, eone, one)
		assertEqualTraces(t, eparts, parts)
		assertEqualTraces(t, parts, one)

		// The same error either way: edits of the last event, whose key "seq" is unique.
		last := bytes.LastIndex(data, []byte(`{"seq":`))
		if last < 0 {
			last = bytes.LastIndex(data, []byte(`"seq": `)) - 1 // an indented file
		}
		for problem, field := range map[string]string{
			"unknown field":   `"model_name":"x",`,
			"repeated field":  `"kind":"message",`,
			"input reference": `"input_from":1,`,
		} {
			bad := append(append(append([]byte(nil), data[:last+1]...), field...), data[last+1:]...)
			_, want := traces.Unmarshal(bad)
			_, got := traces.Unmarshal(escapeStrings(t, bad))
			if want == nil || got == nil {
				t.Fatalf("%s, %s: read without an error (%v, %v)", name, problem, want, got)
			}
			if problem == "unknown field" && got.Error() != want.Error() { // the others say where: the text moved
				t.Errorf("%s, %s: escaped %q, plain %q", name, problem, got, want)
			}
		}
	}
}

func mustReadFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
