package mentropy

// Phase is a stretch of a process's events between two entropy rises
// (section 5 of the paper: a peak after repetition marks a new phase).
type Phase struct {
	// Start and End are the first and last event index of the phase.
	Start int `json:"start"`
	End   int `json:"end"`
	// T0 and T1 are their times (ns).
	T0 int64 `json:"t0_ns"`
	T1 int64 `json:"t1_ns"`
	// Dominant is the most frequent event of the phase (the earliest on a
	// tie) and Share its fraction of the phase's events.
	Dominant string  `json:"dominant"`
	Share    float64 `json:"share"`
}

// Phases segments a series: a phase starts at event 0 and at every event
// whose H rises above threshold after at least minLow consecutive events
// at or below it (minLow < 1 counts as 1).
func Phases(s *ProcSeries, threshold float64, minLow int) []Phase {
	minLow = max(minLow, 1)
	var out []Phase
	counts := make([]int, len(s.Alphabet.Names()))
	start, low := 0, 0
	emit := func(end int) {
		if end < start {
			return
		}
		clear(counts)
		best := s.Events[start]
		for _, e := range s.Events[start : end+1] {
			counts[e]++
			if counts[e] > counts[best] {
				best = e
			}
		}
		out = append(out, Phase{Start: start, End: end, T0: s.T[start], T1: s.T[end],
			Dominant: s.Alphabet.Names()[best], Share: float64(counts[best]) / float64(end+1-start)})
	}
	for i, st := range s.Steps {
		if st.H > threshold {
			if low >= minLow && i > start {
				emit(i - 1)
				start = i
			}
			low = 0
		} else {
			low++
		}
	}
	emit(len(s.Steps) - 1)
	return out
}
