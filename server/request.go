package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/baton-dev/baton/traces"
)

// jsonField is one field a request body may hold: its JSON name, where to decode it, and what it
// must be, for the message when it is not ("a string", "an integer").
type jsonField struct {
	name string
	dst  any
	want string
}

// decodeJSON reads the request body as one JSON object whose fields are among fields, decoding
// each into its dst. It returns the names present and non-null. Problems come back as errors a
// user can act on: those of readJSONBody, and CodeInvalid naming the field or position at fault.
func decodeJSON(c echo.Context, fields ...jsonField) (map[string]bool, error) {
	data, err := readJSONBody(c)
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, traces.Errorf(traces.CodeInvalid, "request body is empty: want a JSON object with %s", fieldNames(fields))
	}
	raw, err := decodeObject(data)
	if err != nil {
		return nil, err
	}
	present := make(map[string]bool, len(raw))
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		i := slices.IndexFunc(fields, func(f jsonField) bool { return f.name == k })
		if i < 0 {
			return nil, traces.Errorf(traces.CodeInvalid, "unknown field %q: known fields are %s", k, fieldNames(fields))
		}
		if string(raw[k]) == "null" {
			continue
		}
		if err := json.Unmarshal(raw[k], fields[i].dst); err != nil {
			return nil, traces.Errorf(traces.CodeInvalid, "field %q must be %s, not %s", k, fields[i].want, clip(string(raw[k]), 40))
		}
		present[k] = true
	}
	return present, nil
}

// readJSONBody reads the body of a request that must be JSON: 415 for another content type, 413
// past the body limit, 408 (and the connection closed) for a body that did not arrive within
// Config.BodyTimeout.
func readJSONBody(c echo.Context) ([]byte, error) {
	r := c.Request()
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return nil, echo.NewHTTPError(http.StatusUnsupportedMediaType,
			fmt.Sprintf("Content-Type must be application/json, not %q", r.Header.Get("Content-Type")))
	}
	data, err := readAll(r.Body, r.ContentLength)
	if err != nil {
		var tooBig *http.MaxBytesError
		switch {
		case errors.As(err, &tooBig):
			return nil, tooLarge(c, tooBig.Limit)
		case errors.Is(err, os.ErrDeadlineExceeded):
			return nil, refuse(c, echo.NewHTTPError(http.StatusRequestTimeout,
				"the request body did not arrive in time: send it whole, right after the headers"))
		}
		return nil, fmt.Errorf("read request body: %w", err)
	}
	return data, nil
}

// readAll is io.ReadAll into a buffer of the size the request declared (bodyLimit has refused
// one larger than the route takes): growing one from 512 bytes copies a 250 MB trace file about
// twice over. It makes room for the first trustedRead bytes, then, once they came, for all of the
// declared size: a client that declares a large body and sends little holds little.
func readAll(r io.Reader, size int64) ([]byte, error) {
	size = max(size, 0)
	data := make([]byte, 0, min(size, trustedRead)+512)
	for {
		n, err := r.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			return data, nil
		}
		if err != nil {
			return data, err
		}
		if len(data) == cap(data) {
			if int64(len(data)) < size {
				data = slices.Grow(data, int(size)+512-len(data))
			} else {
				data = append(data, 0)[:len(data)]
			}
		}
	}
}

// trustedRead is how much of a declared body readAll makes room for before any of it came.
const trustedRead = 4 << 20

// decodeObject parses data as exactly one JSON object.
func decodeObject(data []byte) (map[string]json.RawMessage, error) {
	var raw map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(data))
	err := dec.Decode(&raw)
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		// Offset counts the bytes read, the offending one included.
		line, col := position(data, syntax.Offset-1)
		return nil, traces.Errorf(traces.CodeInvalid, "malformed JSON at line %d, column %d: %s", line, col, syntax.Error())
	case errors.As(err, &typ):
		return nil, traces.Errorf(traces.CodeInvalid, "request body must be a JSON object, not a JSON %s", typ.Value)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return nil, traces.Errorf(traces.CodeInvalid, "malformed JSON: the body ends in the middle of the object")
	case err != nil:
		return nil, traces.Errorf(traces.CodeInvalid, "malformed JSON: %s", err.Error())
	case raw == nil:
		return nil, traces.Errorf(traces.CodeInvalid, "request body must be a JSON object, not null")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, traces.Errorf(traces.CodeInvalid, "malformed JSON: data after the closing brace at byte %d", dec.InputOffset())
	}
	return raw, nil
}

// position turns a byte offset into a 1-based line and column.
func position(data []byte, offset int64) (line, col int) {
	line, col = 1, 1
	for _, b := range data[:min(int(offset), len(data))] {
		if b == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return line, col
}

func fieldNames(fields []jsonField) string {
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = fmt.Sprintf("%q", f.name)
	}
	return strings.Join(names, ", ")
}

// clip shortens s to n bytes for quoting in a message.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// queryInt reads the integer query parameter name, which must be at least least; def when the
// parameter is absent. A bad value is a CodeInvalid error naming it.
func queryInt(c echo.Context, name string, least, def int64) (int64, error) {
	v := c.QueryParam(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < least {
		return 0, traces.Errorf(traces.CodeInvalid, "%s must be an integer of at least %d, not %q", name, least, clip(v, 40))
	}
	return n, nil
}
