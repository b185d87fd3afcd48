package traces

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// The decoder's scanner: JSON's syntax, read in place, with messages that say what is wrong and
// where; and the integers and times Baton writes, read in place.

// skip reads past the next JSON value, checking its syntax.
func (d *decoder) skip() error {
	c, err := d.peek()
	if err != nil {
		return err
	}
	switch {
	case c == '{':
		return d.members(func([]byte, int) error { return d.skip() })
	case c == '[':
		return d.elements(func(int) error { return d.skip() })
	case c == '"':
		_, _, err := d.rawString()
		return err
	case c == 't':
		return d.literal("true")
	case c == 'f':
		return d.literal("false")
	case c == 'n':
		return d.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		_, err := d.number()
		return err
	}
	return d.syntax(fmt.Sprintf("invalid character %s looking for the beginning of a value", quoteChar(c)))
}

// peek skips white space and returns the next byte, which it does not consume.
func (d *decoder) peek() (byte, error) {
	if d.pos < len(d.data) && d.data[d.pos] > ' ' { // most often: compact JSON
		return d.data[d.pos], nil
	}
	return d.peekSpace()
}

func (d *decoder) peekSpace() (byte, error) {
	for d.pos < len(d.data) {
		switch c := d.data[d.pos]; c {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return c, nil
		}
	}
	return 0, d.syntax("")
}

// atEnd skips white space and reports whether nothing follows it. It is peek for a document's
// end, where running out is the good outcome: no error is made for it (a row read back from a
// store is a document of its own, so this runs once an event).
func (d *decoder) atEnd() bool {
	for d.pos < len(d.data) && isSpace(d.data[d.pos]) {
		d.pos++
	}
	return d.pos == len(d.data)
}

func (d *decoder) expect(want byte, problem string) error {
	c, err := d.peek()
	if err != nil {
		return err
	}
	if c != want {
		return d.syntax(problem)
	}
	d.pos++
	return nil
}

func (d *decoder) literal(lit string) error {
	end := d.pos + len(lit)
	if end > len(d.data) {
		if string(d.data[d.pos:]) == lit[:len(d.data)-d.pos] {
			d.pos = len(d.data)
			return d.syntax("")
		}
	} else if string(d.data[d.pos:end]) == lit {
		d.pos = end
		return nil
	}
	return d.syntax(fmt.Sprintf("invalid character %s looking for the beginning of a value", quoteChar(d.data[d.pos])))
}

// number reads a JSON number and returns its text.
func (d *decoder) number() ([]byte, error) {
	start, p := d.pos, d.pos
	digits := func() int {
		n := 0
		for p < len(d.data) && d.data[p] >= '0' && d.data[p] <= '9' {
			p, n = p+1, n+1
		}
		return n
	}
	if p < len(d.data) && d.data[p] == '-' {
		p++
	}
	switch {
	case p < len(d.data) && d.data[p] == '0':
		p++
	case digits() == 0:
		return nil, d.numberError(p)
	}
	if p < len(d.data) && d.data[p] == '.' {
		p++
		if digits() == 0 {
			return nil, d.numberError(p)
		}
	}
	if p < len(d.data) && (d.data[p] == 'e' || d.data[p] == 'E') {
		p++
		if p < len(d.data) && (d.data[p] == '+' || d.data[p] == '-') {
			p++
		}
		if digits() == 0 {
			return nil, d.numberError(p)
		}
	}
	d.pos = p
	return d.data[start:p], nil
}

func (d *decoder) numberError(p int) error {
	d.pos = p
	if p >= len(d.data) {
		return d.syntax("")
	}
	return d.syntax(fmt.Sprintf("invalid character %s in a number", quoteChar(d.data[p])))
}

// key reads a field name. Its bytes may alias the document: compare them, do not keep them.
func (d *decoder) key() ([]byte, error) {
	raw, plain, err := d.rawString()
	if err != nil || plain {
		return raw, err
	}
	return []byte(unquote(d.data[d.pos-len(raw)-2 : d.pos])), nil
}

// str reads a JSON string.
func (d *decoder) str() (string, error) {
	raw, plain, err := d.rawString()
	if err != nil || plain {
		return string(raw), err
	}
	return unquote(d.data[d.pos-len(raw)-2 : d.pos]), nil
}

// rawString reads past a JSON string, checking its escapes, and returns what is between its
// quotes; plain says that is the string itself: no escape and valid UTF-8.
func (d *decoder) rawString() (raw []byte, plain bool, err error) {
	start := d.pos + 1
	plain, ascii := true, true
	for p := start; p < len(d.data); p++ {
		for p+8 <= len(d.data) && !specialIn8(binary.LittleEndian.Uint64(d.data[p:])) {
			p += 8 // eight plain ASCII bytes
		}
		if p >= len(d.data) {
			break
		}
		switch c := d.data[p]; {
		case c == '"':
			d.pos = p + 1
			raw = d.data[start:p]
			return raw, plain && (ascii || utf8.Valid(raw)), nil
		case c == '\\':
			plain = false
			p++
			if p >= len(d.data) {
				break
			}
			switch d.data[p] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				for k := 1; k <= 4; k++ {
					if p+k >= len(d.data) {
						break
					}
					if h := d.data[p+k]; !strings.ContainsRune("0123456789abcdefABCDEF", rune(h)) {
						d.pos = p + k
						return nil, false, d.syntax(fmt.Sprintf("invalid character %s in a \\u escape", quoteChar(h)))
					}
				}
				p += 4
			default:
				d.pos = p
				return nil, false, d.syntax(fmt.Sprintf("invalid escape \\%c in a string", d.data[p]))
			}
		case c < 0x20:
			d.pos = p
			return nil, false, d.syntax(fmt.Sprintf("invalid character %s in a string: control characters must be escaped", quoteChar(c)))
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	d.pos = len(d.data)
	return nil, false, d.syntax("")
}

// specialIn8 reports whether any of the eight bytes w holds ends a string's plain run: a quote,
// a backslash, a control character or a byte of a multi-byte UTF-8 sequence (the classic tests
// for a zero byte and a byte below n, which are exact for "any").
func specialIn8(w uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	quote, backslash := w^(ones*'"'), w^(ones*'\\')
	return ((w-ones*0x20)&^w|(quote-ones)&^quote|(backslash-ones)&^backslash|w)&highs != 0
}

// unquote decodes a checked JSON string, quotes included, exactly as encoding/json does.
func unquote(quoted []byte) string {
	return string(appendUnquoted(make([]byte, 0, len(quoted)), quoted))
}

// appendUnquoted appends the decoded checked JSON string quoted (quotes included) to dst, exactly
// as encoding/json decodes it: the common escapes here, \u escapes and invalid UTF-8 (which
// becomes U+FFFD) through encoding/json.
func appendUnquoted(dst, quoted []byte) []byte {
	raw := quoted[1 : len(quoted)-1]
	out := dst
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		i++
		switch raw[i] {
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			return append(dst, unquoteJSON(quoted)...)
		default: // " \ /
			out = append(out, raw[i])
		}
	}
	if !utf8.Valid(out[len(dst):]) {
		return append(out[:len(dst)], unquoteJSON(quoted)...)
	}
	return out
}

func unquoteJSON(quoted []byte) string {
	var s string
	if err := json.Unmarshal(quoted, &s); err != nil {
		panic("traces: unquote of a checked string: " + err.Error())
	}
	return s
}

// syntax reports that the document is not JSON at d.pos; an empty problem means it ended early.
func (d *decoder) syntax(problem string) error {
	switch {
	case len(bytes.TrimSpace(d.data)) == 0:
		return Errorf(CodeInvalid, "%s cannot be read: it is empty", d.what)
	case problem == "":
		return Errorf(CodeInvalid, "%s cannot be read: it is not valid JSON: it ends in the middle of a value (truncated?)", d.what)
	}
	return Errorf(CodeInvalid, "%s cannot be read: it is not valid JSON: %s (%s)", d.what, problem, position(d.data, int64(d.pos)))
}

func quoteChar(c byte) string {
	if c == '\'' {
		return `'\''`
	}
	if c == '"' {
		return `'"'`
	}
	return strconv.QuoteRune(rune(c))
}

func (d *decoder) enter() error {
	if d.depth++; d.depth > maxDepth {
		return d.syntax("it nests too deeply")
	}
	return nil
}

// smallInt is ParseInt for the number text of a JSON integer of at most 18 digits, which cannot
// overflow; false for any other text.
func smallInt(num []byte) (int64, bool) {
	digits := num
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if len(digits) < len(num) {
		n = -n
	}
	return n, true
}

// parseUTC reads the RFC 3339 times Baton writes, "2006-01-02T15:04:05.999999999Z" (up to nine
// digits of fraction, or none), a third of the time UnmarshalText takes, into the time it reads
// from them; false for any other text, which UnmarshalText reads (or refuses).
func parseUTC(b []byte) (time.Time, bool) {
	n := len(b)
	if n < len("2006-01-02T15:04:05Z") || n > len("2006-01-02T15:04:05.999999999Z") || b[n-1] != 'Z' ||
		b[4] != '-' || b[7] != '-' || b[10] != 'T' || b[13] != ':' || b[16] != ':' {
		return time.Time{}, false
	}
	num := func(b []byte) int {
		x := 0
		for _, c := range b {
			if c < '0' || c > '9' {
				return -1
			}
			x = x*10 + int(c-'0')
		}
		return x
	}
	year, month, day := num(b[0:4]), num(b[5:7]), num(b[8:10])
	hour, minute, sec := num(b[11:13]), num(b[14:16]), num(b[17:19])
	if year < 0 || month < 1 || month > 12 || day < 1 || day > daysIn(month, year) ||
		hour < 0 || hour > 23 || minute < 0 || minute > 59 || sec < 0 || sec > 59 {
		return time.Time{}, false
	}
	nsec := 0
	if frac := b[19 : n-1]; len(frac) > 0 {
		if len(frac) < 2 || frac[0] != '.' {
			return time.Time{}, false
		}
		if nsec = num(frac[1:]); nsec < 0 {
			return time.Time{}, false
		}
		for range 10 - len(frac) {
			nsec *= 10
		}
	}
	return time.Date(year, time.Month(month), day, hour, minute, sec, nsec, time.UTC), true
}

// daysIn is the number of days of the month in the year.
func daysIn(month, year int) int {
	if month == 2 {
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	}
	return 30 + (month+month/8)%2
}
