package server_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/server"
)

// TestFlowsAPIAsTheIndex: GET /api/flows gives every flow of the catalogue with the group the
// index files it under and its description as the index words it, plain words first, then
// eino's API names.
func TestFlowsAPIAsTheIndex(t *testing.T) {
	ts := mustOpenServer(t, server.Config{Flows: agents.Catalogue()})
	res := ts.do(t, request{path: "/api/flows"})
	var flows []struct {
		Name, Group, Description string
	}
	if err := json.Unmarshal(res.body, &flows); err != nil || len(flows) != len(agents.Catalogue()) {
		t.Fatalf("GET /api/flows: %d flows (%v), want the catalogue's %d", len(flows), err, len(agents.Catalogue()))
	}
	doc := page(t, ts.do(t, request{path: "/"}))
	for _, f := range flows {
		card := doc.Find("[data-testid=flow-" + f.Name + "]")
		if card.Length() != 1 {
			t.Errorf("%s: %d cards on the index", f.Name, card.Length())
			continue
		}
		group, _ := card.Closest("[data-testid=flow-group]").Attr("data-group")
		if f.Name == agents.StartHere {
			group = groupOf(t, f.Name) // the index offers it first, outside its group
		}
		if f.Group == "" || f.Group != group {
			t.Errorf("%s: group %q, the index files it under %q", f.Name, f.Group, group)
		}
		plain := strings.TrimSpace(card.Find("[data-testid=flow-plain]").Text())
		api := strings.TrimSpace(card.Find(".description").Text())
		api = strings.TrimSpace(strings.TrimPrefix(api, "In eino's terms"))
		if plain == "" || api == "" || !strings.HasPrefix(f.Description, plain) || !strings.HasSuffix(f.Description, api) {
			t.Errorf("%s: description %q, want the index's plain words %q, then its API names %q", f.Name, f.Description, plain, api)
		}
	}
}

func groupOf(t *testing.T, name string) string {
	t.Helper()
	for _, f := range agents.Catalogue() {
		if f.Name == name {
			return f.Group
		}
	}
	t.Fatalf("no flow %s", name)
	return ""
}
