package record

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if a test leaves goroutines behind: a recorder delivers each run on
// goroutines of its own (record.go, remote.go, remotedebug.go) that must end with the run.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
