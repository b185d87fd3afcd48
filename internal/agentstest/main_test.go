package agentstest_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if a run leaves goroutines behind (eino starts several per run).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
