package probe

import (
	"fmt"
	"time"
)

// Clock selects what the probe's times measure.
type Clock string

const (
	// WallClock measures elapsed (wall-clock) time: what a user waits,
	// and what the thesis measures. The default.
	WallClock Clock = "wall"
	// CPUClock measures the worker process's CPU time (user plus system,
	// all threads). It does not see other processes competing for the
	// CPUs, so it predicts the CPU time the worker needs on the target;
	// on a shared machine it is the only time that repeats.
	CPUClock Clock = "cpu"
)

// ParseClock parses "wall" or "cpu".
func ParseClock(s string) (Clock, error) {
	switch Clock(s) {
	case WallClock, CPUClock:
		return Clock(s), nil
	}
	return "", fmt.Errorf("clock %q: want wall or cpu", s)
}

// stopwatch reads a clock in ns since its start, less the time paused.
type stopwatch struct {
	cpu    bool
	start  int64
	paused int64
}

func newStopwatch(c Clock) (*stopwatch, error) {
	s := &stopwatch{cpu: c == CPUClock}
	if c != "" && c != WallClock && c != CPUClock {
		return nil, fmt.Errorf("clock %q: want wall or cpu", c)
	}
	if s.cpu {
		if _, ok := cpuNS(); !ok {
			return nil, fmt.Errorf("the cpu clock is not available on this system")
		}
	}
	s.start = s.raw()
	return s, nil
}

func (s *stopwatch) raw() int64 {
	if s.cpu {
		ns, _ := cpuNS()
		return ns
	}
	return time.Now().UnixNano()
}

// now returns the time since the start, pauses excluded.
func (s *stopwatch) now() int64 { return s.raw() - s.start - s.paused }

// pause runs f and excludes its time.
func (s *stopwatch) pause(f func()) int64 {
	t0 := s.raw()
	f()
	d := s.raw() - t0
	s.paused += d
	return d
}
