package server

import (
	"net/http"
	"slices"

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
	if !slices.ContainsFunc(tr.Events, func(e traces.Event) bool { return e.Seq == f.At && e.Kind == traces.KindModelStarted }) {
		return traces.Errorf(traces.CodeInvalid, "event #%d of run %s is no model call (model.started): a fork changes what a model answered", f.At, tr.Run.ID)
	}
	if f.TransferTo != "" && !slices.ContainsFunc(tr.Agents, func(a traces.Agent) bool { return a.Name == f.TransferTo }) {
		return traces.Errorf(traces.CodeInvalid, "transfer_to %q is no agent of run %s", clip(f.TransferTo, 60), tr.Run.ID)
	}
	if err := f.Check(); err != nil {
		return err
	}
	v := f.String() // URL-escaped: no single quote in it
	return c.JSON(http.StatusOK, appForked{Env: agents.ForkEnv + "=" + v, Value: v,
		Command: agents.ForkEnv + "='" + v + "' go run ."})
}
