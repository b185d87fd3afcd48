package attach

import "time"

// SetPostTimeout sets how long b waits for each answer of Baton, for tests that fault Baton; call
// it before b records a run.
func SetPostTimeout(b *Baton, d time.Duration) { b.dest.SetPostTimeout(d) }

// EndingWaitsRunOut returns how many run ends recorded by b waited for their delivery in vain.
func EndingWaitsRunOut(b *Baton) int64 { return b.dest.EndingWaitsRunOut() }
