package phase

import (
	"context"
	"slices"
	"sync"
)

// pool runs the k-means trials of a search on the engine's workers, which
// live as long as the search. A worker takes the next trial of the
// evaluations the search waits for, the largest k first. When none is
// left and the search is a binary search, it runs instead a trial of the
// evaluation the search would ask for next if the evaluations in flight
// ended with the BICs of their trials ended so far (speculate): the last
// trials of a step would otherwise leave workers idle. A trial depends
// only on its k and seed (and in Compat mode on the evaluation's index in
// the search, which the guess includes), so a guessed evaluation that is
// asked for is used as it stands, and one that is not is cancelled and
// dropped; the result is the same whatever the number of workers.
type pool struct {
	mu       sync.Mutex
	cond     *sync.Cond    // a trial ended, work was queued, or the pool stopped
	inflight []*evaluation // asked for and not all ended, in search order
	guessed  *evaluation   // the speculative evaluation, or nil
	predict  bool          // whether to speculate (a binary search)
	stopped  bool
	ctx      context.Context
	done     sync.WaitGroup
	// How many guesses the search took over, and how many it dropped.
	taken, dropped int
}

// startPool starts the workers, which stop with stopPool.
func (e *engine) startPool(ctx context.Context) {
	e.pool = &pool{ctx: ctx}
	e.cond = sync.NewCond(&e.mu)
	for w := 0; w < e.workers; w++ {
		e.done.Add(1)
		go e.work()
	}
}

// stopPool cancels a speculative evaluation and waits for the workers to
// end.
func (e *engine) stopPool() {
	e.mu.Lock()
	e.stopped = true
	e.dropGuess()
	e.cond.Broadcast()
	e.mu.Unlock()
	e.done.Wait()
}

// newEvaluation returns the evaluation of k at index r of the search,
// with its trial seeds, to run under ctx.
func (e *engine) newEvaluation(ctx context.Context, k, r int) (*evaluation, error) {
	nt := e.opts.NumInitSeeds
	ev := &evaluation{k: k, r: r, trials: make([]*clustering, nt), seeds: make([]int64, nt), errs: make([]error, nt),
		guard: e.opts.Mode == Default}
	for t := range ev.seeds {
		s, err := e.trialSeed(r, t)
		if err != nil {
			return nil, err
		}
		ev.seeds[t] = s
	}
	ev.ctx, ev.cancel = context.WithCancel(ctx)
	return ev, nil
}

// enqueue hands the evaluations of ks, the next of the search, to the
// workers. An evaluation already guessed is taken over with the trials it
// has run.
func (e *engine) enqueue(ks []int) ([]*evaluation, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	first := len(e.runs)
	evs := make([]*evaluation, len(ks))
	for i, k := range ks {
		if g := e.guessed; g != nil && g.k == k && g.r == first+i {
			g.guess, e.guessed = false, nil
			e.taken++
			for _, cl := range g.trials {
				if cl != nil {
					e.trials++
					e.opts.Progress.report(StageClustering, e.trials, int64(e.maxRuns)*int64(len(g.trials)))
				}
			}
			evs[i] = g
			continue
		}
		ev, err := e.newEvaluation(e.ctx, k, first+i)
		if err != nil {
			return nil, err
		}
		evs[i] = ev
	}
	e.dropGuess() // a guess not taken over is wrong
	e.inflight = append(e.inflight, evs...)
	e.cond.Broadcast()
	return evs, nil
}

// dropGuess cancels and forgets the speculative evaluation (e.mu held).
func (e *engine) dropGuess() {
	if e.guessed != nil {
		e.guessed.cancel()
		e.guessed = nil
		e.dropped++
	}
}

// wait waits until every trial of evs has ended and returns the first
// error by evaluation and trial.
func (e *engine) wait(evs []*evaluation) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, ev := range evs {
		for ev.ended < len(ev.trials) {
			e.cond.Wait()
		}
	}
	e.inflight = slices.DeleteFunc(e.inflight, func(ev *evaluation) bool { return slices.Contains(evs, ev) })
	for _, ev := range evs {
		ev.cancel() // its trials have ended: this only releases the context
	}
	for _, ev := range evs {
		for _, err := range ev.errs {
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// work is a worker: it runs trials until the pool stops.
func (e *engine) work() {
	defer e.done.Done()
	e.mu.Lock()
	defer e.mu.Unlock()
	for {
		ev := e.nextTrial()
		if ev == nil {
			if e.stopped {
				return
			}
			e.cond.Wait()
			continue
		}
		t := ev.started
		ev.started++
		e.mu.Unlock()
		cl, err := e.trial(ev.ctx, ev.k, ev.seeds[t])
		e.mu.Lock()
		e.finish(ev, t, cl, err)
		e.cond.Broadcast()
	}
}

// nextTrial returns the evaluation whose next trial a worker should run,
// or nil (e.mu held): the in-flight evaluation of largest k (the earliest
// on ties) with a trial not yet started, else the speculative one.
func (e *engine) nextTrial() *evaluation {
	if e.stopped {
		return nil
	}
	var best *evaluation
	for _, ev := range e.inflight {
		if ev.started < len(ev.trials) && (best == nil || ev.k > best.k) {
			best = ev
		}
	}
	if best != nil {
		return best
	}
	g := e.speculate()
	if g != nil && g.started < len(g.trials) {
		return g
	}
	return nil
}

// speculate returns the evaluation the search would ask for next if the
// in-flight evaluations ended with the best BIC of their trials ended so
// far, creating it (and dropping an earlier, different guess) as needed;
// nil when there is nothing to guess from or the search would end (e.mu
// held).
func (e *engine) speculate() *evaluation {
	if !e.predict || len(e.inflight) == 0 {
		return nil
	}
	bics := make([]float64, 0, len(e.runs)+len(e.inflight))
	for _, ev := range e.runs {
		bics = append(bics, ev.bic())
	}
	for _, ev := range e.inflight {
		best, any := 0.0, false
		for _, cl := range ev.trials {
			if cl != nil && (!any || cl.bic > best) {
				best, any = cl.bic, true
			}
		}
		if !any {
			return nil
		}
		bics = append(bics, best)
	}
	ks := e.searchKs(bics)
	r := len(bics)
	if r >= len(ks) {
		return nil
	}
	if g := e.guessed; g != nil && g.k == ks[r] && g.r == r {
		return g
	}
	e.dropGuess()
	g, err := e.newEvaluation(e.ctx, ks[r], r)
	if err != nil {
		return nil // the search reports it when it gets there
	}
	g.guess = true
	e.guessed = g
	return g
}

// finish records trial t of ev (e.mu held). As trials end, each
// evaluation's scan advances over the prefix of its trials that have
// ended and drops the label hints of those that cannot be the best: only
// the best is scored again, and the hints of all the trials of several k
// would otherwise be held at once. A trial drops its own k-means state (3
// values per interval) when it is scored (see trial).
func (e *engine) finish(ev *evaluation, t int, cl *clustering, err error) {
	ev.ended++
	if err != nil {
		ev.errs[t] = err
		return
	}
	ev.trials[t] = cl
	if !ev.guess {
		e.trials++
		e.opts.Progress.report(StageClustering, e.trials, int64(e.maxRuns)*int64(len(ev.trials)))
	}
	for ev.scanned < len(ev.trials) && ev.trials[ev.scanned] != nil {
		if n := ev.scanned; n > 0 {
			if ev.trials[n].bic > ev.trials[ev.best].bic {
				ev.trials[ev.best].hint, ev.best = nil, n
			} else {
				ev.trials[n].hint = nil
			}
		}
		ev.scanned++
	}
}
