package templates

import (
	"context"
	"fmt"
	"slices"

	"github.com/a-h/templ"

	"github.com/baton-dev/baton/internal/jsonstr"
	"github.com/baton-dev/baton/internal/lint"
	"github.com/baton-dev/baton/internal/story"
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

// EncodeFindings is the FindingsTarget fragment of findings, encoded as JSON.
func EncodeFindings(ctx context.Context, findings []lint.Finding) ([]byte, error) {
	return encode(ctx, FindingsTarget, runFindings(findings))
}

// EncodeStory is the StoryTarget fragment of s, encoded as JSON.
func EncodeStory(ctx context.Context, s story.Story) ([]byte, error) {
	return encode(ctx, StoryTarget, runStory(s, PageStoryTurns))
}

// EncodeSequence is Sequence encoded as JSON.
func EncodeSequence(ctx context.Context, s web.Sequence) ([]byte, error) {
	return encode(ctx, SequenceTarget, sequenceData(s))
}

// SequenceHTML is the #seq-data element of s, whole, as a run page whose SequenceSrc was set
// fetches it.
func SequenceHTML(s web.Sequence) templ.Component { return sequenceData(s) }

// HistoriesHTML is the #session-histories element of hs, as a run page whose HistoriesSrc was set
// fetches it.
func HistoriesHTML(hs []web.History) templ.Component { return sessionHistories(hs) }

// EncodeRow returns the HTML of r's timeline row as the content of a JSON string, without its
// quotes: AppendRows puts rows so encoded, side by side, in the html of the RowsTarget fragment.
func EncodeRow(ctx context.Context, r web.Row) ([]byte, error) {
	var data []byte
	err := renderWith(ctx, timelineRow(r), func(html []byte) {
		data = jsonstr.Append(make([]byte, 0, jsonSize(len(html))), html)
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
		b := appendFragmentHead(make([]byte, 0, len(target)+jsonSize(len(html))+48), target, SwapReplace)
		b = jsonstr.Append(b, html)
		data = append(b, fragmentEnd...)
	})
	if err != nil {
		return nil, fmt.Errorf("render fragment %s: %w", target, err)
	}
	return data, nil
}

// AppendRows appends to pieces the fragment that appends rows to RowsTarget, as pieces to be
// written in order: rows are as EncodeRow returns them, and are not copied.
func AppendRows(pieces [][]byte, rows ...[]byte) [][]byte {
	pieces = append(pieces, rowsHead)
	return append(append(pieces, rows...), rowsEnd)
}

// The pieces around the rows of an AppendRows fragment, the same for every message; clipped, so
// that no append may write into what all of them share.
var (
	rowsHead = slices.Clip(appendFragmentHead(nil, RowsTarget, SwapAppend))
	rowsEnd  = []byte(fragmentEnd)
)

// appendFragmentHead appends the JSON of a Fragment up to its html's content: what follows is the
// HTML as JSON string content (jsonstr.Append), then fragmentEnd. It is the one writer of
// a fragment's JSON: encode and AppendRows both go through it.
func appendFragmentHead(b []byte, target, swap string) []byte {
	b = append(b, `{"target":"`...)
	b = jsonstr.Append(b, target)
	b = append(b, `","swap":"`...)
	b = jsonstr.Append(b, swap)
	return append(b, `","html":"`...)
}

// fragmentEnd closes a fragment's JSON after its html's content.
const fragmentEnd = `"}`

// jsonSize is about how long n bytes of HTML are as JSON string content: an attribute's quotes
// take two bytes each.
func jsonSize(n int) int { return n + n/8 + 16 }
