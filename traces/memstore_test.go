package traces_test

import (
	"testing"

	"github.com/baton-dev/baton/internal/storetest"
	"github.com/baton-dev/baton/traces"
)

// The in-memory store meets the Store contract, as SQLite does.
func TestMemoryStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T, keep int) traces.Store { return traces.NewMemoryStore(keep) })
}
