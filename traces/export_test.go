package traces

// PayloadField is payloadField, for the schema test in package traces_test.
var PayloadField = payloadField
