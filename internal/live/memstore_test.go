package live_test

import (
	"testing"

	"github.com/baton-dev/baton/internal/live"
	"github.com/baton-dev/baton/internal/storetest"
)

// The in-memory store meets the Store contract, as SQLite does.
func TestMemoryStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T, keep int) live.Store { return live.NewMemoryStore(keep) })
}
