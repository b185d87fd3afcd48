package record

// readStreamed runs j, the reading of a streamed output, on one of the run's reader goroutines:
// an idle one if there is, else a new one. A goroutine started per stream begins on the smallest
// stack and grows it, copying it each time, as deep as recording a reply goes: most of what a
// streamed reply cost the recorder beyond reading it. The readers end with the run.
func (r *Recorder) readStreamed(j reading) {
	select {
	case r.readers <- j: // an idle reader takes it
	default:
		go r.reader(j)
	}
}

// reading is what a reader runs: a *streamRead. An interface holding a pointer, where a method
// value handed over would be an allocation per stream.
type reading interface{ run() }

// reader runs j, then each stream handed to it while idle, until the run has ended.
func (r *Recorder) reader(j reading) {
	for {
		j.run()
		select {
		case j = <-r.readers:
		case <-r.ended:
			return
		}
	}
}
