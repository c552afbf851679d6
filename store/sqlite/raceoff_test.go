//go:build !race

package sqlite_test

// raceEnabled reports whether the tests run under the race detector,
// which makes SQL-heavy tests many times slower: large tests shrink.
const raceEnabled = false
