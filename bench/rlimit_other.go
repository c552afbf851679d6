//go:build !(linux || darwin)

package main

// raiseFileLimit leaves the limit of open files as it is here; 0 means
// unknown.
func raiseFileLimit() (uint64, error) { return 0, nil }
