package instrument

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
	_ "unsafe" // for go:linkname
)

// nanotime is the runtime's monotonic clock (the one behind time.Since),
// without the wall-clock read that time.Now adds.
//
//go:linkname nanotime runtime.nanotime
func nanotime() int64

// useTSC selects the CPU's time-stamp counter as the hot-path clock. It is
// set once, by the first Start (chooseClock), and only read afterwards.
var (
	useTSC    bool
	clockOnce sync.Once
)

// chooseClock sets useTSC, the first time a recorder starts: deciding
// reads two kernel files (/proc/cpuinfo is slow to generate), which a
// program that never records does not pay for.
func chooseClock() { clockOnce.Do(func() { useTSC = tscUsable() }) }

// ticks reads the hot-path clock: TSC ticks where the TSC is invariant,
// otherwise runtime nanoseconds.
func ticks() int64 {
	if useTSC {
		return rdtsc()
	}
	return nanotime()
}

// tscUsable reports whether this CPU has an invariant TSC (constant rate,
// running in every power state) that the kernel also trusts as its clock
// source, so that ticks are comparable across cores.
func tscUsable() bool {
	if !haveRDTSC || os.Getenv("PARSCOPE_CLOCK") == "monotonic" {
		return false
	}
	src, err := os.ReadFile("/sys/devices/system/clocksource/clocksource0/current_clocksource")
	if err != nil || strings.TrimSpace(string(src)) != "tsc" {
		return false
	}
	info, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return false
	}
	s := string(info)
	return strings.Contains(s, " constant_tsc") && strings.Contains(s, " nonstop_tsc")
}

// clockPair is one simultaneous reading of the hot-path clock and the
// runtime's monotonic nanoseconds; two pairs calibrate ticks to nanoseconds.
type clockPair struct {
	Ticks int64 `json:"ticks"`
	Nanos int64 `json:"nanos"`
}

// appendJSON appends p as json.Marshal would.
func (p clockPair) appendJSON(dst []byte) []byte {
	dst = strconv.AppendInt(append(dst, `{"ticks":`...), p.Ticks, 10)
	dst = strconv.AppendInt(append(dst, `,"nanos":`...), p.Nanos, 10)
	return append(dst, '}')
}

// readPair reads both clocks as close together as it can: the tick count is
// taken between two nanosecond readings and paired with their midpoint; of
// a few attempts the tightest is kept.
func readPair() clockPair {
	best, width := clockPair{}, int64(-1)
	for i := 0; i < 5; i++ {
		a := nanotime()
		t := ticks()
		b := nanotime()
		if width < 0 || b-a < width {
			best, width = clockPair{Ticks: t, Nanos: a + (b-a)/2}, b-a
		}
	}
	return best
}

// calibrate returns a start pair and a pair at least d later, spinning in
// between (d is short: a sleep would take longer than asked).
func calibrate(d time.Duration) (clockPair, clockPair) {
	p0 := readPair()
	for nanotime()-p0.Nanos < int64(d) {
	}
	return p0, readPair()
}

// nsPerTick is the slope between two pairs (1 for the nanosecond clock).
func nsPerTick(a, b clockPair) float64 {
	if b.Ticks == a.Ticks {
		return 1
	}
	return float64(b.Nanos-a.Nanos) / float64(b.Ticks-a.Ticks)
}
