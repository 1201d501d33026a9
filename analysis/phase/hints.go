package phase

// Hints describe the shape of an execution from its phase label sequence:
// where the initialisation ends, the period of the cyclic part, and when
// each phase runs. They are what Strube's thesis (Strube 2011, chapter 3) asks of a BBV
// analysis besides the simulation points.
type Hints struct {
	// InitEnd is the first interval of the steady part: intervals
	// [0, InitEnd) are the initialisation. The initialisation is the
	// longest prefix of runs (maximal stretches of one label) whose phases
	// never run again later; it stops at the first run whose phase recurs,
	// or at the last run when no phase recurs. 0 means no initialisation
	// was told apart.
	InitEnd int `json:"init_end"`
	// Period is the length in intervals of the cyclic part that starts at
	// InitEnd, or 0 when none was found. It is the smallest lag p (with at
	// least two cycles in the steady part, and p ≤ MaxPeriod) at which the labels match their
	// value p intervals later at least CycleMatch of the time, after the
	// match rate has first dropped below CycleMatch (so that long runs of
	// one phase are not mistaken for a cycle); a local maximum of the match
	// rate. A steady part of a single phase has period 1.
	Period int `json:"period"`
	// PeriodMatch is the fraction of steady intervals whose label equals
	// the label Period intervals later.
	PeriodMatch float64 `json:"period_match"`
	// Cycle is the sequence of phases (runs collapsed) in the first period
	// of the steady part.
	Cycle []int `json:"cycle,omitempty"`
	// Runs are the maximal stretches of one label, in execution order.
	Runs []Stretch `json:"runs"`
	// PhaseRuns lists, for each phase id that occurs, the indices into
	// Runs of its stretches: the intervals that belong to the phase.
	PhaseRuns map[int][]int `json:"phase_runs"`
}

// Stretch is a maximal stretch of intervals [Start, End) with one label.
type Stretch struct {
	Phase int `json:"phase"`
	Start int `json:"start"`
	End   int `json:"end"`
}

// CycleMatch is the label match rate at which a lag counts as a period.
const CycleMatch = 0.8

// MaxPeriod is the longest period FindHints looks for, which bounds its
// work to MaxPeriod passes over the labels.
const MaxPeriod = 4096

// FindHints computes the Hints of a label sequence (Result.Labels).
func FindHints(labels []int) Hints {
	// The runs are counted first, overall and per phase, so that Runs and
	// each phase's list are allocated once at their size: grown by append,
	// they held up to twice their size (and the copies as garbage) at the
	// end of a run on a large input, where the peak of memory is.
	if len(labels) == 0 {
		return Hints{PhaseRuns: map[int][]int{}}
	}
	perPhase := map[int]int{}
	nRuns := 0
	for i, l := range labels {
		if i == 0 || l != labels[i-1] {
			perPhase[l]++
			nRuns++
		}
	}
	h := Hints{PhaseRuns: make(map[int][]int, len(perPhase)), Runs: make([]Stretch, 0, nRuns)}
	for l, n := range perPhase {
		h.PhaseRuns[l] = make([]int, 0, n)
	}
	for i := 0; i < len(labels); {
		j := i + 1
		for j < len(labels) && labels[j] == labels[i] {
			j++
		}
		h.PhaseRuns[labels[i]] = append(h.PhaseRuns[labels[i]], len(h.Runs))
		h.Runs = append(h.Runs, Stretch{Phase: labels[i], Start: i, End: j})
		i = j
	}
	// Initialisation: runs whose phase has no later run.
	last := map[int]int{}
	for r, run := range h.Runs {
		last[run.Phase] = r
	}
	steady := len(h.Runs) - 1
	for r, run := range h.Runs {
		if last[run.Phase] > r {
			steady = r
			break
		}
	}
	h.InitEnd = h.Runs[steady].Start
	h.Period, h.PeriodMatch = period(labels[h.InitEnd:])
	if h.Period > 0 {
		for _, l := range labels[h.InitEnd : h.InitEnd+h.Period] {
			if len(h.Cycle) == 0 || h.Cycle[len(h.Cycle)-1] != l {
				h.Cycle = append(h.Cycle, l)
			}
		}
	}
	return h
}

// period finds the period of s as documented on Hints.Period.
func period(s []int) (int, float64) { return periodBy(s, matchRate) }

// periodBy is period with the match rate of two label sequences given by
// rate, which may return any value below CycleMatch in place of a rate
// below it.
func periodBy(s []int, rate func(a, b []int) float64) (int, float64) {
	m := len(s)
	if m == 0 {
		return 0, 0
	}
	constant := true
	for _, l := range s {
		constant = constant && l == s[0]
	}
	if constant {
		return 1, 1
	}
	match := func(p int) float64 { return rate(s[:m-p], s[p:]) }
	dropped := false
	prev := match(1)
	for p := 1; 2*p <= m && p <= MaxPeriod; p++ {
		cur := prev
		if cur < CycleMatch {
			dropped = true
		}
		next := 0.0
		if 2*(p+1) <= m && p+1 <= MaxPeriod {
			next = match(p + 1)
		}
		if dropped && cur >= CycleMatch && cur >= next {
			return p, cur
		}
		prev = next
	}
	return 0, 0
}

// matchRate returns the fraction of positions where a and b (of equal
// length) hold the same label when that fraction is at least CycleMatch.
// Otherwise it returns some value below CycleMatch: it stops counting as
// soon as the mismatches rule CycleMatch out, which is all period needs
// to know of such a lag, and what makes most lags cheap.
func matchRate(a, b []int) float64 {
	n := len(a)
	b = b[:n]
	// need is the fewest matches with need/n ≥ CycleMatch, found with the
	// same floating-point division the rate is given by.
	need := max(int(CycleMatch*float64(n))-1, 0)
	for float64(need)/float64(n) < CycleMatch {
		need++
	}
	const chunk = 2048
	miss := 0
	for lo := 0; lo < n; lo += chunk {
		hi := min(lo+chunk, n)
		x, y := a[lo:hi], b[lo:hi]
		y = y[:len(x)]
		for i, l := range x {
			if l != y[i] {
				miss++
			}
		}
		if n-miss < need {
			return float64(n-miss) / float64(n)
		}
	}
	return float64(n-miss) / float64(n)
}
