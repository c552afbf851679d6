package postgres

// Classify is classify, for the tests of what counts as an outage.
var Classify = classify
