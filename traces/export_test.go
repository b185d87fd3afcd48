package traces

// PayloadField is payloadField, for the schema test in package traces_test.
var PayloadField = payloadField

// MessageShare is messageShare, for the expansion tests in package traces_test.
const MessageShare = messageShare

// ReadInParts makes Unmarshal cut an events array of more than 2*minPart bytes into parts as
// though the machine had cores cores (1: read on one goroutine), until restore is called.
func ReadInParts(minPart, cores int) (restore func()) {
	part, n, c := parallelPart, parallelParts, partsCores
	parallelPart, parallelParts, partsCores = minPart, cores, cores
	return func() { parallelPart, parallelParts, partsCores = part, n, c }
}

// PartsRead is how many events arrays were read in parts so far.
func PartsRead() int64 { return partsRead.Load() }
