package instrument_test

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"sync"
	"testing"

	"github.com/parscope/parscope/analysis/entropy"
	"github.com/parscope/parscope/analysis/occupancy"
	"github.com/parscope/parscope/analysis/state"
	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/instrument"
	"github.com/parscope/parscope/store"
	"github.com/parscope/parscope/store/storetest"
	"github.com/parscope/parscope/trace"
)

// agreeStates are the states of the agreement workload: a pipeline stage
// computes in many short blocks (the repeats the filter drops), then hands
// its result on and waits for the next input.
var agreeStates = []trace.StateDef{{ID: 0, Name: "compute"}, {ID: 1, Name: "send"}, {ID: 2, Name: "wait"}, {ID: 3, Name: "reduce"}}

// twin drives two processes of one recorder with the same calls, one right
// after the other: process p records unfiltered, process p+procs through
// the filter (halfFilter). Both record on the simulated clock, so the two
// copies carry the same times whatever the scheduler does between them.
type twin struct{ full, filt *instrument.Process }

func (w twin) block(id int32) {
	w.full.Block(id)
	w.filt.Block(id)
}

// work models ns of computation on both copies.
func (w twin) work(ns int64) {
	w.full.Work(ns)
	w.filt.Work(ns)
}

// stamps are the two copies' send times of one message.
type stamps struct{ full, filt int64 }

// send records a message to stage dst on both copies (procs apart) and
// returns their send times.
func (w twin) send(dst, procs int) stamps {
	return stamps{w.full.SendStamped(dst, 8, 0), w.filt.SendStamped(dst+procs, 8, 0)}
}

// recv records the message from stage src sent at s on both copies.
func (w twin) recv(src, procs int, s stamps) {
	w.full.RecvStamped(src, 8, 0, s.full)
	w.filt.RecvStamped(src+procs, 8, 0, s.filt)
}

// halfFilter filters processes procs.. with the entropy filter and keeps
// every record of processes 0..procs−1.
type halfFilter struct {
	procs int
	f     *instrument.EntropyFilter
}

func (h halfFilter) Keep(proc int, k trace.Kind, id int32, t int64) bool {
	return proc < h.procs || h.f.Keep(proc-h.procs, k, id, t)
}

func (h halfFilter) ForProcess(proc int) instrument.Filter {
	if proc < h.procs {
		return instrument.DropKinds()
	}
	return shifted{h.f.ForProcess(proc - h.procs), h.procs}
}

// shifted asks f about proc−by.
type shifted struct {
	f  instrument.Filter
	by int
}

func (s shifted) Keep(proc int, k trace.Kind, id int32, t int64) bool {
	return s.f.Keep(proc-s.by, k, id, t)
}

// agreeWorkload runs procs pipeline stages for iters iterations, each on
// processes p and p+procs of rec; stage p computes (p+1)·blocks blocks of
// 20 µs of modelled work per iteration, so the stages are unbalanced and
// wait on each other. Each stage receives from the one before it only, so
// the simulated times are the same on every run.
func agreeWorkload(rec *instrument.Recorder, procs, iters, blocks int) {
	ch := make([]chan stamps, procs+1)
	for i := range ch {
		ch[i] = make(chan stamps, 1)
	}
	var wg sync.WaitGroup
	for p := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := twin{rec.Process(p), rec.Process(p + procs)}
			for it := range iters {
				if p > 0 {
					w.block(2)
					w.recv(p-1, procs, <-ch[p])
				}
				for range (p + 1) * blocks {
					w.block(0)
					w.work(20_000)
				}
				if it%5 == 4 {
					w.block(3)
					w.work(100_000)
				}
				w.block(1)
				var s stamps
				if p+1 < procs {
					s = w.send(p+1, procs)
				}
				ch[p+1] <- s
			}
			w.full.Done()
			w.filt.Done()
		}()
	}
	go func() {
		for range ch[procs] {
		}
	}()
	wg.Wait()
	close(ch[procs])
}

// TestFilteredAnalysesAgree records one run twice at once, without and
// with the entropy filter (Özmen 2002, Table 4 with K = 100 and threshold
// 0.1, the default of rewritten programs and the examples), and runs the
// state analyses on both traces. The filter drops most state records (the
// repeats of "compute"), never a change of state, and basic block vectors
// count every block; so the occupancy table, the parallel states, their
// time-weighted entropy and the phases' input must agree. The workload
// records on the simulated clock (instrument.SimClock), so both copies
// carry the same times and the analyses agree exactly, on any machine
// under any load. docs/performance.md states this.
func TestFilteredAnalysesAgree(t *testing.T) {
	const procs, iters, blocks = 4, 40, 25
	dir := t.TempDir()
	fullPath, filtPath := filepath.Join(dir, "full.pst"), filepath.Join(dir, "filtered.pst")
	f, err := instrument.NewEntropyFilter(instrument.EntropyOptions{Config: instrument.DefaultEntropyConfig(),
		Threshold: instrument.DefaultEntropyThreshold, Procs: procs, Kinds: []trace.Kind{trace.KindState}, Alphabet: len(agreeStates)})
	if err != nil {
		t.Fatal(err)
	}
	both := filepath.Join(dir, "both.pst")
	sim := instrument.DefaultSimClock()
	rec, err := instrument.Start(instrument.Options{Path: both, States: agreeStates, BBVInterval: 500, Filter: halfFilter{procs, f}, SimClock: &sim})
	if err != nil {
		t.Fatal(err)
	}
	agreeWorkload(rec, procs, iters, blocks)
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	splitProcs(t, both, fullPath, 0, procs)
	splitProcs(t, both, filtPath, procs, procs)

	a, b := storetest.Open(t, fullPath), storetest.Open(t, filtPath)
	// The filter did drop most state records.
	na, nb := a.Manifest().Stats.Records["state"], b.Manifest().Stats.Records["state"]
	if nb*3 > na {
		t.Fatalf("the filter kept %d of %d state records; the workload should let it drop most", nb, na)
	}
	var dropped int64
	for p := range procs {
		_, d := f.Counts(p)
		dropped += d
	}
	if na-nb != dropped {
		t.Errorf("%d state records fewer, the filter counts %d dropped", na-nb, dropped)
	}

	// Basic block vectors, the input of the phase analysis, are identical.
	if va, vb := bbvOf(t, a), bbvOf(t, b); len(va) == 0 || fmt.Sprint(va) != fmt.Sprint(vb) {
		t.Errorf("basic block vectors differ: %d and %d records", len(va), len(vb))
	}

	ra, rb := runAgree(t, a, false), runAgree(t, b, false)

	// Occupancy: the same macrostates, each with the same share of the run.
	oa, ob := ra.Get(occupancy.Name).Result.(*occupancy.Report), rb.Get(occupancy.Name).Result.(*occupancy.Report)
	sa, sb := occShares(oa), occShares(ob)
	if len(sa) == 0 {
		t.Fatal("no occupancy on the unfiltered trace")
	}
	worst := 0.0
	for k, x := range sa {
		worst = math.Max(worst, math.Abs(x-sb[k]))
	}
	for k := range sb {
		if _, ok := sa[k]; !ok {
			worst = math.Max(worst, sb[k])
		}
	}
	t.Logf("occupancy: %d macrostates, largest difference of a share %.4f points", len(sa), 100*worst)
	if worst > 1e-12 {
		t.Errorf("occupancy shares differ by up to %.3g points\n unfiltered %v\n   filtered %v", 100*worst, sa, sb)
	}

	// Parallel states: the same distinct classes. The filtered trace has
	// fewer states: a state is a distinct time at which a process records
	// a block (Gomez, Cai & Schubert 2017), and the dropped repeats were
	// such times, each a copy of the state before it.
	ca, cb := classesOf(t, ra), classesOf(t, rb)
	if len(ca) == 0 || fmt.Sprint(ca) != fmt.Sprint(cb) {
		t.Errorf("distinct classes differ: unfiltered %v, filtered %v", ca, cb)
	}

	// Entropy weighted by time: the same. Weighted by state (the
	// default) it is not comparable: the filter removed most of the
	// repeated states; the test logs the difference.
	ta, tb := runAgree(t, a, true), runAgree(t, b, true)
	ea, eb := entropyOf(t, ta), entropyOf(t, tb)
	if len(ea) == 0 || len(ea) != len(eb) {
		t.Fatalf("entropy: %d and %d values", len(ea), len(eb))
	}
	worst = 0
	for i := range ea {
		worst = math.Max(worst, math.Abs(ea[i]-eb[i]))
	}
	ua, ub := entropyOf(t, ra), entropyOf(t, rb)
	t.Logf("entropy weighted by time: largest difference %.5f bits (%v and %v); by state: %v and %v", worst, ea, eb, ua, ub)
	if worst > 1e-9 {
		t.Errorf("time-weighted entropy differs by up to %.3g bits", worst)
	}
}

// splitProcs writes processes first..first+n−1 of the trace src, renumbered
// from 0, as the trace dst, with src's header and time base.
func splitProcs(t *testing.T, src, dst string, first, n int32) {
	t.Helper()
	in := storetest.Open(t, src)
	h := *in.Header()
	h.Runs = []trace.RunInfo{{ID: 0, Procs: n}}
	h.Procs = nil
	var kept []trace.Record
	for _, rd := range []trace.Reader{in.Records(store.ReadOptions{}), in.BBV(store.ReadOptions{})} {
		recs, err := trace.ReadAll(rd)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if r.Proc < first || r.Proc >= first+n {
				continue
			}
			r.Proc -= first
			if r.Peer >= 0 {
				r.Peer -= first
			}
			kept = append(kept, r)
		}
	}
	storetest.Create(t, dst, &h, kept)
}

func bbvOf(t *testing.T, s *store.Store) []trace.Record {
	t.Helper()
	recs, err := trace.ReadAll(s.BBV(store.ReadOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	for i := range recs {
		recs[i].T, recs[i].End = 0, 0 // the two clocks differ; the vectors must not
	}
	return recs
}

// runAgree runs occupancy, states and entropy (time-weighted or not) on s.
func runAgree(t *testing.T, s *store.Store, timeWeighted bool) *engine.Results {
	t.Helper()
	occ := occupancy.DefaultParams()
	occ.Start = "wait"
	ent := entropy.DefaultParams()
	ent.TimeWeighted = timeWeighted
	res, err := engine.Run(context.Background(), s, []engine.Request{
		{Analysis: occupancy.Name, Options: occ}, {Analysis: state.Name}, {Analysis: entropy.Name, Options: ent}})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// occShares maps each macrostate of every run to its share of the run.
func occShares(r *occupancy.Report) map[string]float64 {
	out := map[string]float64{}
	for _, run := range r.Runs {
		var total float64
		for _, m := range run.Table {
			total += float64(m.Occupancy)
		}
		for _, m := range run.Table {
			out[fmt.Sprint(run.Run, m.Counts)] += float64(m.Occupancy) / total
		}
	}
	return out
}

// classesOf lists each run's number of states and of distinct classes.
func classesOf(t *testing.T, r *engine.Results) []int {
	t.Helper()
	e := r.Get(state.Name)
	if e == nil {
		t.Fatal("no states result")
	}
	var out []int
	for _, run := range e.Result.(*state.Summary).Runs {
		t.Logf("run %d: %d states, %d distinct classes", run.Run, run.States, run.DistinctClasses)
		out = append(out, run.DistinctClasses)
	}
	return out
}

// entropyOf lists the entropy measures of each run.
func entropyOf(t *testing.T, r *engine.Results) []float64 {
	t.Helper()
	e := r.Get(entropy.Name)
	if e == nil {
		t.Fatal("no entropy result")
	}
	var out []float64
	for _, run := range e.Result.(*entropy.Report).Runs {
		out = append(out, run.CombEntropyDistinct, run.SurprisalMean, run.HistogramEntropyMean)
	}
	return out
}
