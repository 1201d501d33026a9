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
	// ModelClock measures modelled time: the worker runs under
	// valgrind's callgrind with a simulated cache hierarchy, and a
	// Machine's cost model turns the events of each timed stretch into
	// time (see Valgrind). It is deterministic: the same run gives the
	// same times.
	ModelClock Clock = "model"
)

// ParseClock parses "wall", "cpu" or "model".
func ParseClock(s string) (Clock, error) {
	switch Clock(s) {
	case WallClock, CPUClock, ModelClock:
		return Clock(s), nil
	}
	return "", fmt.Errorf("clock %q: want wall, cpu or model", s)
}

// stopwatch reads a clock in ns since its start, less the time paused.
//
// With the model clock it reads ticks instead: every reading asks
// callgrind to dump the events since the previous reading (dump number
// tick) and returns that tick, and pause returns the tick whose dump holds
// exactly the paused work. The worker does not compute any time; the
// parent reads the dumps and turns ticks into modelled time (see
// Valgrind), so no parsing runs in the simulated process between two
// timed stretches.
type stopwatch struct {
	cpu    bool
	model  bool
	tick   int64
	start  int64
	paused int64
}

func newStopwatch(c Clock) (*stopwatch, error) {
	s := &stopwatch{cpu: c == CPUClock, model: c == ModelClock}
	if c != "" && c != WallClock && c != CPUClock && c != ModelClock {
		return nil, fmt.Errorf("clock %q: want wall, cpu or model", c)
	}
	if s.model && !runningOnValgrind() {
		return nil, fmt.Errorf("the model clock needs the worker to run under valgrind's callgrind (probe.Valgrind starts it so)")
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
	if s.model {
		callgrindDump()
		s.tick++
		return s.tick
	}
	if s.cpu {
		ns, _ := cpuNS()
		return ns
	}
	return time.Now().UnixNano()
}

// now returns the time since the start, pauses excluded (the model
// clock: the tick of this reading).
func (s *stopwatch) now() int64 {
	if s.model {
		return s.raw()
	}
	return s.raw() - s.start - s.paused
}

// pause runs f and excludes its time; it returns that time (the model
// clock: the tick whose dump holds f's events).
func (s *stopwatch) pause(f func()) int64 {
	t0 := s.raw()
	if s.model {
		f()
		return s.raw()
	}
	f()
	d := s.raw() - t0
	s.paused += d
	return d
}

// between returns the time from reading a to reading b (b the reading
// right after a with the model clock, whose tick b then holds the time).
func (s *stopwatch) between(a, b int64) int64 {
	if s.model {
		return b
	}
	return b - a
}
