package record

import "time"

// clock is a time as the recorder reads it (see runClock): a UTC wall time, as Unix nanoseconds,
// 8 bytes where a time.Time takes 24 (a call, allocated by every callback, then fits the
// allocator's 96-byte class). The difference of two readings is the monotonic time between them.
type clock int64

// runClock is the recorder's clock, which stamps every event it emits and the run's end: the
// wall time read when the recorder is made, plus the monotonic clock since.
// A reading costs one read of the monotonic clock (time.Since of a time that carries one), half a
// time.Now, which reads the wall clock too. A step of the wall clock during the run, or a suspend
// of the machine (which the monotonic clock does not count), is not followed: stamps go on from
// the base by the monotonic clock, and durations stay right. Each recorder reads a base of its
// own: a resumed part of a run, in this process or another, starts from the wall clock again.
type runClock struct {
	base     time.Time // with its monotonic clock reading
	baseUnix int64
}

func newRunClock() runClock {
	t := time.Now()
	return runClock{base: t, baseUnix: t.UnixNano()}
}

// now reads the clock.
func (c *runClock) now() clock { return clock(c.baseUnix + int64(time.Since(c.base))) }

// time returns t as an event's time: in UTC, with no monotonic clock reading.
func (t clock) time() time.Time { return time.Unix(0, int64(t)).UTC() }

// until returns the time from c to t.
func (c clock) until(t clock) time.Duration { return time.Duration(t - c) }

func millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
