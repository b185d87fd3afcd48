package agentstest

import (
	"context"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/components/tool/utils"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/traces"
)

// Markup a page must show as text, never run. Hostile's run puts them everywhere it can; a page
// that executes either sets window.__xss.
const (
	ScriptTag = `<script>window.__xss=1</script>`
	ImgTag    = `<img src=x onerror="window.__xss=1">`
	BoldTag   = `<b>bold</b>`
)

// HostileSessionKey is the session key Hostile's remember tool stores ImgTag under; the key holds
// markup too.
const HostileSessionKey = "note " + ScriptTag

// hostileDesc is the agent's description (and its flow's), with BoldTag in it.
const hostileDesc = "Repeats " + BoldTag + " text back, " + ScriptTag + " included."

// Hostile returns a flow whose model text, tool arguments, tool results, session key and value,
// agent description and flow title all carry ScriptTag, ImgTag or BoldTag. Its one agent,
// hostile_agent, calls echo and remember in one message, then answers; it runs to completion.
func Hostile() agents.Flow {
	return agents.Flow{
		Name:         "hostile",
		Title:        "Hostile " + BoldTag + " markup " + ImgTag,
		Description:  hostileDesc,
		DefaultInput: "Say " + ScriptTag + " and " + ImgTag,
		Agents: []traces.Agent{{Name: "hostile_agent", Description: hostileDesc, Kind: traces.AgentChatModel,
			Tools: []string{"echo", "remember"}}},
		Scripts: map[string]agents.Script{"hostile_agent": agents.NewScript(
			agents.SayAndDo("Echoing "+ScriptTag+" as asked.",
				agents.Call("echo", echoArg{Text: ImgTag + " " + ScriptTag}),
				agents.Call("remember", echoArg{Text: ImgTag})),
			agents.Say("Done: "+ScriptTag+" "+ImgTag+" "+BoldTag),
		)},
		Build: buildHostile,
	}
}

// echoArg is the argument of Hostile's tools.
type echoArg struct {
	Text string `json:"text"`
}

func buildHostile(ctx context.Context, models agents.ModelFor) (adk.Agent, error) {
	echo, err := utils.InferTool("echo", "Repeat text "+BoldTag+".", func(_ context.Context, in echoArg) (string, error) {
		return "echo: " + in.Text + " " + ImgTag, nil
	})
	if err != nil {
		return nil, err
	}
	remember, err := utils.InferTool("remember", "Keep text in the session.", func(ctx context.Context, in echoArg) (string, error) {
		adk.AddSessionValue(ctx, HostileSessionKey, in.Text)
		return "remembered " + in.Text, nil
	})
	if err != nil {
		return nil, err
	}
	var conf adk.ToolsConfig
	conf.Tools = []tool.BaseTool{echo, remember}
	conf.ExecuteSequentially = true
	return agents.NewChatAgent(ctx, models, adk.ChatModelAgentConfig{
		Name:        "hostile_agent",
		Description: hostileDesc,
		Instruction: "Repeat whatever you are given, markup and all.",
		ToolsConfig: conf,
	})
}
