package server

// keptEvents is how many of a run's newest events a feed keeps encoded (and their timeline rows
// rendered): a few seconds of a fast run, what the viewers near the head share. A viewer further
// behind has its events encoded again as it reads them, and they are not kept.
const keptEvents = 2048

// seqCache holds what was made once for the newest events of a run, by seq, in a fixed number of
// slots (seq modulo their count), so that it stays the same size however long the run. It keeps
// only the events among the newest len(slots) before the head, so that a viewer far behind never
// evicts what the viewers at the head share. Not safe for concurrent use: the feed's lock guards it.
type seqCache struct {
	slots []cached
}

type cached struct {
	seq  int64 // 0: empty
	data []byte
}

func newSeqCache(n int) seqCache { return seqCache{slots: make([]cached, n)} }

func (c *seqCache) slot(seq int64) *cached { return &c.slots[seq%int64(len(c.slots))] }

// get returns what was kept for event seq.
func (c *seqCache) get(seq int64) ([]byte, bool) {
	if s := c.slot(seq); s.seq == seq && seq > 0 {
		return s.data, true
	}
	return nil, false
}

// put keeps data for event seq when seq is among the newest events before head.
func (c *seqCache) put(seq, head int64, data []byte) {
	if seq > 0 && seq > head-int64(len(c.slots)) {
		*c.slot(seq) = cached{seq: seq, data: data}
	}
}

// drop forgets event seq's data: it is made again when next asked for.
func (c *seqCache) drop(seq int64) {
	if s := c.slot(seq); s.seq == seq {
		*s = cached{}
	}
}

// clear forgets everything.
func (c *seqCache) clear() { clear(c.slots) }

// len returns how many events have data kept.
func (c *seqCache) len() int {
	n := 0
	for _, s := range c.slots {
		if s.seq > 0 {
			n++
		}
	}
	return n
}
