package server

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/templates"
	"github.com/baton-dev/baton/traces"
	"github.com/baton-dev/baton/web"
)

// Compare page limits: flows per comparison, and how long their runs may take together.
const (
	maxCompareFlows = 8
	maxCompareInput = 8 << 10
	compareTimeout  = time.Minute
)

// compareDefaults are the mechanisms the page offers checked: the AgentTool supervisor, the
// prebuilt supervisor, a model-chosen transfer and a deterministic pipeline.
var compareDefaults = []string{"supervisor-agenttool", "supervisor", "transfer", "pipeline"}

// comparePage serves GET /compare?flows=a,b&input=...: it runs input under each flow, one after
// the other without pace (each run is a run of its own, listed and linked), and shows
// web.NewComparison's table. Without flows it shows the form only.
func (s *Server) comparePage(c echo.Context) error {
	form := templates.CompareForm{Flows: s.flowInfos(), Input: c.QueryParam("input"), SameInput: true}
	var names []string
	for _, v := range c.QueryParams()["flows"] {
		for _, n := range strings.Split(v, ",") {
			if n = strings.TrimSpace(n); n != "" && !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	if len(names) == 0 {
		form.Selected = compareDefaults
		return render(c, http.StatusOK, templates.ComparePage(form, nil, s.pageOptions("")))
	}
	form.Selected = names
	if len(names) > maxCompareFlows {
		return traces.Errorf(traces.CodeInvalid, "flows names %d flows; compare at most %d at once", len(names), maxCompareFlows)
	}
	if len(form.Input) > maxCompareInput {
		return traces.Errorf(traces.CodeInvalid, "input is %d bytes; keep the task under %d", len(form.Input), maxCompareInput)
	}
	flows := make([]agents.Flow, len(names))
	for i, n := range names {
		f, err := s.lookupFlow(n)
		if err != nil {
			return err
		}
		flows[i] = f
	}
	inputs, same := agents.TaskInputs(flows, strings.TrimSpace(form.Input))
	form.SameInput = same
	ctx, cancel := context.WithTimeout(c.Request().Context(), compareTimeout)
	defer cancel()
	trs := make([]traces.Trace, len(flows))
	for i, f := range flows {
		tr, err := s.runToEnd(ctx, f, inputs[i])
		if err != nil {
			return err
		}
		trs[i] = tr
	}
	cmp := web.NewComparison(trs, web.WithPrices(s.cfg.Prices))
	return render(c, http.StatusOK, templates.ComparePage(form, &cmp, s.pageOptions("")))
}

// runToEnd starts flow on input without pace and returns its trace once it has ended. When ctx
// ends first the run goes on in the background, like any other run.
func (s *Server) runToEnd(ctx context.Context, flow agents.Flow, input string) (traces.Trace, error) {
	model, err := s.pickModel("", flow) // the server's default model
	if err != nil {
		return traces.Trace{}, err
	}
	run, err := s.runs.start(flow, input, conversationTurn{}, model, 0, nil)
	if err != nil {
		return traces.Trace{}, err
	}
	rec, err := s.broker.Get(run.ID)
	if err != nil {
		return traces.Trace{}, err
	}
	select {
	case <-rec.Done():
		return rec.Snapshot(), nil
	case <-ctx.Done():
		return traces.Trace{}, traces.Errorf(traces.CodeUnavailable, "run %s of %s did not end in %s; see its page", run.ID, flow.Name, compareTimeout)
	}
}
