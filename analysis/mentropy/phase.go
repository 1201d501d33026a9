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
	ph := newPhaser(threshold, minLow, s.Alphabet.Names())
	for i, st := range s.Steps {
		ph.add(i, s.Events[i], s.T[i], st.H)
	}
	return ph.end()
}

// phaser segments a series event by event, as Phases does, keeping only
// the counts of the current phase's events.
type phaser struct {
	threshold float64
	minLow    int
	names     []string
	counts    []int
	start     int // first event of the current phase
	low       int // events at or below the threshold since the last rise
	n         int // events added
	best      int32
	t0, tLast int64
	out       []Phase
}

// newPhaser returns a phaser for events named by names (the alphabet).
func newPhaser(threshold float64, minLow int, names []string) *phaser {
	return &phaser{threshold: threshold, minLow: max(minLow, 1), names: names, counts: make([]int, len(names))}
}

// add adds event i (of id ev, at time t, of entropy h); i counts from 0
// without gaps.
func (p *phaser) add(i int, ev int32, t int64, h float64) {
	if h > p.threshold {
		if p.low >= p.minLow && i > p.start {
			p.emit()
			p.start = i
		}
		p.low = 0
	} else {
		p.low++
	}
	if i == p.start {
		clear(p.counts)
		p.best, p.t0 = ev, t
	}
	p.counts[ev]++
	if p.counts[ev] > p.counts[p.best] {
		p.best = ev
	}
	p.tLast, p.n = t, i+1
}

// emit ends the current phase at the last event added.
func (p *phaser) emit() {
	end := p.n - 1
	if end < p.start {
		return
	}
	p.out = append(p.out, Phase{Start: p.start, End: end, T0: p.t0, T1: p.tLast,
		Dominant: p.names[p.best], Share: float64(p.counts[p.best]) / float64(end+1-p.start)})
}

// end ends the last phase and returns the phases.
func (p *phaser) end() []Phase {
	p.emit()
	return p.out
}
