package agents_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if a test leaves goroutines behind: eino starts several per run,
// a streamed reply is read by a goroutine of its own (typing.go), and the host flow runs its
// app in one (flow_host.go).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
