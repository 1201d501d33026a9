package phase

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/parscope/parscope/format/bbv"
)

// synthetic returns a file whose intervals come from len(sizes) phases:
// interval i of phase p executes blocks 10p+1..10p+10 with counts drawn
// around a per-phase profile (noise is the relative spread). The phases
// follow each other in runs of runLen intervals. It also returns each
// interval's true phase.
func synthetic(sizes []int, runLen int, noise float64, seed uint64) (*bbv.File, []int) {
	rng := rand.New(rand.NewPCG(seed, 1))
	f := &bbv.File{Name: "synthetic"}
	var truth []int
	left := slices.Clone(sizes)
	for p := 0; ; p = (p + 1) % len(sizes) {
		if slices.Max(left) == 0 {
			break
		}
		for r := 0; r < runLen && left[p] > 0; r++ {
			v := bbv.Vector{}
			for b := 1; b <= 10; b++ {
				base := float64(1000 * (1 + (b*(p+3))%7))
				v.Blocks = append(v.Blocks, int32(10*p+b))
				v.Counts = append(v.Counts, math.Round(base*(1+noise*(rng.Float64()-0.5))))
			}
			f.Vectors = append(f.Vectors, v)
			f.Lines = append(f.Lines, len(f.Vectors))
			truth = append(truth, p)
			left[p]--
		}
	}
	f.Dim = int32(10 * len(sizes))
	return f, truth
}

// samePartition reports whether labels and truth group the intervals
// identically.
func samePartition(labels, truth []int) bool {
	m, back := map[int]int{}, map[int]int{}
	for i := range labels {
		if t, ok := m[labels[i]]; ok && t != truth[i] {
			return false
		}
		if l, ok := back[truth[i]]; ok && l != labels[i] {
			return false
		}
		m[labels[i]], back[truth[i]] = truth[i], labels[i]
	}
	return true
}

// checkPhases verifies the per-phase figures against the labels.
func checkPhases(t *testing.T, ds *dataset, res *Result) {
	t.Helper()
	total := 0.0
	for _, p := range res.Phases {
		total += p.Weight
		size, sq, w := 0, 0.0, 0.0
		best := -1
		for i, l := range res.Labels {
			if l != p.ID {
				continue
			}
			size++
			sq += ds.w[i] * res.Distances[i] * res.Distances[i]
			w += ds.w[i]
			if best < 0 || res.Distances[i] < res.Distances[best] {
				best = i
			}
		}
		if size != p.Size || best != p.Representative || res.Distances[best] != p.Distance {
			t.Errorf("phase %d: size %d rep %d dist %v; labels give %d, %d, %v", p.ID, p.Size, p.Representative, p.Distance, size, best, res.Distances[best])
		}
		if math.Abs(sq/w-p.Variance) > 1e-12*(1+p.Variance) {
			t.Errorf("phase %d: variance %v, labels give %v", p.ID, p.Variance, sq/w)
		}
		if len(p.Centre) != res.Dim {
			t.Errorf("phase %d: centre of %d dims", p.ID, len(p.Centre))
		}
	}
	if math.Abs(total-1) > 1e-12 {
		t.Errorf("weights sum to %v", total)
	}
}

func TestModesFindSyntheticPhases(t *testing.T) {
	f, truth := synthetic([]int{60, 40, 30, 20}, 7, 0.05, 1)
	for _, mode := range []Mode{Compat, Default} {
		opts := DefaultOptions()
		opts.Mode = mode
		opts.MaxK = 10
		res, err := Run(context.Background(), f, opts)
		if err != nil {
			t.Fatal(err)
		}
		if res.K != 4 || len(res.Phases) != 4 || !samePartition(res.Labels, truth) {
			t.Errorf("%v: k=%d, %d phases; want the 4 true phases", mode, res.K, len(res.Phases))
			continue
		}
		ds, _ := load(context.Background(), f, &opts)
		checkPhases(t, ds, res)
		for _, p := range res.Phases {
			want := map[int]float64{0: 60, 1: 40, 2: 30, 3: 20}[truth[p.Representative]] / 150
			if math.Abs(p.Weight-want) > 1e-12 {
				t.Errorf("%v: phase %d weight %v, want %v", mode, p.ID, p.Weight, want)
			}
		}
	}
}

// TestDefaultDeterministic checks that the number of goroutines does not
// change Default mode's output, and that its report is consistent.
func TestDefaultDeterministic(t *testing.T) {
	f := loadBB(t, "bzip2_rt_100M.bb.gz")
	var outs [][]byte
	var res *Result
	for _, workers := range []int{1, 3} {
		opts := DefaultOptions()
		opts.Mode = Default
		opts.Workers = workers
		opts.MaxK = 12
		var err error
		res, err = Run(context.Background(), f, opts)
		if err != nil {
			t.Fatal(err)
		}
		js, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, js)
	}
	for i := 1; i < len(outs); i++ {
		if !bytes.Equal(outs[0], outs[i]) {
			t.Fatal("Default mode output depends on the number of workers")
		}
	}
	var back Result
	if err := json.Unmarshal(outs[0], &back); err != nil {
		t.Fatal(err)
	}
	if js, _ := json.Marshal(&back); !bytes.Equal(js, outs[0]) {
		t.Error("the JSON result does not survive a round trip")
	}
	opts := DefaultOptions()
	ds, _ := load(context.Background(), f, &opts)
	checkPhases(t, ds, res)
	if res.Mode != "default" || len(res.Evaluated) != 6 {
		t.Errorf("mode %s, %d evaluations", res.Mode, len(res.Evaluated))
	}
	// A different seed gives a different clustering of k = 30.
	opts.Mode, opts.SeedKMeans, opts.MaxK = Default, 99, 12
	other, err := Run(context.Background(), f, opts)
	if err != nil {
		t.Fatal(err)
	}
	if other.Evaluated[1].BIC == res.Evaluated[1].BIC {
		t.Error("the seed does not matter")
	}
}

// TestDefaultBeatsCompatAtSameK compares the two modes where they can be
// compared: the best distortion reached for the same k on real data.
// k-means++ with re-seeding should not do worse than SimPoint's random
// sampling on most k.
func TestDefaultBeatsCompatAtSameK(t *testing.T) {
	f := loadBB(t, "phases.bb.gz")
	ks := []int{5, 10, 20, 30}
	best := func(mode Mode) []float64 {
		opts := DefaultOptions()
		opts.Mode, opts.K = mode, ks
		res, err := Run(context.Background(), f, opts)
		if err != nil {
			t.Fatal(err)
		}
		var out []float64
		for _, ev := range res.Evaluated {
			out = append(out, float64(ev.Trials[ev.BestTrial].Distortion))
		}
		return out
	}
	c, d := best(Compat), best(Default)
	better := 0
	for i := range ks {
		if d[i] <= c[i]*1.0001 {
			better++
		}
	}
	if better < 3 {
		t.Errorf("Default distortions %v vs Compat %v: better on only %d of %d k", d, c, better, len(ks))
	}
}

func TestEmptyClusters(t *testing.T) {
	// 12 intervals but only 3 distinct vectors: at k = 6 some clusters
	// must end up empty, in both modes.
	f := &bbv.File{Name: "dups", Dim: 3}
	for i := 0; i < 12; i++ {
		b := int32(i%3 + 1)
		f.Vectors = append(f.Vectors, bbv.Vector{Blocks: []int32{b}, Counts: []float64{100}})
	}
	for _, mode := range []Mode{Compat, Default} {
		opts := DefaultOptions()
		opts.Mode, opts.K = mode, []int{6}
		res, err := Run(context.Background(), f, opts)
		if err != nil {
			t.Fatal(err)
		}
		if res.K != 6 || len(res.Phases) != 3 {
			t.Fatalf("%v: k=%d with %d phases, want 6 with 3", mode, res.K, len(res.Phases))
		}
		for _, p := range res.Phases {
			if p.Size != 4 || p.Distance > 1e-12 || math.Abs(p.Weight-1.0/3) > 1e-15 {
				t.Errorf("%v: phase %+v", mode, p)
			}
		}
		if _, err := json.Marshal(res); err != nil {
			t.Errorf("%v: %v", mode, err)
		}
	}
}

func TestScoreJSON(t *testing.T) {
	in := []Score{1.5, Score(math.Inf(1)), Score(math.Inf(-1)), Score(math.NaN()), -2}
	js, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if string(js) != `[1.5,"+Inf","-Inf","NaN",-2]` {
		t.Fatalf("got %s", js)
	}
	var out []Score
	if err := json.Unmarshal(js, &out); err != nil {
		t.Fatal(err)
	}
	if out[0] != 1.5 || !math.IsInf(float64(out[1]), 1) || !math.IsInf(float64(out[2]), -1) || !math.IsNaN(float64(out[3])) || out[4] != -2 {
		t.Fatalf("round trip gave %v", out)
	}
}

// TestGuardTransitions adds six transition intervals (half one phase,
// half the next) to four synthetic phases. Without the guard Default mode
// gives some of them phases of their own, and chooses a larger k for it;
// with it every phase holds at least two intervals, and the four program
// phases stay whole and unmixed.
func TestGuardTransitions(t *testing.T) {
	f, truth := synthetic([]int{60, 40, 30, 20}, 7, 0.05, 1)
	rng := rand.New(rand.NewPCG(3, 3))
	for j := 0; j < 6; j++ {
		p, q := j%4, (j+1)%4
		share := 0.3 + 0.4*rng.Float64()
		v := bbv.Vector{}
		for b := 1; b <= 10; b++ {
			v.Blocks = append(v.Blocks, int32(10*p+b))
			v.Counts = append(v.Counts, math.Round(1000*share))
		}
		for b := 1; b <= 10; b++ {
			v.Blocks = append(v.Blocks, int32(10*q+b))
			v.Counts = append(v.Counts, math.Round(1000*(1-share)))
		}
		f.Vectors = append(f.Vectors, v)
	}
	f.Lines = nil
	run := func(minSize int) *Result {
		opts := DefaultOptions()
		opts.Mode, opts.MaxK, opts.MinPhaseSize = Default, 12, minSize
		res, err := Run(context.Background(), f, opts)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	smallest := func(res *Result) int {
		m := res.Intervals
		for _, p := range res.Phases {
			m = min(m, p.Size)
		}
		return m
	}
	off, on := run(1), run(0)
	if smallest(off) != 1 || off.K <= on.K {
		t.Errorf("without the guard: k=%d, smallest phase %d; want one-interval phases and k > %d", off.K, smallest(off), on.K)
	}
	if smallest(on) < DefaultMinPhaseSize {
		t.Errorf("with the guard: a phase of %d intervals", smallest(on))
	}
	// The 150 program-phase intervals: each phase in one cluster of its own.
	if !samePartition(on.Labels[:len(truth)], truth) {
		t.Errorf("with the guard (k=%d) the program phases are split or mixed", on.K)
	}
	for _, l := range on.Labels[len(truth):] {
		for i, m := range on.Labels[:len(truth)] {
			if l == m {
				t.Fatalf("transition interval labelled %d, as program-phase interval %d", l, i)
			}
		}
	}
}

// TestBelow32 checks that below32 returns the largest float32 not above
// its argument, so that Hartigan's bounds kept in float32 stay lower
// bounds.
func TestBelow32(t *testing.T) {
	up := float32(math.Inf(1))
	for _, x := range []float64{0, 1, 0.1, -0.1, 1.0 / 3, -2.0 / 3, 1e-40, 3.4e38, 3.5e38, math.MaxFloat64, -1e300, math.Inf(1), math.Inf(-1), 123456789.123} {
		f := below32(x)
		if float64(f) > x {
			t.Errorf("below32(%v) = %v, above it", x, f)
		}
		if next := math.Nextafter32(f, up); float64(next) <= x && !math.IsInf(x, 1) {
			t.Errorf("below32(%v) = %v, but %v is not above it either", x, f, next)
		}
	}
}

// TestTrialKeepsLabelsOnly checks that a Default-mode trial drops its
// k-means state once scored, keeping only its labels as a hint, and that
// the phase-size guard's score is the same with the hint as without it.
func TestTrialKeepsLabelsOnly(t *testing.T) {
	f := loadBB(t, "phases.bb.gz")
	opts := DefaultOptions()
	opts.Mode = Default
	opts.MinPhaseSize = 50 // several small phases to dissolve at k = 20
	ds, err := load(context.Background(), f, &opts)
	if err != nil {
		t.Fatal(err)
	}
	e := &engine{ds: ds, opts: opts, workers: 1}
	cl, err := e.trial(context.Background(), 20, 7)
	if err != nil {
		t.Fatal(err)
	}
	if cl.state != nil || len(cl.hint) != ds.n {
		t.Fatalf("trial kept state %v and %d labels; want no state and %d labels", cl.state != nil, len(cl.hint), ds.n)
	}
	again, err := modernKMeans(context.Background(), ds, 20, 7, opts.Iters, DefaultTolerance)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range again.state.labels {
		if int(cl.hint[i]) != c {
			t.Fatalf("hint of interval %d is %d, the run's label %d", i, cl.hint[i], c)
		}
	}
	withHint, _ := guardedScore(ds, cl, opts.MinPhaseSize)
	hint := cl.hint
	cl.hint = nil
	without, _ := guardedScore(ds, cl, opts.MinPhaseSize)
	cl.hint = hint
	if withHint != without || withHint == cl.bic {
		t.Errorf("guarded BIC %v with the hint, %v without, %v unguarded; want the first two equal and unlike the last", withHint, without, cl.bic)
	}
}

// TestNearestTwoFromCutShort puts a centre of lower index after two
// centres tied at x's distance, its distance over the first four
// dimensions equal to theirs: a sum cut short there would tie, and win by
// its index, though its whole distance is larger.
func TestNearestTwoFromCutShort(t *testing.T) {
	const d, k = 5, 3
	x := make([]float64, d)
	centres := []float64{
		0, 0, -1, 0, 0.5, // 0: 1 over four dimensions, 1.25 in all
		1, 0, 0, 0, 0, // 1: x's centre, at 1
		0, -1, 0, 0, 0, // 2: at 1, a tie
	}
	cc := make([]float64, k*k)
	for a := 0; a < k; a++ {
		for c := 0; c < k; c++ {
			cc[a*k+c] = math.Sqrt(sqDist(centres[a*d:(a+1)*d], centres[c*d:(c+1)*d]))
		}
	}
	byCC := make([]int32, k*k)
	sortByDistance(byCC, cc, k)
	if got := byCC[k : 2*k]; got[1] != 2 || got[2] != 0 {
		t.Fatalf("from centre 1 the order is %v, want [1 2 0]", got)
	}
	best, d1, d2 := nearestTwoFrom(x, centres, 1, 1, cc[k:2*k], byCC[k:2*k])
	if best != 1 || d1 != 1 || d2 != 1 {
		t.Errorf("nearest %d at %v, second %v; want 1 at 1, second 1", best, d1, d2)
	}
}

// TestNearestTwoFrom checks nearestTwoFrom against a search of every
// centre, from every centre as the start a: the same nearest centre (the
// lowest on ties, with duplicated centres and an empty cluster's centre
// at +Inf among them) and distance, and a second value never above the
// second smallest squared distance and equal to the one the triangle
// inequality and the measured distances give.
func TestNearestTwoFrom(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const d, k = 5, 9
	for trial := 0; trial < 300; trial++ {
		centres := make([]float64, k*d)
		for i := range centres {
			centres[i] = float64(rng.IntN(7)) // small integers: ties and duplicates
		}
		copy(centres[2*d:3*d], centres[6*d:7*d])
		fillInf(centres[4*d : 5*d])
		x := make([]float64, d)
		for i := range x {
			x[i] = float64(rng.IntN(7)) + 0.5*float64(rng.IntN(2))
		}
		if trial%3 == 0 {
			// x halfway between centres 1 and 8: from 8, centre 1 is
			// exactly twice as far as x is, and as near to x as 8.
			for i := range x {
				x[i] = (centres[1*d+i] + centres[8*d+i]) / 2
			}
		}
		exact := make([]float64, k)
		for c := range exact {
			exact[c] = sqDist(x, centres[c*d:(c+1)*d])
		}
		best := 0
		for c := range exact {
			if exact[c] < exact[best] {
				best = c
			}
		}
		second := math.Inf(1)
		for c := range exact {
			if c != best {
				second = min(second, exact[c])
			}
		}
		cc := make([]float64, k*k)
		for a := 0; a < k; a++ {
			for c := 0; c < k; c++ {
				cc[a*k+c] = math.Sqrt(sqDist(centres[a*d:(a+1)*d], centres[c*d:(c+1)*d]))
				if a == 4 || c == 4 {
					cc[a*k+c] = math.Inf(1)
				}
			}
		}
		byCC := make([]int32, k*k)
		sortByDistance(byCC, cc, k)
		for a := 0; a < k; a++ {
			if a == 4 {
				continue // no interval belongs to an empty cluster
			}
			got, d1, d2 := nearestTwoFrom(x, centres, a, exact[a], cc[a*k:(a+1)*k], byCC[a*k:(a+1)*k])
			if got != best || d1 != exact[best] || d2 > second {
				t.Fatalf("trial %d from %d: nearest %d at %v, second ≥ %v; want %d at %v, second %v", trial, a, got, d1, d2, best, exact[best], second)
			}
			// The bound is exactly the second smallest distance of the
			// centres within twice a's distance, or the bound of the
			// nearest beyond, whatever order they were measured in: the
			// clusterings do not depend on byCC's order among ties.
			u := math.Sqrt(exact[a])
			want, skipped := math.Inf(1), math.Inf(1)
			for c := range exact {
				switch {
				case c == best:
				case c != a && cc[a*k+c] > 2*u*(1+1e-9):
					skipped = min(skipped, (cc[a*k+c]-u)*(1-1e-9))
				default:
					want = min(want, exact[c])
				}
			}
			if want = min(want, skipped*skipped); d2 != want {
				t.Fatalf("trial %d from %d: second bound %v, want %v", trial, a, d2, want)
			}
		}
	}
}
