package web

import "github.com/baton-dev/baton/traces"

// NewTravelEvery returns a Travel that keeps a copy every n events, so that tests of short runs
// step from copies.
func NewTravelEvery(n int) *Travel { return &Travel{every: n} }

// OneLine is oneLine, for its fuzz test.
var OneLine = oneLine

// WholeGraph is tr's tree with every team open, however large: the layout the collapsed tree
// starts from.
func WholeGraph(tr traces.Trace) Graph { return newGraph(treeOf(tr)) }
