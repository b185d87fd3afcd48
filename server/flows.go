package server

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/traces"
	"github.com/baton-dev/baton/web"
)

func (s *Server) flowRoutes(e *echo.Echo) {
	e.GET("/api/flows", s.listFlows)
}

// flowJSON is a flow as GET /api/flows lists it.
type flowJSON struct {
	Name  string `json:"name"`
	Title string `json:"title"`
	// Group is what the flow shows ("Handoff by transfer"), the index's heading for it.
	Group string `json:"group,omitempty"`
	// Description says it as the index does: in plain words first, then in eino's API names.
	Description  string         `json:"description"`
	DefaultInput string         `json:"default_input"`
	InputNote    string         `json:"input_note,omitempty"`
	Agents       []traces.Agent `json:"agents"`
}

// listFlows serves GET /api/flows: the flows one can start, sorted as configured, as the index
// shows them (flowInfos).
func (s *Server) listFlows(c echo.Context) error {
	infos := s.flowInfos()
	out := make([]flowJSON, len(infos))
	for i, f := range infos {
		out[i] = flowJSON{Name: f.Name, Title: f.Title, Group: f.Group, Description: strings.TrimSpace(f.Plain + " " + f.Description),
			DefaultInput: f.DefaultInput, InputNote: f.InputNote, Agents: f.Agents}
		if out[i].Agents == nil {
			out[i].Agents = []traces.Agent{}
		}
	}
	return c.JSON(http.StatusOK, out)
}

// flowInfos is the catalogue as the index page draws it and GET /api/flows lists it.
func (s *Server) flowInfos() []web.FlowInfo {
	out := make([]web.FlowInfo, len(s.flows))
	for i, f := range s.flows {
		out[i] = web.FlowInfo{Name: f.Name, Title: f.Title, Group: f.Group, Plain: f.Plain, Description: f.Description, DefaultInput: f.DefaultInput,
			InputNote: s.inputNote(f), Agents: f.Agents}
	}
	return out
}

// startHere is the flow the index offers a newcomer first.
const startHere = agents.StartHere

// flowGroups returns the groups of flows, in the index's order: the flows a program registered,
// then the catalogue's groups.
func flowGroups() []web.FlowGroup {
	out := make([]web.FlowGroup, 0, len(agents.Groups)+1)
	out = append(out, web.FlowGroup{Name: agents.GroupRegistered, Plain: "The flows of the program that serves this Baton, registered with it."})
	for _, g := range agents.Groups {
		out = append(out, web.FlowGroup{Name: g.Name, Plain: g.Plain})
	}
	return out
}

// inputNote is f's note on how its scripted answers follow the input; when the server offers
// real models too, it says that it holds for the scripted one only (a real model follows any input).
func (s *Server) inputNote(f agents.Flow) string {
	if f.InputNote == "" || len(s.cfg.Models) == 0 {
		return f.InputNote
	}
	return "With the scripted model: " + f.InputNote
}

// lookupFlow returns the configured flow named name, or a CodeInvalid error listing the known
// ones: the flow is a field of the request, not the resource it addresses.
func (s *Server) lookupFlow(name string) (agents.Flow, error) {
	names := make([]string, len(s.flows))
	for i, f := range s.flows {
		if f.Name == name {
			return f, nil
		}
		names[i] = f.Name
	}
	known := strings.Join(names, ", ")
	if known == "" {
		known = "(none)"
	}
	if name == "" {
		return agents.Flow{}, traces.Errorf(traces.CodeInvalid, "flow is required; known flows: %s", known)
	}
	return agents.Flow{}, traces.Errorf(traces.CodeInvalid, "unknown flow %q; known flows: %s", clip(name, 60), known)
}
