package phase

import (
	"context"
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"slices"
	"sync"

	"github.com/parscope/parscope/format/bbv"
)

// Run finds the phases of the intervals of f. It normalises and projects
// the vectors, clusters them for the k of opts.K (or a binary search over
// 1..opts.MaxK), chooses k by the BIC threshold rule and describes the
// chosen clustering's phases. The same input and options give the same
// result, whatever opts.Workers.
func Run(ctx context.Context, f *bbv.File, opts Options) (*Result, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	ds, err := load(ctx, f, &opts)
	if err != nil {
		return nil, err
	}
	return cluster(ctx, ds, opts)
}

// cluster runs the search of Run over the loaded intervals ds.
func cluster(ctx context.Context, ds *dataset, opts Options) (*Result, error) {
	if opts.Tolerance == 0 {
		opts.Tolerance = DefaultTolerance
	}
	if opts.MinPhaseSize == 0 {
		opts.MinPhaseSize = DefaultMinPhaseSize
	}
	kmax := opts.MaxK
	for _, k := range opts.K {
		kmax = max(kmax, k)
	}
	if int64(kmax)*int64(ds.d) > maxDenseElements {
		return nil, fmt.Errorf("phase: k = %d centres of %d dimensions are too many", kmax, ds.d)
	}
	e := &engine{ds: ds, opts: opts, workers: opts.Workers}
	if e.workers == 0 {
		e.workers = runtime.GOMAXPROCS(0)
	}
	if err := e.search(ctx); err != nil {
		return nil, err
	}
	if err := e.refineChosen(ctx); err != nil {
		return nil, err
	}
	res := e.result()
	// The rows are not read past the labels: the collector may take them
	// before the hints, which need memory of their own, are found. On a
	// large input the rows are most of what is live, and the end of the
	// run was where the memory peaked (docs/performance.md).
	ds.releaseRows()
	res.Hints = FindHints(res.Labels)
	return res, nil
}

// engine holds one Run's state.
type engine struct {
	ds      *dataset
	opts    Options
	workers int
	runs    []*evaluation
	maxRuns int
	trials  int64 // k-means trials ended, for Options.Progress
	*pool         // during search
}

// evaluation is the clustering of one k: all its trials and the best.
type evaluation struct {
	k       int
	trials  []*clustering
	seeds   []int64
	best    int
	guard   bool    // Default mode: the k rule uses guarded
	guarded float64 // the best trial's BIC under the phase-size guard

	// The pool's bookkeeping, under engine.mu.
	r       int // the evaluation's index in the search
	started int // trials handed to a worker, in order
	ended   int
	errs    []error
	scanned int  // trials scanned for the best so far (see finish)
	guess   bool // a speculative evaluation not yet asked for
	ctx     context.Context
	cancel  context.CancelFunc
}

// bic is the score the k search and the k rule use: the best trial's
// BIC, or in Default mode its BIC under the phase-size guard (see
// guardedScore).
func (ev *evaluation) bic() float64 {
	if ev.guard {
		return ev.guarded
	}
	return ev.trials[ev.best].bic
}

// search evaluates the k of the list, or runs SimPoint's binary search
// (docs/simpoint-3.2.md §4.5). While the trials of one step run, a worker
// that would idle runs the trials of the step that the trials ended so
// far predict comes next (see speculate): a trial depends only on its k
// and seed, so this changes when the work is done, never its result.
func (e *engine) search(ctx context.Context) error {
	e.startPool(ctx)
	defer e.stopPool()
	if len(e.opts.K) > 0 {
		e.maxRuns = len(e.opts.K)
		return e.evaluate(e.opts.K)
	}
	e.maxRuns = bits.Len(uint(e.opts.MaxK)) - 1 + 3
	e.mu.Lock()
	e.predict = true
	e.mu.Unlock()
	// The first three k do not depend on any result: cluster them together.
	ks := e.searchKs(nil)
	if err := e.evaluate(ks[:min(3, e.opts.MaxK)]); err != nil {
		return err
	}
	for {
		bics := make([]float64, len(e.runs))
		for r, ev := range e.runs {
			bics[r] = ev.bic()
		}
		ks := e.searchKs(bics)
		if len(ks) <= len(e.runs) {
			return nil
		}
		if err := e.evaluate(ks[len(e.runs) : len(e.runs)+1]); err != nil {
			return err
		}
	}
}

// searchKs returns the k the binary search evaluates, in order, as far as
// the BICs of the first evaluations, bics, decide them: the search's
// first three k, then after evaluation r ≥ 2 the half of the range that
// the threshold rule points to, while it holds more than one k. An entry
// at index len(bics) or beyond is the next k to evaluate.
func (e *engine) searchKs(bics []float64) []int {
	maxK := e.opts.MaxK
	ks := []int{1, maxK, (maxK + 1) / 2}
	kmin, kmax := 1, maxK
	maxIdx, minIdx := 0, 0
	for r, b := range bics {
		if r >= len(ks) {
			break
		}
		k := ks[r]
		if b > bics[maxIdx] {
			maxIdx = r
		}
		if b < bics[minIdx] {
			minIdx = r
		}
		lo, hi := bics[minIdx], bics[maxIdx]
		thr := lo + (hi-lo)*e.opts.BICThreshold
		if r >= 2 {
			upper := maxIdx > minIdx && b < thr
			var next int
			if upper {
				next = (k + kmax) / 2
				kmin = k
			} else {
				next = (k + kmin) / 2
				kmax = k
			}
			if kmax-kmin > 1 {
				ks = append(ks, next)
			}
		}
	}
	return ks
}

// trialSeed returns the seed of trial t of the r-th evaluation. Compat
// mode follows SimPoint's schedule, SeedKMeans + r·NumInitSeeds + 2t.
// Default mode uses SeedKMeans + t whatever r, with k choosing the PCG
// stream, so a k gets the same clustering however the search reached it.
func (e *engine) trialSeed(r, t int) (int64, error) {
	if e.opts.Mode == Default {
		return e.opts.SeedKMeans + int64(t), nil
	}
	s := e.opts.SeedKMeans + int64(r)*int64(e.opts.NumInitSeeds) + 2*int64(t)
	{
		if s < math.MinInt32 || s > math.MaxInt32 {
			return 0, fmt.Errorf("phase: the seed of trial %d of run %d, %d, overflows a 32-bit int; choose a smaller SeedKMeans", t+1, r+1, s)
		}
		if s == 1 {
			return 0, fmt.Errorf("phase: trial %d of run %d: %w", t+1, r+1, errBrokenSeed("k-means seed", s))
		}
	}
	return s, nil
}

// evaluate clusters the data for each k of ks, the next evaluations of
// the search, NumInitSeeds times each, on the engine's workers (see
// pool.go), the largest k first. For each k it keeps the trial with the
// best BIC (the earliest on ties); in Default mode it also scores that
// trial under the phase-size guard (refineChosen runs the chosen k's best
// trial again for its k-means state).
func (e *engine) evaluate(ks []int) error {
	evs, err := e.enqueue(ks)
	if err != nil {
		return err
	}
	if err := e.wait(evs); err != nil {
		return err
	}
	for _, ev := range evs {
		ev.pickBest()
	}
	if e.opts.Mode == Default {
		err := e.parallel(len(evs), func(i int) error {
			ev := evs[i]
			ev.guarded, _ = guardedScore(e.ds, ev.trials[ev.best], e.opts.MinPhaseSize)
			// The guarded score was the hint's last use.
			for _, cl := range ev.trials {
				cl.hint = nil
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	e.mu.Lock()
	e.runs = append(e.runs, evs...)
	e.mu.Unlock()
	return nil
}

// pickBest keeps the trial with the best BIC, the earliest on ties.
func (ev *evaluation) pickBest() {
	ev.best = 0
	for t := 1; t < len(ev.trials); t++ {
		if ev.trials[t].bic > ev.trials[ev.best].bic {
			ev.best = t
		}
	}
}

// parallel calls f(0), …, f(n−1) on up to e.workers goroutines, in that
// order of start, and returns the first error by index.
func (e *engine) parallel(n int, f func(i int) error) error {
	errs := make([]error, n)
	next := make(chan int, n)
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	var wg sync.WaitGroup
	for w := 0; w < min(e.workers, n); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				errs[i] = f(i)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// trial runs one initialisation and k-means, and scores the result.
func (e *engine) trial(ctx context.Context, k int, seed int64) (*clustering, error) {
	var cl *clustering
	var err error
	if e.opts.Mode == Compat {
		centres := compatInit(e.ds, k, seed, e.opts.Init)
		weights := initWeights(e.ds, centres, k)
		cl, err = compatLloyd(ctx, e.ds, k, centres, weights, e.opts.Iters)
		if cl != nil {
			cl.initCentres, cl.initWeights = centres, weights
		}
	} else {
		cl, err = modernKMeans(ctx, e.ds, k, seed, e.opts.Iters, e.opts.Tolerance)
	}
	if err != nil {
		return nil, err
	}
	cl.bic, cl.distortion = score(e.ds, cl)
	if m := cl.state; m != nil {
		// Only the best trial of each k is scored again, under the
		// phase-size guard, and refineChosen runs the chosen one again
		// for its state: its labels are all that is worth keeping.
		cl.hint = make([]int32, len(m.labels))
		for i, c := range m.labels {
			cl.hint[i] = int32(c)
		}
		cl.state = nil
	}
	return cl, nil
}

// refineChosen refines the best clustering of the chosen k (Default
// mode; see refine) and keeps the refinement when neither its BIC nor
// its guarded BIC is lower, so that the choice of k stands.
func (e *engine) refineChosen(ctx context.Context) error {
	ev := e.runs[e.chosen()]
	cl := ev.trials[ev.best]
	if e.opts.Mode == Default && cl.converged && cl.state == nil {
		// The k-means state trial dropped: the run depends only on its
		// arguments, so running it again gives that state.
		again, err := modernKMeans(ctx, e.ds, ev.k, ev.seeds[ev.best], e.opts.Iters, e.opts.Tolerance)
		if err != nil {
			return err
		}
		cl.state = again.state
	}
	if cl.state != nil {
		r, err := refine(ctx, cl)
		if err != nil {
			return err
		}
		if r != cl {
			r.bic, r.distortion = score(e.ds, r)
			guarded, _ := guardedScore(e.ds, r, e.opts.MinPhaseSize)
			if r.bic >= cl.bic && guarded >= ev.guarded {
				ev.trials[ev.best], ev.guarded = r, guarded
			}
		}
	}
	for _, ev := range e.runs {
		for _, cl := range ev.trials {
			cl.state, cl.hint = nil, nil
		}
	}
	return nil
}

// chosen returns the index of the evaluation SimPoint would pick: among
// those whose BIC is at least min + threshold·(max − min), the one with
// the smallest k, the earliest on ties.
func (e *engine) chosen() int {
	lo, hi := e.runs[0].bic(), e.runs[0].bic()
	for _, ev := range e.runs[1:] {
		lo = min(lo, ev.bic())
		hi = max(hi, ev.bic())
	}
	thr := lo + (hi-lo)*e.opts.BICThreshold
	best := -1
	for r, ev := range e.runs {
		if ev.bic() >= thr && (best < 0 || ev.k < e.runs[best].k) {
			best = r
		}
	}
	if best < 0 {
		best = 0
	}
	return best
}

// result describes the chosen clustering, all but its Hints (see
// cluster).
func (e *engine) result() *Result {
	ds := e.ds
	res := &Result{
		Mode:       e.opts.Mode.String(),
		Intervals:  ds.n,
		InputDim:   ds.inDim,
		Dim:        ds.d,
		Projected:  ds.project,
		MaxRuns:    e.maxRuns,
		Threshold:  e.opts.BICThreshold,
		Evaluated:  make([]Evaluation, len(e.runs)),
		Labels:     make([]int, ds.n),
		Distances:  make([]float64, ds.n),
		VLIWeights: e.opts.VariableLength,
	}
	for r, ev := range e.runs {
		out := Evaluation{K: ev.k, BestTrial: ev.best, BIC: Score(ev.trials[ev.best].bic), Trials: make([]Trial, len(ev.trials))}
		if ev.guard {
			g := Score(ev.guarded)
			out.GuardedBIC = &g
		}
		for t, cl := range ev.trials {
			out.Trials[t] = Trial{Seed: ev.seeds[t], Iterations: cl.iterations, Converged: cl.converged,
				BIC: Score(cl.bic), Distortion: Score(cl.distortion)}
		}
		res.Evaluated[r] = out
	}
	res.Chosen = e.chosen()
	ev := e.runs[res.Chosen]
	cl := ev.trials[ev.best]
	res.K = cl.k

	// Labels and distances on every row, from the chosen centres.
	k, d := cl.k, ds.d
	size := make([]int, k)
	sqSum := make([]float64, k)
	wSum := make([]float64, k)
	rep := make([]int, k)
	for c := range rep {
		rep[c] = -1
	}
	scratch := make([]float64, k)
	for i := 0; i < ds.n; i++ {
		c, dd := nearestScratch(ds.row(i), cl.centres, k, -1, scratch)
		res.Labels[i] = c
		res.Distances[i] = math.Sqrt(dd)
		size[c]++
		sqSum[c] += float64(ds.w[i] * dd)
		wSum[c] += ds.w[i]
		if rep[c] < 0 || res.Distances[i] < res.Distances[rep[c]] {
			rep[c] = i
		}
	}
	phase := func(c int, total float64) Phase {
		p := Phase{ID: c, Weight: cl.weights[c] / total, Representative: rep[c], Size: size[c],
			Centre: slices.Clone(cl.centres[c*d : (c+1)*d])}
		if rep[c] >= 0 {
			p.Distance = res.Distances[rep[c]]
		}
		if wSum[c] > 0 {
			p.Variance = sqSum[c] / wSum[c]
		}
		return p
	}
	res.Phases = selectPhases(cl.weights, 1, phase)
	if e.opts.CoveragePct < 1 {
		res.Coverage = &Coverage{Pct: e.opts.CoveragePct, Phases: selectPhases(cl.weights, e.opts.CoveragePct, phase)}
	}
	return res
}

// selectPhases implements SimPoint's getLargestClusters: clusters sorted
// by weight (descending, the higher id first on ties) are taken while
// their cumulative weight is below pct and their weight is positive. The
// phases are returned in ascending cluster id, with weights renormalised
// over the selection.
func selectPhases(weights []float64, pct float64, phase func(c int, total float64) Phase) []Phase {
	order := make([]int, len(weights))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case weights[a] > weights[b]:
			return -1
		case weights[a] < weights[b]:
			return 1
		}
		return b - a
	})
	var kept []int
	cum := 0.0
	for _, c := range order {
		if !(cum < pct && weights[c] > 0) {
			break
		}
		kept = append(kept, c)
		cum += weights[c]
	}
	total := 0.0
	for _, c := range kept {
		total += weights[c]
	}
	slices.Sort(kept)
	out := make([]Phase, len(kept))
	for i, c := range kept {
		out[i] = phase(c, total)
	}
	return out
}
