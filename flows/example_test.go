package flows_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/cloudwego/eino/adk"

	"github.com/baton-dev/baton/attach/inprocess"
	"github.com/baton-dev/baton/flows"
	"github.com/baton-dev/baton/traces"
)

// A program registers its own flow with the page it serves in its process: the page can then
// start it, hold it at breakpoints, fork and replay it. Here the example starts a run through
// the page's API, on the scripted model, and reads its trace.
func ExampleFlow() {
	greeter := flows.Flow{
		Name:         "greeter",
		Description:  "Greets whoever writes.",
		DefaultInput: "Hi",
		Build: func(ctx context.Context, models flows.Models) (adk.Agent, error) {
			m, err := models("greeter") // the model Baton picked for this run
			if err != nil {
				return nil, err
			}
			return adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
				Name: "greeter", Description: "Greets.", Instruction: "Greet the user.", Model: m,
			})
		},
		Script: map[string][]flows.Reply{"greeter": {{Text: "Hello!"}}}, // the scripted model's answers
	}

	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var out bytes.Buffer
	if _, err := inprocess.Start(ctx, inprocess.Options{Out: &out, Flows: []flows.Flow{greeter}}); err != nil {
		panic(err)
	}
	url := strings.TrimSpace(out.String()[strings.Index(out.String(), "http://"):])

	resp, err := http.Post(url+"/api/runs", "application/json", strings.NewReader(`{"flow":"greeter"}`))
	if err != nil {
		panic(err)
	}
	var run struct{ ID string }
	err = json.NewDecoder(resp.Body).Decode(&run)
	resp.Body.Close()
	if err != nil {
		panic(err)
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		resp, err := http.Get(url + "/api/runs/" + run.ID + "/trace")
		if err != nil {
			panic(err)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if tr, err := traces.Unmarshal(data); err == nil && tr.Run.Status.Ended() {
			fmt.Println(tr.Run.Flow, tr.Run.Status)
			break
		}
	}
	// Output:
	// greeter completed
}
