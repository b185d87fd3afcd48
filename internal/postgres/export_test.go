package postgres

import "time"

// SetLease makes leases beat every beat and expire after timeout, for tests; it returns what
// undoes it.
func SetLease(beat, timeout time.Duration) func() {
	oldBeat, oldTimeout := leaseBeat, leaseTimeout
	leaseBeat, leaseTimeout = beat, timeout
	return func() { leaseBeat, leaseTimeout = oldBeat, oldTimeout }
}

// Kill stops the lease's heartbeat without giving it up, as a server that dies does.
func (l *Lease) Kill() { l.halt() }
