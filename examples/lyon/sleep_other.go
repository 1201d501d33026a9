//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package main

import "time"

// sleep blocks for d.
func sleep(d time.Duration) { time.Sleep(d) }
