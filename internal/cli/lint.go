package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"

	"github.com/baton-dev/baton/internal/lint"
)

var lintCommand = &command{
	name:  "lint",
	args:  "TRACE...",
	shape: "[--json] [--fail-on] [--config] [--ping-pong-hops] [--context-growth]",
	about: "name the handoff bugs that trace files show",
	define: func(fs *flag.FlagSet) runner {
		asJSON := fs.Bool("json", false, "print the findings as JSON, one object per trace file")
		failOn := fs.String("fail-on", "warning", "exit 1 when a finding is at or above the severity `S`: info, warning or error")
		config := fs.String("config", "", "read thresholds, severities and rules turned off from the JSON file `FILE`")
		hops := fs.Int("ping-pong-hops", 0, "`N` transfers in a row with nothing done between make a ping-pong (default 4)")
		growth := fs.Float64("context-growth", 0, "a handoff's target's first prompt may be `TIMES` its source's (default 3)")
		return func(_ context.Context, args []string, stdout, _ io.Writer) error {
			var files []string
			for len(args) > 0 && args[0] != "" && args[0][0] != '-' {
				files, args = append(files, args[0]), args[1:]
			}
			if err := fs.Parse(args); err != nil {
				return err
			}
			files = append(files, fs.Args()...)
			if len(files) == 0 {
				return misuse("lint", "lint needs at least one trace file")
			}
			threshold, err := lint.ParseSeverity(*failOn)
			if err != nil {
				return misuse("lint", "--fail-on: %v", err)
			}
			var cfg lint.Config
			if *config != "" {
				if cfg, err = lint.ReadConfig(*config); err != nil {
					return err
				}
			}
			if *hops > 0 {
				cfg.PingPongHops = *hops
			}
			if *growth > 0 {
				cfg.ContextGrowth = *growth
			}
			return lintTraces(files, cfg, threshold, *asJSON, stdout)
		}
	},
}

// lintTraces prints the findings of each trace file and fails when one is at or above threshold.
func lintTraces(files []string, cfg lint.Config, threshold lint.Severity, asJSON bool, stdout io.Writer) error {
	failing := 0
	enc := json.NewEncoder(stdout)
	for _, file := range files {
		tr, err := readTrace(file)
		if err != nil {
			return err
		}
		findings := lint.Check(tr, cfg)
		for _, f := range findings {
			if f.Severity >= threshold {
				failing++
			}
		}
		if asJSON {
			if findings == nil {
				findings = []lint.Finding{}
			}
			if err := enc.Encode(struct {
				File     string         `json:"file"`
				Run      string         `json:"run"`
				Findings []lint.Finding `json:"findings"`
			}{file, tr.Run.ID, findings}); err != nil {
				return err
			}
			continue
		}
		if len(findings) == 0 {
			fmt.Fprintf(stdout, "%s: no findings\n", file)
		}
		for _, f := range findings {
			fmt.Fprintf(stdout, "%s: #%d %s %s: %s\n", file, f.Seqs[0], f.Severity, f.Rule, f.Message)
		}
	}
	if failing > 0 {
		return fmt.Errorf("%d findings at or above %s", failing, threshold)
	}
	return nil
}
