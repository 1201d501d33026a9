//go:build unix

package occupancy

import (
	"syscall"
	"time"
)

// cpuTime returns the user and system CPU time of the process so far: on
// a shared machine, records per CPU second is steadier than per wall
// second.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
