package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"syscall"
	"time"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/baton-dev/baton/templates"
	"github.com/baton-dev/baton/traces"
)

// statusOf maps each domain error code to the HTTP status its errors get.
var statusOf = map[traces.Code]int{
	traces.CodeInvalid:     http.StatusBadRequest,
	traces.CodeNotFound:    http.StatusNotFound,
	traces.CodeConflict:    http.StatusConflict,
	traces.CodeUnavailable: http.StatusServiceUnavailable,
	traces.CodeInternal:    http.StatusInternalServerError,
}

// retryAfter is the Retry-After of a 503 whose error names no wait of its own (traces.Error's
// Retry): about how long a paced demo run takes to free its slot.
const retryAfter = 5 * time.Second

// handleError is Echo's HTTPErrorHandler: every error a handler or middleware returns ends here.
// The API, the websockets and the inspector and time-travel fragments get {"error": message}, pages
// get an HTML page; a 503 says when to try again; internal errors are logged and shown as "internal
// error".
func (s *Server) handleError(err error, c echo.Context) {
	status, msg := s.describe(err, c.Request())
	if c.Response().Committed {
		return
	}
	if wait := retryOf(err, status); wait > 0 {
		c.Response().Header().Set("Retry-After", strconv.Itoa(int(wait.Round(time.Second)/time.Second)))
	}
	var werr error
	switch {
	case c.Request().Method == http.MethodHead:
		werr = c.NoContent(status)
	case isAPI(c.Request()) || c.Path() == inspectorRoute || c.Path() == liveRoute || c.Path() == travelRoute || c.Path() == rowsRoute:
		// The inspector and the rows are fragments the page fetches, the live route a websocket:
		// their clients are scripts, which read {"error"} like the API's.
		werr = c.JSON(status, map[string]string{"error": msg})
	default:
		werr = s.renderError(c, status, msg)
	}
	if werr != nil {
		s.log.Warn("write error response", "method", c.Request().Method, "path", c.Request().URL.Path, "error", werr)
	}
}

// retryOf returns the Retry-After of err, answered with status: a 503's, unless its error says
// waiting will not help (a read-only or damaged database).
func retryOf(err error, status int) time.Duration {
	if status != http.StatusServiceUnavailable {
		return 0
	}
	var de *traces.Error
	switch {
	case !errors.As(err, &de) || de.Retry == 0:
		return retryAfter
	case de.Retry < 0:
		return 0
	}
	return max(de.Retry, time.Second)
}

// describe returns err's status and user-facing message, logging what is Baton's fault.
func (s *Server) describe(err error, r *http.Request) (int, string) {
	status, msg := http.StatusInternalServerError, "internal error"
	var de *traces.Error
	var he *echo.HTTPError
	switch {
	case errors.As(err, &de):
		status, msg = statusOf[de.Code], traces.ErrorMessage(err)
		if status == 0 {
			status = http.StatusInternalServerError
		}
	case errors.As(err, &he):
		status = he.Code
		switch {
		case he.Code == http.StatusNotFound:
			msg = fmt.Sprintf("not found: %s", r.URL.Path)
		case he.Code < http.StatusInternalServerError:
			msg = fmt.Sprint(he.Message)
		}
	}
	// A client that left mid-request (a page aborting a fetch it no longer wants, its answer then
	// written to a closed connection) is no fault of Baton's, and there is nobody to answer.
	if errors.Is(err, context.Canceled) && r.Context().Err() != nil || errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET) {
		return status, "request canceled"
	}
	// 503 is the one server-side status whose message is for the user: busy, try again.
	if status >= http.StatusInternalServerError && status != http.StatusServiceUnavailable {
		msg = "internal error"
		s.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "error", err)
	}
	return status, msg
}

// renderError writes the HTML error page, falling back to plain text if it does not render.
func (s *Server) renderError(c echo.Context, status int, msg string) error {
	var buf bytes.Buffer
	if err := templates.ErrorPage(status, msg).Render(c.Request().Context(), &buf); err != nil {
		// A client that left cancels the render as well: nobody to answer, nothing of Baton's.
		if c.Request().Context().Err() == nil {
			s.log.Error("render error page", "error", err)
		}
		return c.String(status, msg)
	}
	return c.HTMLBlob(status, buf.Bytes())
}

// render writes comp with status, rendered into a buffer first so a template error becomes a 500
// instead of half a page.
func render(c echo.Context, status int, comp templ.Component) error {
	var buf bytes.Buffer
	if err := comp.Render(c.Request().Context(), &buf); err != nil {
		return fmt.Errorf("render %s: %w", c.Request().URL.Path, err)
	}
	return c.HTMLBlob(status, buf.Bytes())
}
