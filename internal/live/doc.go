// Package live holds a Baton process's runs: the Broker that keeps the recordings going on and
// the recent ones, writes each into its Store while the run goes on (viewers read only what the
// store has committed) and reads back the runs it no longer holds; the Store contract, with the
// run list's query, page and tally; and MemoryStore, the Store that lives as long as the process.
// internal/sqlite is the Store on disk; internal/storetest holds every store to one contract.
// It is Baton's own, not API.
package live
