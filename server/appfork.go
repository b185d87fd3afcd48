package server

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/traces"
)

// appForked is the answer to POST /api/runs/:id/fork for an app's run: Baton cannot run the
// app, so it gives what makes the app's next run the fork (its agents carrying
// attach.Middleware): the environment variable, and a command line to start from.
type appForked struct {
	// Env is the assignment to put in the app's environment: BATON_FORK=VALUE.
	Env string `json:"env"`
	// Value is BATON_FORK's value alone.
	Value string `json:"value"`
	// Command is a shell line that runs a Go app in the current folder so.
	Command string `json:"command"`
}

// forkApp answers a fork of tr, the run of an app, with the environment that makes the app's
// next run the fork f: 200 appForked. A seq that is no model call of tr, or a transfer to no
// agent of it, is a 400.
func forkApp(c echo.Context, tr traces.Trace, f agents.AppFork) error {
	f.Run = tr.Run.ID
	if err := f.CheckAgainst(tr); err != nil {
		return err
	}
	v := f.String()
	return c.JSON(http.StatusOK, appForked{Env: agents.ForkEnv + "=" + v, Value: v, Command: f.Command()})
}
