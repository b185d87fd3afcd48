package cli

import "io"

// SetStdin makes r the input of the commands that read one, until the test's cleanup.
func SetStdin(r io.Reader) (restore func()) {
	old := stdin
	stdin = r
	return func() { stdin = old }
}
