package agents

// BuildHost lets the tests build the host flow with host's own per-run options.
var BuildHost = buildHost
