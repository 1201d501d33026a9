package phase

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"
	"testing"
)

// TestSpeculate checks the guess of the search's next step: none until
// every evaluation in flight has a trial ended; then the k that the
// binary search takes from the best BICs so far; a new guess, and the
// old one cancelled, when a later trial changes the best; and the guess
// taken over, trials and all, when the search asks for it.
func TestSpeculate(t *testing.T) {
	opts := DefaultOptions()
	opts.Mode, opts.MaxK = Default, 30
	e := &engine{opts: opts, pool: &pool{ctx: context.Background(), predict: true}}
	e.cond = sync.NewCond(&e.mu)
	var first []*evaluation
	for r, k := range []int{1, 30, 15} {
		ev, err := e.newEvaluation(e.ctx, k, r)
		if err != nil {
			t.Fatal(err)
		}
		first = append(first, ev)
	}
	e.inflight = first
	first[0].trials[0] = &clustering{bic: 100}
	first[1].trials[2] = &clustering{bic: 1000}
	if g := e.speculate(); g != nil {
		t.Fatalf("guessed k=%d before k=15 had a trial", g.k)
	}
	// BIC(15) = 950 is above the threshold 100 + 0.9·900 = 910: the
	// search halves downwards, to (15+1)/2.
	first[2].trials[1] = &clustering{bic: 950}
	g := e.speculate()
	if g == nil || g.k != 8 || g.r != 3 || !g.guess {
		t.Fatalf("guess %+v, want k=8 at r=3", g)
	}
	if again := e.speculate(); again != g {
		t.Fatal("the same information gave a new guess")
	}
	// A better trial of k=30 raises the threshold above 950: upwards.
	first[1].trials[0] = &clustering{bic: 1200}
	g2 := e.speculate()
	if g2 == nil || g2.k != 22 || g2.r != 3 {
		t.Fatalf("guess %+v, want k=22 at r=3", g2)
	}
	if g.ctx.Err() == nil || e.dropped != 1 {
		t.Fatalf("the wrong guess was not cancelled (dropped %d)", e.dropped)
	}
	// The search ends its first step with those BICs (the best trials:
	// 100, 1200 and 950) and asks for k=22.
	for i, ev := range first {
		ev.guard = false
		ev.best = []int{0, 0, 1}[i]
	}
	e.runs, e.inflight = first, nil
	g2.trials[0] = &clustering{bic: 1}
	g2.ended, g2.started = 1, 1
	evs, err := e.enqueue([]int{22})
	if err != nil {
		t.Fatal(err)
	}
	if evs[0] != g2 || g2.guess || e.taken != 1 || e.trials != 1 || e.guessed != nil {
		t.Fatalf("the guess was not taken over: %p vs %p, taken %d, trials %d", evs[0], g2, e.taken, e.trials)
	}
	// A guess the search does not ask for is dropped.
	e.runs, e.inflight = append(first, g2), nil
	if g3 := e.speculate(); g3 != nil {
		t.Fatalf("guessed k=%d with nothing in flight", g3.k)
	}
	e.guessed = &evaluation{k: 26, r: 4, guess: true, ctx: context.Background(), cancel: func() {}}
	evs, err = e.enqueue([]int{18})
	if err != nil {
		t.Fatal(err)
	}
	if evs[0].k != 18 || evs[0].guess || e.guessed != nil || e.dropped != 2 {
		t.Fatalf("enqueue k=18: got k=%d, guessed %v, dropped %d", evs[0].k, e.guessed, e.dropped)
	}
}

// TestSpeculationKeepsResults checks that running guessed steps of the
// k search on idle workers changes no result: with 1, 2 and 8 workers
// (8 leave three idle in every step of 5 trials), in both modes, the
// JSON results are identical, and the guesses were taken over at least
// once, so that the comparison covers them.
func TestSpeculationKeepsResults(t *testing.T) {
	f := loadBB(t, "bzip2_rt_100M.bb.gz")
	taken := 0
	for _, mode := range []Mode{Default, Compat} {
		var want []byte
		for _, workers := range []int{1, 2, 8} {
			opts := DefaultOptions()
			opts.Mode, opts.MaxK, opts.Workers = mode, 30, workers
			ds, err := load(context.Background(), f, &opts)
			if err != nil {
				t.Fatal(err)
			}
			res, err := cluster(context.Background(), ds, opts)
			if err != nil {
				t.Fatal(err)
			}
			js, err := json.Marshal(res)
			if err != nil {
				t.Fatal(err)
			}
			if want == nil {
				want = js
			} else if !bytes.Equal(js, want) {
				t.Fatalf("%v mode: the result with %d workers differs from the one with 1", mode, workers)
			}
			// cluster released the rows of ds: load them again.
			if ds, err = load(context.Background(), f, &opts); err != nil {
				t.Fatal(err)
			}
			e := &engine{ds: ds, opts: opts, workers: workers}
			e.opts.Tolerance, e.opts.MinPhaseSize = DefaultTolerance, DefaultMinPhaseSize
			if err := e.search(context.Background()); err != nil {
				t.Fatal(err)
			}
			taken += e.taken
			t.Logf("%v %d workers: taken %d dropped %d", mode, workers, e.taken, e.dropped)
		}
	}
	if taken == 0 {
		t.Fatal("no guess was ever taken over: the comparison does not cover speculation")
	}
}
