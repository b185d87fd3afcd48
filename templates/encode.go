package templates

import (
	"context"
	"fmt"
	"unicode/utf8"

	"github.com/a-h/templ"

	"github.com/baton-dev/baton/web"
)

// The live socket's fragments, encoded as JSON straight from each render's buffer: the HTML is
// never held as a string of its own, and its <, > and & stay as they are. The socket's messages
// are read with JSON.parse, never put in a page as script, so encoding/json's \u003c (six bytes
// for one, on every tag) would only make them a fifth larger.

// EncodedFragment is a Fragment encoded as JSON, {"target","swap","html"}, as the live socket
// sends it.
type EncodedFragment struct {
	Target string
	JSON   []byte
}

// EncodeParts is Parts with each fragment encoded as JSON.
func EncodeParts(ctx context.Context, u web.Update) ([]EncodedFragment, error) {
	parts := partsOf(u)
	out := make([]EncodedFragment, 0, len(parts))
	for _, p := range parts {
		data, err := encode(ctx, p.target, p.c)
		if err != nil {
			return nil, err
		}
		out = append(out, EncodedFragment{Target: p.target, JSON: data})
	}
	return out, nil
}

// EncodeSequence is Sequence encoded as JSON.
func EncodeSequence(ctx context.Context, s web.Sequence) ([]byte, error) {
	return encode(ctx, SequenceTarget, sequenceData(s))
}

// EncodeRow returns the HTML of r's timeline row as the content of a JSON string, without its
// quotes: rows so encoded join into the html of the RowsTarget fragment.
func EncodeRow(ctx context.Context, r web.Row) ([]byte, error) {
	var data []byte
	err := renderWith(ctx, timelineRow(r), func(html []byte) {
		data = appendJSONString(make([]byte, 0, jsonSize(len(html))), html)
	})
	if err != nil {
		return nil, fmt.Errorf("render timeline row %d: %w", r.Seq, err)
	}
	return data, nil
}

// encode renders c as the JSON of a replace fragment of target, in Fragment's field order.
func encode(ctx context.Context, target string, c templ.Component) ([]byte, error) {
	var data []byte
	err := renderWith(ctx, c, func(html []byte) {
		b := make([]byte, 0, len(target)+jsonSize(len(html))+48)
		b = append(b, `{"target":"`...)
		b = appendJSONString(b, target)
		b = append(b, `","swap":"`+SwapReplace+`","html":"`...)
		b = appendJSONString(b, html)
		data = append(b, `"}`...)
	})
	if err != nil {
		return nil, fmt.Errorf("render fragment %s: %w", target, err)
	}
	return data, nil
}

// jsonSize is about how long n bytes of HTML are as JSON string content: an attribute's quotes
// take two bytes each.
func jsonSize(n int) int { return n + n/8 + 16 }

// appendJSONString appends s to dst as the content of a JSON string, without quotes, as
// encoding/json writes it with HTML escaping off: ", \ and control characters escaped, U+2028
// and U+2029 as \u2028 and \u2029, invalid UTF-8 as \ufffd.
func appendJSONString[Bytes []byte | string](dst []byte, s Bytes) []byte {
	const hex = "0123456789abcdef"
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= ' ' && b != '"' && b != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(string(s[i:min(len(s), i+utf8.UTFMax)]))
		switch {
		case c == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case c == '\u2028' || c == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[c&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	return append(dst, s[start:]...)
}
