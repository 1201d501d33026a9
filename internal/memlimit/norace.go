//go:build !race

package memlimit

// Race reports whether the race detector is on: its shadow memory cannot
// live under a data-segment limit, so Run then runs the body in the test's
// own process, without a limit.
const Race = false
