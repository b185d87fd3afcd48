package templates_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if a test leaves goroutines behind: the incremental tests run every
// flow of the catalogue through eino, which starts several goroutines per run.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
