package report

import (
	"context"
	"errors"
	"io"

	"github.com/parscope/parscope/store"
	"github.com/parscope/parscope/trace"
)

// OverviewWindows is the number of windows of the finest level of detail.
const OverviewWindows = 1024

// OverviewFactor is the ratio between the window counts of two adjacent levels.
const OverviewFactor = 4

// Overview is the activity of every run over time: the records of each kind
// per time window, at several levels of detail, so that a view of any time
// range is answered from a few hundred windows whatever the trace's size.
type Overview struct {
	// Kinds names the columns of Level.Counts.
	Kinds []string      `json:"kinds"`
	Runs  []OverviewRun `json:"runs"`
}

// OverviewRun is the overview of one run.
type OverviewRun struct {
	Run        int32 `json:"run"`
	Begin, End int64 `json:"-"`
	// Levels go from the finest (OverviewWindows windows) to the coarsest,
	// each OverviewFactor times coarser than the one before.
	Levels []Level `json:"levels"`
}

// Level is one level of detail: the run's time span [Begin, End] cut into
// equal windows.
type Level struct {
	Begin int64 `json:"begin_ns"`
	// Width is the duration of a window (ns).
	Width   float64 `json:"width_ns"`
	Windows int     `json:"windows"`
	// Counts holds, window after window, the number of records of each
	// kind that start in the window (len Windows × len Kinds).
	Counts []int64 `json:"counts"`
}

// Window returns the counts of window i.
func (l *Level) Window(i, kinds int) []int64 { return l.Counts[i*kinds : (i+1)*kinds] }

// overviewKinds lists the kinds the overview counts (BBV records have no time).
func overviewKinds() []trace.Kind {
	var ks []trace.Kind
	for k := trace.Kind(1); k.Valid(); k++ {
		if k != trace.KindBBV {
			ks = append(ks, k)
		}
	}
	return ks
}

func buildOverview(ctx context.Context, s *store.Store, runs []RunSummary) (*Overview, error) {
	kinds := overviewKinds()
	col := map[trace.Kind]int{}
	ov := &Overview{}
	for i, k := range kinds {
		col[k] = i
		ov.Kinds = append(ov.Kinds, k.String())
	}
	nk := len(kinds)
	byRun := map[int32]int{}
	for _, r := range runs {
		byRun[r.Run] = len(ov.Runs)
		ov.Runs = append(ov.Runs, OverviewRun{Run: r.Run, Begin: r.Begin, End: r.End,
			Levels: []Level{{Begin: r.Begin, Windows: OverviewWindows, Counts: make([]int64, OverviewWindows*nk),
				Width: float64(r.End-r.Begin+1) / OverviewWindows}}})
	}
	rd := s.Records(store.ReadOptions{})
	buf := make([]trace.Record, 4096)
	for n := 0; ; n++ {
		if n%64 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		k, err := rd.Read(buf)
		for _, r := range buf[:k] {
			i, ok := byRun[r.Run]
			c, kok := col[r.Kind]
			if !ok || !kok {
				continue
			}
			l := &ov.Runs[i].Levels[0]
			w := int(float64(r.T-l.Begin) / l.Width)
			w = min(max(w, 0), l.Windows-1)
			l.Counts[w*nk+c]++
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	for i := range ov.Runs {
		r := &ov.Runs[i]
		for r.Levels[len(r.Levels)-1].Windows > OverviewFactor {
			fine := &r.Levels[len(r.Levels)-1]
			n := fine.Windows / OverviewFactor
			coarse := Level{Begin: fine.Begin, Width: fine.Width * OverviewFactor, Windows: n, Counts: make([]int64, n*nk)}
			for w := range fine.Windows {
				for c := range nk {
					coarse.Counts[(w/OverviewFactor)*nk+c] += fine.Counts[w*nk+c]
				}
			}
			r.Levels = append(r.Levels, coarse)
		}
	}
	return ov, nil
}

// Slice is the answer to an overview query: the windows of one level that
// cover a time range.
type Slice struct {
	Run   int32    `json:"run"`
	Kinds []string `json:"kinds"`
	// Level is the index of the level used (0 is the finest).
	Level int     `json:"level"`
	Width float64 `json:"width_ns"`
	// Starts are the start times of the windows (ns) and Counts their
	// counts, as in Level.Counts.
	Starts []int64 `json:"starts_ns"`
	Counts []int64 `json:"counts"`
}

// Query returns the windows of run that overlap [from, to) (to ≤ from
// means to the end) from the finest level that needs at most most windows
// (the coarsest level when none does). It reads only the pre-aggregated
// levels. ok is false when the run is unknown.
func (ov *Overview) Query(run int32, from, to int64, most int) (sl Slice, ok bool) {
	var r *OverviewRun
	for i := range ov.Runs {
		if ov.Runs[i].Run == run {
			r = &ov.Runs[i]
		}
	}
	if r == nil || len(r.Levels) == 0 {
		return Slice{}, false
	}
	if to <= from {
		to = r.Levels[0].Begin + int64(float64(r.Levels[0].Windows)*r.Levels[0].Width) + 1
	}
	nk := len(ov.Kinds)
	span := func(l *Level) (int, int) {
		a := int(float64(from-l.Begin) / l.Width)
		b := int(float64(to-l.Begin)/l.Width) + 1
		return min(max(a, 0), l.Windows), min(max(b, 0), l.Windows)
	}
	li := len(r.Levels) - 1
	for i := range r.Levels {
		a, b := span(&r.Levels[i])
		if b-a <= most {
			li = i
			break
		}
	}
	l := &r.Levels[li]
	a, b := span(l)
	sl = Slice{Run: run, Kinds: ov.Kinds, Level: li, Width: l.Width, Counts: l.Counts[a*nk : b*nk]}
	for w := a; w < b; w++ {
		sl.Starts = append(sl.Starts, l.Begin+int64(float64(w)*l.Width))
	}
	return sl, true
}
