package phase

// ran2 is the random number generator of SimPoint 3.2: Numerical Recipes'
// ran2, L'Ecuyer's combined generator with a Bays-Durham shuffle, whose
// outputs are rounded to float32 (docs/simpoint-3.2.md §3). All integer
// arithmetic stays within 32 bits by Schrage's method.
type ran2 struct {
	state, state2, iy int64
	iv                [ran2NTab]int64
	broken            bool
}

const (
	ran2IM1  = 2147483563
	ran2IM2  = 2147483399
	ran2IA1  = 40014
	ran2IA2  = 40692
	ran2IQ1  = 53668
	ran2IQ2  = 52774
	ran2IR1  = 12211
	ran2IR2  = 3791
	ran2NTab = 32
	ran2NDiv = 1 + (ran2IM1-1)/ran2NTab
	ran2AM   = 1.0 / ran2IM1
	ran2EPS  = 1.2e-7
	ran2RNMX = 1.0 - ran2EPS
)

// newRan2 returns SimPoint's Random(seed). Seed 1 leaves the generator's
// table uninitialised in SimPoint (undefined behaviour); newRan2 marks the
// generator broken, and callers refuse that seed.
func newRan2(seed int64) *ran2 {
	r := &ran2{state2: 123456789}
	if seed > 1 {
		r.state = -seed
	} else {
		r.state = seed
	}
	r.broken = r.state > 0
	return r
}

// step advances a Schrage-method LCG.
func schrage(x, a, q, rr, m int64) int64 {
	k := x / q
	x = a*(x-k*q) - k*rr
	if x < 0 {
		x += m
	}
	return x
}

// float returns the next value in [0, 1), as a float32 like SimPoint's
// randFloat.
func (r *ran2) float() float32 {
	if r.state <= 0 {
		r.state = max(1, -r.state)
		r.state2 = r.state
		for j := ran2NTab + 7; j >= 0; j-- {
			r.state = schrage(r.state, ran2IA1, ran2IQ1, ran2IR1, ran2IM1)
			if j < ran2NTab {
				r.iv[j] = r.state
			}
		}
		r.iy = r.iv[0]
	}
	r.state = schrage(r.state, ran2IA1, ran2IQ1, ran2IR1, ran2IM1)
	r.state2 = schrage(r.state2, ran2IA2, ran2IQ2, ran2IR2, ran2IM2)
	j := r.iy / ran2NDiv
	r.iy = r.iv[j] - r.state2
	r.iv[j] = r.state
	if r.iy < 1 {
		r.iy += ran2IM1 - 1
	}
	t := float32(ran2AM * float64(r.iy))
	if float64(t) > ran2RNMX {
		return float32(ran2RNMX)
	}
	return t
}

// int returns SimPoint's randInt: int(randFloat() * INT_MAX) computed in
// float, where INT_MAX rounds to 2^31, so the product is exact.
func (r *ran2) int() int64 {
	return int64(r.float() * float32(1<<31))
}
