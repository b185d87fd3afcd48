package server

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/baton-dev/baton/traces"
)

// importedTrace is the answer to POST /api/traces. Note says what changed on the way in, such as
// a new id because the trace's own was taken.
type importedTrace struct {
	ID   string `json:"id"`
	URL  string `json:"url"`
	Note string `json:"note,omitempty"`
}

// importTrace serves POST /api/traces, whose body is a trace file: read and checked by
// traces.Unmarshal (400 with its message, nothing stored, when it refuses the file), then shown
// as a finished run (one saved while it went on ends interrupted: traces.EndImported); 201 {"id",
// "url", "note"}.
func (s *Server) importTrace(c echo.Context) error {
	data, err := readJSONBody(c)
	if err != nil {
		return err
	}
	tr, err := traces.Unmarshal(data)
	if err != nil {
		return err
	}
	ended, _ := traces.EndImported(tr) // as Import ends it: its events are the ones the broker lints
	rec, err := s.feeds.digests.lintOf(ended, func() (*traces.Recording, error) { return s.broker.Import(ended) })
	if err != nil {
		return fmt.Errorf("import run %s: %w", tr.Run.ID, err)
	}
	out := importedTrace{ID: rec.ID(), URL: "/runs/" + rec.ID()}
	var notes []string
	if out.ID != tr.Run.ID {
		notes = append(notes, fmt.Sprintf("run id %s is taken here, so this trace is served as %s", tr.Run.ID, out.ID))
	}
	if tr.Run.Status == traces.StatusRunning { // its events say so too: ended by Import
		notes = append(notes, traces.ImportedEnd)
	}
	out.Note = strings.Join(notes, "; ")
	c.Response().Header().Set(echo.HeaderLocation, out.URL)
	if err := c.JSON(http.StatusCreated, out); err != nil {
		return err
	}
	// A large run's page, made now for the view that follows; the client has its answer first.
	_ = http.NewResponseController(c.Response().Writer).Flush()
	s.feeds.warmRun(rec, ended)
	return nil
}
