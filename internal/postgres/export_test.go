package postgres

import "time"

// SetLockCheck makes Locks check their connection every d, for tests; it returns what undoes it.
func SetLockCheck(d time.Duration) func() {
	old := lockCheck
	lockCheck = d
	return func() { lockCheck = old }
}
