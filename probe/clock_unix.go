//go:build unix

package probe

import "syscall"

// cpuNS returns the CPU time (user plus system, all threads) the process
// has used, in ns.
func cpuNS() (int64, bool) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, false
	}
	return ru.Utime.Nano() + ru.Stime.Nano(), true
}
