package occupancy

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/parscope/parscope/trace"
)

// CounterPrefix begins the name of a local occupancy counter, as the
// instrument library writes them (Options.Occupancy): "occupancy <state>",
// the time in ns a process spent in the state, recorded at its end.
const CounterPrefix = "occupancy "

// ErrNoCounters is the error of ReadCounters, and (wrapped) of the
// occupancy analysis with Params.Counters, on a trace that declares no
// occupancy counters.
var ErrNoCounters = errors.New("occupancy: the trace has no occupancy counters (record it with the instrument library's Options.Occupancy)")

// Counters are the local occupancy counters of one run.
type Counters struct {
	Run int32
	// Local is the time (ns) each process spent in each mode.
	Local [][]float64
	// End is the time of each process's counters (its end), -1 for a
	// process without counters.
	End []int64
}

// ReadCounters collects the local occupancy counters of every run of r,
// summed per mode (several states may map to one mode). It is the local
// collection of Lyon's section "Local State Information": no global
// state is reconstructed. A counter of a state that maps to no mode is an
// error; so is a trace without occupancy counters (ErrNoCounters).
func ReadCounters(ctx context.Context, h *trace.Header, r trace.Reader, modes *Modes) ([]Counters, error) {
	stateOf := map[int32]int32{} // counter id -> state id
	byName := map[string]int32{}
	for _, d := range h.States {
		byName[stateName(d)] = d.ID
		if d.Name != "" {
			byName[d.Name] = d.ID
		}
	}
	for _, c := range h.Counters {
		name, ok := strings.CutPrefix(c.Name, CounterPrefix)
		if !ok {
			continue
		}
		id, ok := byName[name]
		if !ok {
			v, err := strconv.ParseInt(name, 10, 32)
			if err != nil {
				return nil, fmt.Errorf("occupancy: counter %q names no state of the trace", c.Name)
			}
			id = int32(v)
		}
		stateOf[c.ID] = id
	}
	if len(stateOf) == 0 {
		return nil, ErrNoCounters
	}
	var out []Counters
	index := map[int32]int{}
	err := eachRecord(ctx, r, func(rec *trace.Record) error {
		if rec.Kind != trace.KindCounter {
			return nil
		}
		id, ok := stateOf[rec.ID]
		if !ok {
			return nil
		}
		k, ok := modes.Mode(id)
		if !ok {
			return fmt.Errorf("occupancy: run %d process %d: counter of state %d, which is mapped to no mode", rec.Run, rec.Proc, id)
		}
		j, ok := index[rec.Run]
		if !ok {
			p := 0
			if int(rec.Run) >= 0 && int(rec.Run) < len(h.Runs) {
				p = int(h.Runs[rec.Run].Procs)
			}
			c := Counters{Run: rec.Run, Local: make([][]float64, p), End: make([]int64, p)}
			for q := range c.Local {
				c.Local[q] = make([]float64, len(modes.Names))
				c.End[q] = -1
			}
			j = len(out)
			index[rec.Run] = j
			out = append(out, c)
		}
		c := &out[j]
		if rec.Proc < 0 || int(rec.Proc) >= len(c.Local) {
			return fmt.Errorf("occupancy: run %d: counter of process %d, but the run has %d processes", rec.Run, rec.Proc, len(c.Local))
		}
		c.Local[rec.Proc][k] += rec.Float()
		c.End[rec.Proc] = max(c.End[rec.Proc], rec.T)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Mean returns the mean node occupancy of each mode from the counters.
func (c *Counters) Mean() []float64 { return LocalMean(c.Local) }

// Span returns the elapsed time (ns) the counters cover: from the earliest
// beginning of a process (its end minus the sum of its counters) to the
// latest end. Processes without counters are left out.
func (c *Counters) Span() float64 {
	first, last := math.Inf(1), math.Inf(-1)
	for i, row := range c.Local {
		if c.End[i] < 0 {
			continue
		}
		var s float64
		for _, v := range row {
			s += v
		}
		first = min(first, float64(c.End[i])-s)
		last = max(last, float64(c.End[i]))
	}
	if last < first {
		return 0
	}
	return last - first
}
