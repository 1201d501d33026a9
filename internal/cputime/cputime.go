// Package cputime measures the CPU time the process has used, for
// benchmarks and measurement scripts: on a shared machine, work per CPU
// second is steadier than work per wall-clock second.
package cputime

import "time"

// Used returns the user plus system CPU time the process has used so far,
// or 0 where the system does not say (then callers report wall time only).
func Used() time.Duration { return used() }
