package phase

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/parscope/parscope/format/bbv"
)

func TestParseKList(t *testing.T) {
	for in, want := range map[string][]int{
		"search":      nil,
		"5":           {5},
		"1:4":         {1, 2, 3, 4},
		"4:1":         {4, 3, 2, 1},
		"2:3:11":      {2, 5, 8, 11},
		"30:5:1":      {30, 25, 20, 15, 10, 5},
		"30:-5:1":     {30, 25, 20, 15, 10, 5},
		"3, 1:2 ,7:7": {3, 1, 2, 7},
	} {
		got, err := ParseKList(in)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("ParseKList(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "1:0", "a", "1:2:3:4", "1:0:5", "1:-1:5", "5,,6", "1:2000000000"} {
		if got, err := ParseKList(in); err == nil {
			t.Errorf("ParseKList(%q) = %v, want an error", in, got)
		}
	}
}

func TestOptionsValidate(t *testing.T) {
	f, _ := synthetic([]int{5, 5}, 5, 0.1, 1)
	if _, err := Run(context.Background(), f, Options{}); err == nil || !strings.Contains(err.Error(), "MaxK is 0") {
		t.Errorf("zero options: %v", err)
	}
	for name, mutate := range map[string]func(*Options){
		"Dim":          func(o *Options) { o.Dim = 0 },
		"NumInitSeeds": func(o *Options) { o.NumInitSeeds = 0 },
		"Iters":        func(o *Options) { o.Iters = -2 },
		"CoveragePct":  func(o *Options) { o.CoveragePct = 1.5 },
		"BICThreshold": func(o *Options) { o.BICThreshold = math.NaN() },
		"k = 0":        func(o *Options) { o.K = []int{3, 0} },
		"seeds":        func(o *Options) { o.SeedProj = 1 << 40 },
		"Workers":      func(o *Options) { o.Workers = -1 },
		"Tolerance":    func(o *Options) { o.Tolerance = -1 },
		"MinPhaseSize": func(o *Options) { o.MinPhaseSize = -1 },
	} {
		o := DefaultOptions()
		mutate(&o)
		if _, err := Run(context.Background(), f, o); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: got %v", name, err)
		}
	}
}

func TestInputErrors(t *testing.T) {
	opts := DefaultOptions()
	for _, tc := range []struct {
		f    *bbv.File
		want string
	}{
		{nil, "no intervals"},
		{&bbv.File{Name: "e"}, "no intervals"},
		{&bbv.File{Name: "z.bb", Dim: 2, Lines: []int{7}, Vectors: []bbv.Vector{{Blocks: []int32{1}, Counts: []float64{0}}}}, "z.bb:7: interval 0: total count is 0"},
		{&bbv.File{Name: "b", Dim: 2, Vectors: []bbv.Vector{{Blocks: []int32{3}, Counts: []float64{1}}}}, "block id 3 outside 1..2"},
		{&bbv.File{Name: "n", Dim: 2, Vectors: []bbv.Vector{{Blocks: []int32{1, 2}, Counts: []float64{5, -1}}}}, "block 2 has count -1"},
		{&bbv.File{Name: "m", Dim: 2, Vectors: []bbv.Vector{{Blocks: []int32{1, 2}, Counts: []float64{5}}}}, "2 blocks but 1 counts"},
	} {
		_, err := Run(context.Background(), tc.f, opts)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("got %v, want %q", err, tc.want)
		}
	}
}

func TestBrokenSeeds(t *testing.T) {
	f, _ := synthetic([]int{5, 5}, 5, 0.1, 1)
	opts := DefaultOptions()
	opts.SeedProj = 1
	if _, err := Run(context.Background(), f, opts); err == nil || !strings.Contains(err.Error(), "projection seed 1") {
		t.Errorf("seedproj 1: %v", err)
	}
	// -seedkm -3: trial 3 of run 1 would use -3 + 0 + 2·2 = 1.
	opts = DefaultOptions()
	opts.SeedKMeans = -3
	if _, err := Run(context.Background(), f, opts); err == nil || !strings.Contains(err.Error(), "trial 3 of run 1") {
		t.Errorf("seedkm -3: %v", err)
	}
	// Default mode does not use ran2 for k-means, so any seed is fine.
	opts.Mode = Default
	if _, err := Run(context.Background(), f, opts); err != nil {
		t.Errorf("default mode, seedkm -3: %v", err)
	}
	opts = DefaultOptions()
	opts.SeedKMeans = math.MaxInt32 - 3
	if _, err := Run(context.Background(), f, opts); err == nil || !strings.Contains(err.Error(), "overflows") {
		t.Errorf("seedkm near INT_MAX: %v", err)
	}
}

func TestCancel(t *testing.T) {
	f := loadBB(t, "phases.bb.gz")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, f, DefaultOptions()); !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
}

func outputs(t *testing.T, res *Result) string {
	t.Helper()
	var b bytes.Buffer
	for _, w := range []func(*bytes.Buffer) error{
		func(b *bytes.Buffer) error { return res.WriteSimpoints(b) },
		func(b *bytes.Buffer) error { return res.WriteWeights(b) },
		func(b *bytes.Buffer) error { return res.WriteLabels(b) },
	} {
		if err := w(&b); err != nil {
			t.Fatal(err)
		}
		b.WriteString("--\n")
	}
	return b.String()
}

// TestKListMatchesSearch: a -k list of the k the binary search evaluated,
// in the same order, gets the same seeds and so the same result.
func TestKListMatchesSearch(t *testing.T) {
	_, ref := runReference(t, references[1]) // bzip2_rt_100M, default options
	var ks []int
	for _, ev := range ref.Evaluated {
		ks = append(ks, ev.K)
	}
	if !reflect.DeepEqual(ks, []int{1, 30, 15, 8, 11, 13, 12}) {
		t.Fatalf("search evaluated %v", ks)
	}
	opts := DefaultOptions()
	opts.K = ks
	res, err := Run(context.Background(), loadBB(t, "bzip2_rt_100M.bb.gz"), opts)
	if err != nil {
		t.Fatal(err)
	}
	if outputs(t, res) != outputs(t, ref) || res.Chosen != ref.Chosen || res.MaxRuns != len(ks) {
		t.Error("a k list in search order differs from the search")
	}
	// A different order gives k = 12 other seeds.
	opts.K = []int{12}
	one, err := Run(context.Background(), loadBB(t, "bzip2_rt_100M.bb.gz"), opts)
	if err != nil {
		t.Fatal(err)
	}
	for i, tr := range one.Evaluated[0].Trials {
		if tr.Seed != DefaultSeedKMeans+2*int64(i) {
			t.Errorf("trial %d seed %d", i, tr.Seed)
		}
	}
	if one.Evaluated[0].BIC == ref.Evaluated[6].BIC {
		t.Error("k = 12 as first run has the same BIC as k = 12 as 7th run")
	}
}

func TestItersLimit(t *testing.T) {
	f := loadBB(t, "simpoint-3.2/sample/sample.bb")
	// -iters 1: the final centres are the initial ones, with the initial
	// weights (SimPoint's off-by-one at the limit).
	opts := DefaultOptions()
	opts.Iters, opts.K = 1, []int{5, 9}
	ds, err := load(context.Background(), f, &opts)
	if err != nil {
		t.Fatal(err)
	}
	e := &engine{ds: ds, opts: opts, workers: 2}
	if err := e.search(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, ev := range e.runs {
		for _, cl := range ev.trials {
			if cl.converged || cl.iterations != 1 || !slices.Equal(cl.centres, cl.initCentres) || !slices.Equal(cl.weights, cl.initWeights) {
				t.Fatalf("k=%d: iters 1 did not return the initial centres", ev.k)
			}
		}
	}
	// -iters 0: no update at all.
	opts.Iters = 0
	zero, err := Run(context.Background(), f, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range zero.Evaluated {
		for _, tr := range ev.Trials {
			if tr.Converged || tr.Iterations != 0 {
				t.Fatalf("iters 0: %+v", tr)
			}
		}
	}
	one, _ := Run(context.Background(), f, func() Options { o := opts; o.Iters = 1; return o }())
	if outputs(t, one) != outputs(t, zero) {
		t.Error("-iters 0 and -iters 1 differ")
	}
	// -iters 5: most trials stop at the limit, with centres that are
	// neither the initial nor the converged ones.
	opts.Iters, opts.K = 5, nil
	limited, err := Run(context.Background(), f, opts)
	if err != nil {
		t.Fatal(err)
	}
	stopped := 0
	for _, ev := range limited.Evaluated {
		for _, tr := range ev.Trials {
			if !tr.Converged {
				stopped++
				if tr.Iterations != 5 {
					t.Errorf("a trial stopped at the limit after %d iterations", tr.Iterations)
				}
			} else if tr.Iterations >= 5 {
				t.Errorf("a converged trial reports %d iterations", tr.Iterations)
			}
		}
	}
	if stopped < len(limited.Evaluated) {
		t.Errorf("only %d trials hit the limit of 5", stopped)
	}
	ds, _ = load(context.Background(), f, &opts)
	checkPhases(t, ds, limited)
}

func TestFurthestFirst(t *testing.T) {
	f := loadBB(t, "simpoint-3.2/sample/sample.bb")
	opts := DefaultOptions()
	ds, err := load(context.Background(), f, &opts)
	if err != nil {
		t.Fatal(err)
	}
	const k, seed = 6, 4242
	c := compatInit(ds, k, seed, InitFurthestFirst)
	first := int(newRan2(seed).int() % int64(ds.n))
	if !slices.Equal(c[:ds.d], ds.row(first)) {
		t.Fatal("first centre is not row randInt() % n")
	}
	for j := 1; j < k; j++ {
		// Centre j is the row furthest from centres 0..j-1 (the first
		// such row on ties).
		far, farD := -1, -1.0
		for i := 0; i < ds.n; i++ {
			_, dd := nearest(ds.row(i), c[:j*ds.d], j)
			if dd > farD {
				far, farD = i, dd
			}
		}
		if !slices.Equal(c[j*ds.d:(j+1)*ds.d], ds.row(far)) {
			t.Fatalf("centre %d is not the furthest row %d", j, far)
		}
	}
	opts.Init = InitFurthestFirst
	res, err := Run(context.Background(), f, opts)
	if err != nil {
		t.Fatal(err)
	}
	checkPhases(t, ds, res)
	_, samp := runReference(t, references[0])
	if outputs(t, res) == outputs(t, samp) {
		t.Error("-initkm ff gives the same output as samp")
	}
}

func TestProjectionDims(t *testing.T) {
	f := loadBB(t, "simpoint-3.2/sample/sample.bb")
	opts := DefaultOptions()
	opts.Dim = 5
	ds, err := load(context.Background(), f, &opts)
	if err != nil {
		t.Fatal(err)
	}
	p15, _ := ProjectionMatrix(DefaultSeedProj, 50, 15)
	p5, _ := ProjectionMatrix(DefaultSeedProj, 50, 5)
	// Row r of any matrix uses the stream values from r·cols on: the
	// 5-column matrix is the 15-column stream cut in rows of 5.
	if !slices.Equal(p5, p15[:250]) {
		t.Error("the 5-column matrix is not the same stream")
	}
	for i, v := range f.Vectors {
		sum := v.Sum()
		want := make([]float64, 5)
		for j, b := range v.Blocks {
			val := v.Counts[j] / sum
			for c := range want {
				want[c] += val * p5[int(b-1)*5+c]
			}
		}
		if !slices.Equal(ds.row(i), want) {
			t.Fatalf("row %d: %v, want %v", i, ds.row(i), want)
		}
	}
	opts.K = []int{3, 8}
	res, err := Run(context.Background(), f, opts)
	if err != nil || res.Dim != 5 || !res.Projected {
		t.Fatalf("dim 5: %v", err)
	}

	opts.Dim = NoProject
	ds, err = load(context.Background(), f, &opts)
	if err != nil {
		t.Fatal(err)
	}
	if ds.d != 50 || ds.row(0)[0] != 48.0/1000 || ds.row(0)[1] != 0 || ds.row(0)[2] != 24.0/1000 {
		t.Errorf("noProject row 0 = %v", ds.row(0)[:3])
	}
	res, err = Run(context.Background(), f, opts)
	if err != nil || res.Dim != 50 || res.Projected {
		t.Fatalf("noProject: %v", err)
	}
	checkPhases(t, ds, res)
}

func TestBICThreshold(t *testing.T) {
	f := loadBB(t, "bzip2_rt_100M.bb.gz")
	_, ref := runReference(t, references[1])
	for _, thr := range []float64{0, 1} {
		opts := DefaultOptions()
		opts.BICThreshold = thr
		res, err := Run(context.Background(), f, opts)
		if err != nil {
			t.Fatal(err)
		}
		// The threshold also steers the search, so compute the expected
		// choice from what was evaluated.
		want := 0
		for r, ev := range res.Evaluated {
			if thr == 0 && ev.K < res.Evaluated[want].K {
				want = r
			}
			if thr == 1 && ev.BIC > res.Evaluated[want].BIC {
				want = r
			}
		}
		if res.Chosen != want {
			t.Errorf("threshold %v: chose run %d (k=%d), want %d", thr, res.Chosen, res.K, want)
		}
		if thr == 0 && res.K != 1 {
			t.Errorf("threshold 0 chose k=%d", res.K)
		}
	}
	if ref.K != 12 {
		t.Errorf("threshold 0.9 chose k=%d, want 12", ref.K)
	}
}

// TestCoverage applies -coveragePct 0.9 to phases. SimPoint 3.2's
// .lpt0.9 files are not in testdata/real/bbv; the expected selection is
// derived by hand from phases.weights: sorted by weight the clusters are
// 3 4 6 2 8 1 7 5 0 9, and the cumulative weight first reaches 0.9 with 7.
func TestCoverage(t *testing.T) {
	// The selection is made on the chosen clustering after the search;
	// reuse the search of the reference run.
	e, ref := runReference(t, references[2])
	e2 := *e
	e2.opts.CoveragePct = 0.9
	res := e2.result()
	if outputs(t, res) != outputs(t, ref) {
		t.Error("-coveragePct changed the main outputs")
	}
	c := res.Coverage
	if c == nil || c.Suffix() != ".lpt0.9" {
		t.Fatalf("coverage %+v", c)
	}
	var ids []int
	kept := 0
	for _, p := range c.Phases {
		ids = append(ids, p.ID)
		kept += p.Size
	}
	if !reflect.DeepEqual(ids, []int{1, 2, 3, 4, 6, 7, 8}) || kept != 1184 {
		t.Fatalf("kept %v (%d intervals)", ids, kept)
	}
	var sp, w bytes.Buffer
	c.WriteSimpoints(&sp)
	c.WriteWeights(&w)
	var wantSP, wantW strings.Builder
	reps := map[int]int{}
	for _, p := range ref.Phases {
		reps[p.ID] = p.Representative
	}
	for _, p := range c.Phases {
		fmt.Fprintf(&wantSP, "%d %d\n", reps[p.ID], p.ID)
		fmt.Fprintf(&wantW, "%s %d\n", FormatG(float64(p.Size)/1184), p.ID)
	}
	if sp.String() != wantSP.String() || w.String() != wantW.String() {
		t.Errorf("lpt files:\n%s%s\nwant\n%s%s", sp.String(), w.String(), wantSP.String(), wantW.String())
	}
	if ref.Coverage != nil {
		t.Error("a coverage selection at -coveragePct 1")
	}
}
