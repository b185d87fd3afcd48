package server

import (
	"bytes"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/baton-dev/baton/templates"
)

// reportRoute serves a run's self-contained HTML report as a download.
const reportRoute = "/runs/:id/report.html"

// report serves GET /runs/:id/report.html: the run as it stands, as one HTML file that opens
// offline (templates.Report), named baton-{flow}-{id}.html.
func (s *Server) report(c echo.Context) error {
	rec, err := s.broker.Get(c.Param("id"))
	if err != nil {
		return err
	}
	tr := rec.Snapshot()
	var buf bytes.Buffer
	if err := templates.Report(c.Request().Context(), &buf, tr, s.cfg.Prices); err != nil {
		return fmt.Errorf("render the report of run %s: %w", tr.Run.ID, err)
	}
	c.Response().Header().Set(echo.HeaderContentDisposition,
		fmt.Sprintf("attachment; filename=%q", "baton-"+fileSafe(tr.Run.Flow)+"-"+fileSafe(tr.Run.ID)+".html"))
	return c.HTMLBlob(http.StatusOK, buf.Bytes())
}
