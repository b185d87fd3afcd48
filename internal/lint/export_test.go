package lint

// ReferenceCheck is Check as it was before the rules shared one index (reference_test.go).
var ReferenceCheck = refCheck
