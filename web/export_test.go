package web

// NewTravelEvery returns a Travel that keeps a copy every n events, so that tests of short runs
// step from copies.
func NewTravelEvery(n int) *Travel { return &Travel{every: n} }

// OneLine is oneLine, for its fuzz test.
var OneLine = oneLine
