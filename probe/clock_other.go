//go:build !unix

package probe

// cpuNS is not available here: the CPU clock needs getrusage.
func cpuNS() (int64, bool) { return 0, false }
