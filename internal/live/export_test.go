package live

// SetGate turns b's commit gate on or off: for a benchmark that measures what it costs.
func SetGate(b *Broker, on bool) { b.gate = on }
