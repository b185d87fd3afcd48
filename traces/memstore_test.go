package traces_test

import (
	"testing"

	"github.com/baton-dev/baton/traces"
	"github.com/baton-dev/baton/traces/storetest"
)

// The in-memory store meets the Store contract, as SQLite does.
func TestMemoryStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T, keep int) traces.Store { return traces.NewMemoryStore(keep) })
}
