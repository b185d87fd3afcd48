package cli

import (
	"fmt"
	"os"

	"github.com/baton-dev/baton/traces"
)

// readTrace reads a trace file; a file traces.Unmarshal refuses gets its message.
func readTrace(file string) (traces.Trace, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return traces.Trace{}, err
	}
	tr, err := traces.Unmarshal(data)
	if err != nil {
		return traces.Trace{}, fmt.Errorf("%s: %s", file, traces.ErrorMessage(err))
	}
	return tr, nil
}
