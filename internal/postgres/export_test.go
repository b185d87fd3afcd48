package postgres

// Kill stops the lease's heartbeat without giving it up, as a server that dies does.
func (l *Lease) Kill() { l.halt() }
