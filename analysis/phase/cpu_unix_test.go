//go:build unix

package phase

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time (user + system) the process has used.
func processCPU() time.Duration {
	var r syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &r); err != nil {
		return 0
	}
	return time.Duration(r.Utime.Nano() + r.Stime.Nano())
}
