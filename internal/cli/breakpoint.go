package cli

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/traces"
	"github.com/baton-dev/baton/web"
)

// stdin is where a run held at a breakpoint reads what to do; tests replace it.
var stdin io.Reader = os.Stdin

// breakFlags are run's --break flags, each KIND[:TARGET][@AGENT].
type breakFlags []agents.Breakpoint

func (f *breakFlags) String() string { return fmt.Sprint(len(*f)) }

func (f *breakFlags) Set(spec string) error {
	b, err := agents.ParseBreakpoint(spec)
	if err != nil {
		return errors.New(traces.ErrorMessage(err))
	}
	*f = append(*f, b)
	return nil
}

const breakHelp = "hold the run at a breakpoint `SPEC`, written KIND[:TARGET][@AGENT] (repeatable): transfer, agenttool, model, tool, error, session, interrupt; " +
	"e.g. transfer:math_agent, tool:search, model@supervisor. Where it holds, a line on stdin says what to do: c (continue), s (step to the next handoff), q (abort), e FILE (continue with the edits in FILE: {\"reply\": ..., \"input\": [...], \"result\": \"...\", \"value\": ...}; a result is given in a held tool's place, which is not run)"

// prompt asks, on w, what a run held at paused (its event) does, reads the answer from in and
// lets the run go on. Before a transfer it first says what the target will be fed, from tr (the
// trace so far). An answer it cannot use is said and asked again; the end of in continues the
// run without breakpoints.
func prompt(d *agents.Debugger, paused traces.Event, tr traces.Trace, in *bufio.Scanner, w io.Writer) {
	for first := true; ; first = false {
		fmt.Fprintf(w, "paused at a %s breakpoint: %s\n", paused.Pause.Break, paused.Pause.Detail)
		if first {
			printFeed(tr, paused, w)
		}
		fmt.Fprint(w, "[c]ontinue, [s]tep [KIND], [q]uit, e FILE (edit)> ")
		if !in.Scan() {
			fmt.Fprintln(w, "\nstdin ended: continuing without breakpoints")
			d.SetBreakpoints(nil)
			if err := d.Continue(agents.Resume{Action: traces.ActionContinue, By: "cli"}); err != nil {
				fmt.Fprintln(w, traces.ErrorMessage(err))
			}
			return
		}
		res, err := answer(strings.TrimSpace(in.Text()))
		if err == nil {
			res.By = "cli"
			err = d.Continue(res)
		}
		if err == nil {
			return
		}
		fmt.Fprintln(w, traces.ErrorMessage(err))
	}
}

// printFeed says, for a run held before a transfer at paused, what the target will be fed, as
// the run's page does: each message, its origin, its start.
func printFeed(tr traces.Trace, paused traces.Event, w io.Writer) {
	h := web.NewStats(tr).Held
	if h == nil || h.Seq != paused.Seq {
		return
	}
	if h.FeedNote != "" {
		fmt.Fprintln(w, "  "+h.FeedNote)
	}
	if len(h.Feed) == 0 {
		return
	}
	fmt.Fprintln(w, "  "+h.FeedTitle+":")
	for _, m := range h.Feed {
		text := m.Content
		if m.Injected != "" {
			text += " [+ eino's transfer instruction]"
		}
		for _, c := range m.ToolCalls {
			text += fmt.Sprintf(" %s(%s)", c.Name, c.Arguments)
		}
		fmt.Fprintf(w, "    %-9s %-16s %s\n", m.Role, "["+string(m.Origin)+"]", clipLine(text, 160))
	}
}

// clipLine is s on one line, at most n bytes of it.
func clipLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		s = strings.ToValidUTF8(s[:n], "") + "…"
	}
	return s
}

// answer reads one line of a person held at a breakpoint.
func answer(line string) (agents.Resume, error) {
	cmd, arg, _ := strings.Cut(line, " ")
	switch cmd {
	case "c", "":
		return agents.Resume{Action: traces.ActionContinue}, nil
	case "s":
		return agents.Resume{Action: traces.ActionStep, Step: strings.TrimSpace(arg)}, nil
	case "q":
		return agents.Resume{Action: traces.ActionAbort}, nil
	case "e":
		data, err := os.ReadFile(strings.TrimSpace(arg))
		if err != nil {
			return agents.Resume{}, traces.Errorf(traces.CodeInvalid, "e FILE: %v", err)
		}
		var res agents.Resume
		dec := json.NewDecoder(strings.NewReader(string(data)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&res); err != nil {
			return agents.Resume{}, traces.Errorf(traces.CodeInvalid, "e FILE: %s is not an edit ({\"reply\": {\"content\": ..., \"tool_calls\": [...]}, \"input\": [{\"role\": ..., \"content\": ...}], \"result\": \"...\", \"value\": ...}): %v", arg, err)
		}
		if res.Action == "" {
			res.Action = traces.ActionContinue
		}
		return res, nil
	}
	return agents.Resume{}, traces.Errorf(traces.CodeInvalid, "%q: answer c, s, s KIND (transfer, agenttool, model, tool...), q or e FILE", line)
}
