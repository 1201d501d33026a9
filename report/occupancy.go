package report

import (
	"context"
	"sort"

	"github.com/parscope/parscope/analysis/occupancy"
	"github.com/parscope/parscope/analysis/state"
	"github.com/parscope/parscope/store"
	"github.com/parscope/parscope/trace"
)

// OccupancyWindows is the number of windows of the processes-per-mode chart.
const OccupancyWindows = 256

// OccupancyTableRows bounds the occupancy table rows kept per run (the
// largest occupancies first).
const OccupancyTableRows = 200

// OccupancyRun is the state occupancy of one run (Lyon 1990): every state
// is a mode of its own.
type OccupancyRun struct {
	Run   int32    `json:"run"`
	Procs int      `json:"procs"`
	Modes []string `json:"modes"`
	// StartMode is the mode a process is in before its first state.
	StartMode string `json:"start_mode"`
	Begin     int64  `json:"begin_ns"`
	End       int64  `json:"end_ns"`
	Records   int64  `json:"records"`
	// Microstates and MacroRows are the rows of Lyon's T1 and T2.
	Microstates int64 `json:"microstates"`
	MacroRows   int64 `json:"macrostate_rows"`
	// Possible is C(p+m-1, p), Observed the distinct macrostates seen.
	Possible string `json:"possible_macrostates"`
	Observed int    `json:"observed_macrostates"`
	// Table is the occupancy table (T3), the largest occupancies first,
	// at most OccupancyTableRows rows.
	Table []occupancy.Macro `json:"table"`
	// Mean is the mean node occupancy of each mode (T5), from the table
	// and from the per-process local counters.
	Mean []OccupancyMean `json:"mean"`
	// Histogram[j][k] is the fraction of the run's time with k processes
	// in mode j.
	Histogram [][]float64 `json:"histogram"`
	// Over time: the time-weighted mean number of processes in each mode
	// per window (Counts[w][j]).
	Window float64     `json:"window_ns"`
	Counts [][]float64 `json:"counts"`
}

// OccupancyMean is one mode's mean node occupancy.
type OccupancyMean struct {
	Mode   string  `json:"mode"`
	Global float64 `json:"global_ns"`
	Local  float64 `json:"local_ns"`
	Share  float64 `json:"share"`
}

func buildOccupancy(ctx context.Context, s *store.Store) ([]*OccupancyRun, error) {
	h := s.Header()
	modes := occupancy.StateModes(h)
	start := ""
	if k, ok := modes.Mode(state.DefaultStart(h)); ok {
		start = modes.Names[k]
	}
	// The tables need no time trace: memory stays bounded by the distinct
	// macrostates, not the length of the run.
	results, err := occupancy.Compute(ctx, h, s.Records(store.ReadOptions{Kinds: []trace.Kind{trace.KindState}}), modes,
		occupancy.Options{Start: start})
	if err != nil {
		return nil, err
	}
	var out []*OccupancyRun
	for _, res := range results {
		o := &OccupancyRun{Run: res.Run, Procs: res.Procs, Modes: res.Modes, StartMode: start, Begin: res.Begin, End: res.End,
			Records: res.Records, Microstates: res.Microstates, MacroRows: res.Rows,
			Possible: res.Possible().String(), Observed: len(res.Table)}
		o.Table = append([]occupancy.Macro(nil), res.Table...)
		sort.SliceStable(o.Table, func(i, j int) bool { return o.Table[i].Occupancy > o.Table[j].Occupancy })
		o.Table = o.Table[:min(len(o.Table), OccupancyTableRows)]
		g, l := res.Mean(), res.LocalMean()
		total := float64(res.End - res.Begin)
		for j, name := range res.Modes {
			m := OccupancyMean{Mode: name, Global: g[j], Local: l[j]}
			if total > 0 {
				m.Share = g[j] / total
			}
			o.Mean = append(o.Mean, m)
			proj, err := res.Project([]int{j})
			if err != nil {
				return nil, err
			}
			hist := make([]float64, res.Procs+1)
			for _, e := range proj {
				if total > 0 && int(e.Counts[0]) < len(hist) {
					hist[e.Counts[0]] = float64(e.Occupancy) / total
				}
			}
			o.Histogram = append(o.Histogram, hist)
		}
		o.Window = max(total, 1) / OccupancyWindows
		o.Counts = make([][]float64, OccupancyWindows)
		for w := range o.Counts {
			o.Counts[w] = make([]float64, len(res.Modes))
		}
		if err := spreadOccupancy(ctx, s, modes, start, res, o); err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, nil
}

// spreadOccupancy fills o.Counts, the processes per mode over time, with a
// second pass over the run's records: the macrostate rows (T2) stream by
// (occupancy.EachRow), each spread over the windows it covers and dropped,
// so memory does not grow with the run.
func spreadOccupancy(ctx context.Context, s *store.Store, modes *occupancy.Modes, start string, res *occupancy.Result, o *OccupancyRun) error {
	rd := s.Records(store.ReadOptions{Runs: []int32{res.Run}, Kinds: []trace.Kind{trace.KindState}})
	_, err := occupancy.EachRow(ctx, s.Header(), rd, modes, occupancy.Options{Start: start}, func(row *occupancy.Row) {
		// Spread the row's duration over the windows it covers.
		t0, t1 := float64(row.T-res.Begin), float64(row.T+row.Dur-res.Begin)
		for w := max(int(t0/o.Window), 0); w < OccupancyWindows && float64(w)*o.Window < t1; w++ {
			lo, hi := max(t0, float64(w)*o.Window), min(t1, float64(w+1)*o.Window)
			if hi <= lo {
				continue
			}
			for j, c := range row.Counts {
				o.Counts[w][j] += float64(c) * (hi - lo) / o.Window
			}
		}
	})
	return err
}
