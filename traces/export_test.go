package traces

// PayloadField is payloadField, for the schema test in package traces_test.
var PayloadField = payloadField

// MessageShare is messageShare, for the expansion tests in package traces_test.
const MessageShare = messageShare
