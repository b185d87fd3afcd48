package record

// readStreamed runs f, the reading of a streamed output, on one of the run's reader goroutines: an
// idle one if there is, else a new one. A goroutine started per stream begins on the smallest
// stack and grows it, copying it each time, as deep as recording a reply goes: most of what a
// streamed reply cost the recorder beyond reading it. The readers end with the run.
func (r *Recorder) readStreamed(f func()) {
	select {
	case r.readers <- f: // an idle reader takes it
	default:
		go r.reader(f)
	}
}

// reader runs f, then each stream handed to it while idle, until the run has ended.
func (r *Recorder) reader(f func()) {
	for {
		f()
		select {
		case f = <-r.readers:
		case <-r.ended:
			return
		}
	}
}
