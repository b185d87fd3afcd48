package templates

import (
	"context"
	"fmt"

	"github.com/a-h/templ"

	"github.com/baton-dev/baton/traces"
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
		data = traces.AppendJSONString(make([]byte, 0, jsonSize(len(html))), html)
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
		b = traces.AppendJSONString(b, target)
		b = append(b, `","swap":"`+SwapReplace+`","html":"`...)
		b = traces.AppendJSONString(b, html)
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
