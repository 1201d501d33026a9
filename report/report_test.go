package report

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/parscope/parscope/analysis/phase"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/parscope/parscope/analysis/comm"
	"github.com/parscope/parscope/analysis/entropy"
	"github.com/parscope/parscope/analysis/mentropy"
	"github.com/parscope/parscope/analysis/occupancy"
	"github.com/parscope/parscope/analysis/overview"
	"github.com/parscope/parscope/analysis/phasespace"
	"github.com/parscope/parscope/analysis/state"
	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/format"
	_ "github.com/parscope/parscope/format/all"
	"github.com/parscope/parscope/store"
	"github.com/parscope/parscope/store/storetest"
	"github.com/parscope/parscope/trace"
)

const examples = "../testdata/examples"

// importExample imports inputs into a .pst in a temporary directory.
func importExample(t *testing.T, name, dict string, inputs ...string) string {
	t.Helper()
	return importExampleAt(t, filepath.Join(t.TempDir(), name+".pst"), dict, inputs...)
}

// importExampleAt imports inputs (of the detected format) into the .pst out.
func importExampleAt(t *testing.T, out, dict string, inputs ...string) string {
	t.Helper()
	imp, err := format.Detect(inputs[0])
	if err != nil {
		t.Fatal(err)
	}
	w, err := store.Create(out, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	if err := imp.Import(context.Background(), inputs, format.Options{Dict: dict, Params: map[string]string{}}, w); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out
}

func amoeba(t *testing.T) string {
	return importExample(t, "amoeba", filepath.Join(examples, "amoeba_blocks.txt"), filepath.Join(examples, "amoeba.srt"))
}

func TestAmoebaBundle(t *testing.T) {
	path := amoeba(t)
	b, err := Build(context.Background(), path, Options{MaxPoints: 500})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(b.Ran, ","); got != "overview,states,entropy,pca,phasespace,occupancy,profile" {
		t.Errorf("ran %s", got)
	}
	// The engine's analyses ran in one pass, whose duration each carries.
	if got := strings.Join(b.RanTogether, ","); got != "overview,states,entropy,pca,phasespace,occupancy,profile" || b.Seconds["pca"] != b.Seconds["occupancy"] || b.Seconds["overview"] != b.Seconds["occupancy"] || b.Seconds["entropy"] != b.Seconds["occupancy"] || b.Seconds["overview"] <= 0 {
		t.Errorf("ran together %s in %v", got, b.Seconds)
	}
	for _, k := range []string{AnalysisComm, AnalysisMEntropy, AnalysisPhases, AnalysisProbe} {
		if b.Skipped[k] == "" {
			t.Errorf("%s neither ran nor was skipped", k)
		}
	}
	if len(b.Runs) != 5 || b.Runs[0].Procs != 17 || b.Runs[0].Records != 3400 {
		t.Fatalf("runs %+v", b.Runs)
	}
	// Every level of the overview counts every record of its run once.
	ov := b.Overview.Result.(*overview.Result)
	if b.Overview.Analysis != overview.Name || b.Overview.SchemaVersion != engine.SchemaVersion {
		t.Fatalf("overview envelope %+v", b.Overview)
	}
	for i, r := range ov.Runs {
		want := []int{1024, 256, 64, 16, 4}
		if len(r.Levels) != len(want) {
			t.Fatalf("run %d: %d levels", r.Run, len(r.Levels))
		}
		for li, l := range r.Levels {
			var n int64
			for _, c := range l.Counts {
				n += c
			}
			if l.Windows != want[li] || n != b.Runs[i].Records {
				t.Errorf("run %d level %d: %d windows counting %d records, want %d and %d", r.Run, li, l.Windows, n, want[li], b.Runs[i].Records)
			}
		}
	}
	if _, ok := ov.Query(7, 0, 0, 10); ok {
		t.Error("Query answered for a run that does not exist")
	}
	// Entropy: per run and over all, the window series covers every run.
	e := b.Entropy.Result.(*entropy.Report)
	if len(e.Runs) != 5 || e.All == nil || e.Runs[0].N != 13 || e.Runs[0].P != 17 || e.Runs[0].Rows != 1811 {
		t.Fatalf("entropy: %d runs, all %v, run 0 %+v", len(e.Runs), e.All != nil, e.Runs[0])
	}
	if e.Subsets == nil || len(e.Subsets.Results) != 17-SubsetK+1 || e.WindowNS != (81_800_000-0)/EntropyWindows {
		t.Errorf("subsets: %+v, window %d ns", e.Subsets, e.WindowNS)
	}
	runs := map[int32]bool{}
	for _, p := range e.Series {
		runs[p.Run] = true
		if p.Entropy < 0 || p.Entropy > math.Log2(13)+1e-9 {
			t.Errorf("window entropy %v out of [0, log2 13]", p.Entropy)
		}
	}
	if len(runs) != 5 {
		t.Errorf("entropy series covers %d runs", len(runs))
	}
	// PCA and phase space: the same sampled states, at most MaxPoints a run.
	pc, ok := b.PCAResult()
	if !ok {
		t.Fatal("no pca section")
	}
	// One V shape per iteration of the loop, as in every run of the trace.
	for _, r := range pc.Runs {
		if r.VShapes != 22 {
			t.Errorf("run %d: %d V shapes, want 22", r.Run, r.VShapes)
		}
	}
	ph, ok := b.PhaseSpaceResult()
	if !ok {
		t.Fatal("no phasespace section")
	}
	if len(pc.Components) != PCAComponents || len(pc.Runs) != 5 || len(ph.Runs) != 5 {
		t.Fatalf("pca: %d components, %d runs", len(pc.Components), len(pc.Runs))
	}
	cum := 0.0
	for _, c := range pc.Components {
		cum += c.Explained
	}
	if cum <= 0 || cum > 1+1e-9 {
		t.Errorf("explained variance sums to %v", cum)
	}
	for i, r := range pc.Runs {
		ps := ph.Runs[i]
		if ps.Run != r.Run || ps.States != r.States || ps.Procs != 17 || len(ps.TNS) != len(ps.Index) || phasespace.Horizontal(ps.Points[0]) > 1e-12 || math.Abs(ps.Points[0][2]-math.Sqrt(17)) > 1e-12 {
			t.Errorf("run %d: phase space %d of %d states, first point %v", r.Run, len(ps.Index), ps.States, ps.Points[0])
		}
		if len(r.Index) == 0 || len(r.Index) > 500 || !slices.Equal(r.Index, ps.Index) || len(ps.Points) != len(r.Index) || len(r.Scores[2]) != len(r.Index) {
			t.Errorf("run %d: %d PCA samples, %d phase-space samples", r.Run, len(r.Index), len(ps.Index))
		}
		if r.Index[0] != 0 || !sort.SliceIsSorted(r.Index, func(a, b int) bool { return r.Index[a] < r.Index[b] }) || r.Index[len(r.Index)-1] >= r.States {
			t.Errorf("run %d: sample indices %d..%d of %d states", r.Run, r.Index[0], r.Index[len(r.Index)-1], r.States)
		}
	}
	checkTimeline(t, path, b)
	// Occupancy: the mean occupancies cover the run, the processes per mode
	// add up to every process in each window.
	occ := occRuns(t, b)
	if len(occ) != 5 {
		t.Fatalf("%d occupancy runs", len(occ))
	}
	for _, o := range occ {
		share := 0.0
		for _, m := range o.Mean {
			share += m.Share
			if math.Abs(m.GlobalNS-m.LocalNS) > 1e-6*math.Max(1, m.GlobalNS) {
				t.Errorf("run %d mode %s: mean from the table %v, from local counters %v", o.Run, m.Mode, m.GlobalNS, m.LocalNS)
			}
		}
		if math.Abs(share-1) > 1e-9 {
			t.Errorf("run %d: shares add up to %v", o.Run, share)
		}
		for w, c := range o.ProcessesPerWindow {
			s := 0.0
			for _, v := range c {
				s += v
			}
			if math.Abs(s-float64(o.Procs)) > 1e-6 {
				t.Errorf("run %d window %d: %v processes in the modes, want %d", o.Run, w, s, o.Procs)
				break
			}
		}
		for j, h := range o.Histogram {
			s := 0.0
			for _, v := range h {
				s += v
			}
			if math.Abs(s-1) > 1e-9 {
				t.Errorf("run %d mode %d: histogram sums to %v", o.Run, j, s)
			}
		}
	}
}

// checkTimeline recomputes the sampled blocks from the raw records: the
// block of a process at time t is its last state entered at or before t.
func checkTimeline(t *testing.T, path string, b *Bundle) {
	t.Helper()
	s, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	st := b.States.Result.(*state.Summary).Runs[1]
	tl := st.Timeline
	recs, err := trace.ReadAll(s.Records(store.ReadOptions{Runs: []int32{st.Run}, Kinds: []trace.Kind{trace.KindState}}))
	if err != nil {
		t.Fatal(err)
	}
	absent := s.Header().AbsentStates()
	for p := range tl.Blocks {
		for w := 0; w < state.DefaultTimelineSamples; w += 17 {
			at := tl.BeginNS + int64((float64(w)+0.5)*tl.WidthNS)
			want := state.Absent // before its first record
			for _, r := range recs {
				if r.Proc == int32(p) && r.T <= at {
					want = r.ID
					if absent[r.ID] {
						want = state.Absent
					}
				}
			}
			if got := tl.Blocks[p][w]; got != want {
				t.Errorf("run %d process %d at %d ns: block %d, want %d", st.Run, p, at, got, want)
			}
		}
	}
	// The changes list every state, however short: each state entered (the
	// last of one instant; an absent state as block −1), from the
	// process's first record, when it comes to exist, leaving out those
	// that do not change the block.
	if len(tl.ChangeNS) != len(tl.Blocks) || len(tl.ChangeBlock) != len(tl.Blocks) {
		t.Fatalf("run %d: changes of %d and %d processes, want %d", st.Run, len(tl.ChangeNS), len(tl.ChangeBlock), len(tl.Blocks))
	}
	short := 0
	for p := range tl.Blocks {
		var ts []int64
		var bs []int32
		for _, r := range recs {
			if r.Proc != int32(p) {
				continue
			}
			b := r.ID
			if absent[b] {
				b = state.Absent
			}
			if n := len(ts); n > 0 && ts[n-1] == r.T {
				bs[n-1] = b
			} else {
				ts, bs = append(ts, r.T), append(bs, b)
			}
			prev := state.Absent // before the first record
			if n := len(bs); n > 1 {
				prev = bs[n-2]
			}
			if bs[len(bs)-1] == prev {
				ts, bs = ts[:len(ts)-1], bs[:len(bs)-1]
			}
		}
		if !slices.Equal(tl.ChangeNS[p], ts) || !slices.Equal(tl.ChangeBlock[p], bs) {
			t.Errorf("run %d process %d: changes %v %v\nwant %v %v", st.Run, p, tl.ChangeNS[p], tl.ChangeBlock[p], ts, bs)
		}
		for i := 1; i < len(ts); i++ {
			if float64(ts[i]-ts[i-1]) < tl.WidthNS {
				short++
			}
		}
	}
	if short == 0 {
		t.Errorf("run %d: no state shorter than the sampling period %g ns: the test shows nothing the samples miss", st.Run, tl.WidthNS)
	}
	if tl.EndNS <= recs[len(recs)-1].T-1 {
		t.Errorf("run %d: end %d ns before the last state at %d ns", st.Run, tl.EndNS, recs[len(recs)-1].T)
	}
}

func TestRingBundle(t *testing.T) {
	ring, _ := filepath.Glob(filepath.Join(examples, "ring", "ring.*.trace"))
	path := importExample(t, "ring", "", ring...)
	src := t.TempDir()
	if err := os.WriteFile(filepath.Join(src, "ring.f"), []byte(strings.Repeat("c\n", 120)), 0o644); err != nil {
		t.Fatal(err)
	}
	var calls []string
	progress := func(name string, done, total int) { calls = append(calls, fmt.Sprintf("%s %d/%d", name, done, total)) }
	b, err := Build(context.Background(), path, Options{SourceDirs: []string{src}, Probe: []byte(`{"k": [1, 2]}`), Progress: progress})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(b.Ran, ","); got != "overview,states,entropy,pca,phasespace,occupancy,mentropy,comm,profile,waitstates,critpath,probe" {
		t.Errorf("ran %s", got)
	}
	if got, want := strings.Join(calls, ", "), "overview, states, entropy, pca, phasespace, occupancy, mentropy, comm, profile, waitstates, critpath 0/11,  11/11"; got != want {
		t.Errorf("progress calls %q, want %q", got, want)
	}
	if len(b.Comm.Report().Runs) != 1 || b.Comm.Options.(*comm.Params).MaxSide != CommMaxSide {
		t.Fatalf("comm: %+v", b.Comm.Envelope)
	}
	c := struct {
		comm.RunReport
		Sources map[string][]string
	}{b.Comm.Report().Runs[0], b.Comm.Sources}
	if c.Procs != 4 || len(c.Nodes) != 3 || len(c.Matrices) != 3 || c.Group != 1 || len(c.Sources["ring.f"]) != 120 {
		t.Fatalf("comm: %d procs, %d nodes, group %d, %d source lines", c.Procs, len(c.Nodes), c.Group, len(c.Sources["ring.f"]))
	}
	// The matrices are the analysis's: the root's aggregate is every byte sent.
	tb, tc := c.Matrices[0].Aggregate.Totals()
	if tb != c.Nodes[0].Aggregate.Bytes || tc != c.Nodes[0].Aggregate.Messages || tb == 0 {
		t.Errorf("root matrix %d bytes in %d messages, node says %d in %d", tb, tc, c.Nodes[0].Aggregate.Bytes, c.Nodes[0].Aggregate.Messages)
	}
	me, ok := b.MEntropyResult()
	if !ok || len(me.Procs) != 4 || me.Procs[0].Events == 0 || b.MEntropy.Options.(*mentropy.Params).MaxPoints != DefaultMaxPoints {
		t.Fatalf("mentropy: %+v", b.MEntropy)
	}
	for _, p := range me.Procs {
		if len(p.Index) != p.Events || len(p.HMax) != p.Events || p.Steps != nil {
			t.Errorf("proc %d: %d points for %d events (no bucketing expected)", p.Proc, len(p.Index), p.Events)
		}
	}
	// The profile and wait-state sections are what the engine computes
	// alone from the same trace and options; pop is skipped with a reason
	// (the ring's regions are not named like MPI calls).
	sameAsEngine(t, path, b.Profile, b.WaitStates, b.CritPath)
	if cp, ok := b.CritPathResult(); !ok || len(cp.Runs) != 1 || cp.Runs[0].LengthNS != cp.Runs[0].EndNS-cp.Runs[0].BeginNS ||
		cp.Runs[0].ComputationNS+cp.Runs[0].CommunicationNS != cp.Runs[0].LengthNS || len(cp.Runs[0].Segments) == 0 {
		t.Errorf("critpath: %+v", b.CritPath)
	}
	if pr, ok := b.ProfileResult(); !ok || len(pr.Runs) != 1 || len(pr.Runs[0].Flat) == 0 || len(pr.Runs[0].Tree) == 0 || pr.Of != "regions" {
		t.Errorf("profile: %+v", b.Profile)
	}
	if ws, ok := b.WaitStatesResult(); !ok || len(ws.Runs) != 1 || ws.Runs[0].Messages == 0 {
		t.Errorf("waitstates: %+v", b.WaitStates)
	}
	if b.POP != nil || !strings.Contains(b.Skipped[AnalysisPOP], "runtime-regions") {
		t.Errorf("pop: section %v, skipped %q", b.POP, b.Skipped[AnalysisPOP])
	}
	if b.Probe == nil || string(*b.Probe) != `{"k": [1, 2]}` {
		t.Errorf("probe %v", b.Probe)
	}
	if _, err := Build(context.Background(), path, Options{Probe: []byte(`{"k": `)}); err == nil {
		t.Error("an invalid probe result was accepted")
	}
}

func TestGzipPhases(t *testing.T) {
	path := importExample(t, "gzip", "", filepath.Join(examples, "gzip.bb.gz"))
	b, err := Build(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ph, ok := b.Phases.Result.(*phase.Phases)
	if b.Phases.Analysis != phase.Name || !ok || len(ph.Streams) != 1 {
		t.Fatalf("phases section %+v", b.Phases)
	}
	p := ph.Streams[0].Result
	if p.Intervals != 383 || p.K < 1 || len(p.Phases) == 0 || !strings.HasPrefix(ph.Streams[0].Name, "gzip.pst") {
		t.Errorf("phases: %d intervals, k %d, %d phases, name %q", p.Intervals, p.K, len(p.Phases), ph.Streams[0].Name)
	}
	w, size := 0.0, 0
	for _, ph := range p.Phases {
		w += ph.Weight
		size += ph.Size
	}
	if math.Abs(w-1) > 1e-9 || size != 383 {
		t.Errorf("weights add up to %v, sizes to %d", w, size)
	}
	end := 0
	for _, s := range p.Hints.Runs {
		if s.Start != end || s.End <= s.Start {
			t.Fatalf("stretch %+v after %d", s, end)
		}
		end = s.End
	}
	if end != 383 {
		t.Errorf("stretches end at %d", end)
	}
}

func TestReadProbe(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte("{\"a\": 1,\n}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadProbe(bad); err == nil || !strings.Contains(err.Error(), "bad.json") {
		t.Errorf("ReadProbe of invalid JSON: %v", err)
	}
	if _, err := ReadProbe(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("ReadProbe of a missing file succeeded")
	}
}

// windowsFromTrace computes the processes per mode over time the way the
// report did before it streamed them: from the whole macrostate trace (T2)
// kept in memory.
func windowsFromTrace(t *testing.T, path string) map[int32][][]float64 {
	t.Helper()
	results, _ := storeOccupancy(t, path, occupancy.Options{Trace: true})
	out := map[int32][][]float64{}
	for _, res := range results {
		window := max(float64(res.End-res.Begin), 1) / occupancy.DefaultWindows
		counts := make([][]float64, occupancy.DefaultWindows)
		for w := range counts {
			counts[w] = make([]float64, len(res.Modes))
		}
		for _, row := range res.Trace {
			t0, t1 := float64(row.T-res.Begin), float64(row.T+row.Dur-res.Begin)
			for w := max(int(t0/window), 0); w < occupancy.DefaultWindows && float64(w)*window < t1; w++ {
				lo, hi := max(t0, float64(w)*window), min(t1, float64(w+1)*window)
				if hi <= lo {
					continue
				}
				for j, c := range row.Counts {
					counts[w][j] += float64(c) * (hi - lo) / window
				}
			}
		}
		out[res.Run] = counts
	}
	return out
}

// TestOccupancyWindowsUnchanged checks that the processes per mode over
// time, followed per process in the one pass, are (to rounding) those
// spread from the whole macrostate trace: on the amoeba runs, and on a
// trace whose processes start late (in the start mode until their first
// state).
func TestOccupancyWindowsUnchanged(t *testing.T) {
	late := filepath.Join(t.TempDir(), "late.pst")
	h := &trace.Header{Meta: trace.Meta{ClockResolution: 1}}
	h.States = []trace.StateDef{{ID: 1, Name: "init"}, {ID: 2, Name: "work"}, {ID: 3, Name: "wait"}}
	h.Runs = []trace.RunInfo{{ID: 0, Procs: 3}, {ID: 1, Procs: 3}}
	recs := []trace.Record{
		trace.State(0, 0, 0, 2), trace.State(0, 1, 7, 3), trace.State(0, 0, 13, 3), trace.State(0, 0, 13, 2),
		trace.State(0, 2, 50, 2), trace.State(0, 1, 51, 2), trace.State(0, 1, 300, 3), trace.State(0, 0, 1001, 3),
		trace.State(1, 1, 0, 3), trace.State(1, 1, 5, 2), trace.State(1, 0, 9, 2), trace.State(1, 2, 777, 3), trace.State(1, 0, 778, 3),
	}
	storetest.Create(t, late, h, recs)
	for _, path := range []string{amoeba(t), late} {
		want := windowsFromTrace(t, path)
		b, err := Build(context.Background(), path, Options{MaxPoints: 100})
		if err != nil {
			t.Fatal(err)
		}
		occ := occRuns(t, b)
		if len(occ) != len(want) || len(want) < 2 {
			t.Fatalf("%s: %d occupancy runs, want %d (at least 2)", path, len(occ), len(want))
		}
		// The series follows each process; the oracle spreads the rows of
		// the macrostate trace: the same sums in another order.
		near := func(a, b []float64) bool {
			return slices.EqualFunc(a, b, func(x, y float64) bool { return math.Abs(x-y) <= 1e-9*math.Max(1, math.Abs(y)) })
		}
		for _, o := range occ {
			if !slices.EqualFunc(o.ProcessesPerWindow, want[o.Run], near) {
				t.Errorf("%s run %d: processes per mode over time differ from the macrostate trace's:\n%v\nwant\n%v", filepath.Base(path), o.Run, o.ProcessesPerWindow[:4], want[o.Run][:4])
			}
		}
	}
}

// storeOccupancy computes the occupancies of every run of the .pst at
// path, every state a mode, and returns them with the modes. It reads
// every kind: a run ends at its last record of any kind, as the occupancy
// analysis ends it.
func storeOccupancy(t *testing.T, path string, opts occupancy.Options) ([]*occupancy.Result, *occupancy.Modes) {
	t.Helper()
	s, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	h := s.Header()
	modes := occupancy.StateModes(h)
	results, err := occupancy.Compute(context.Background(), h, s.Records(store.ReadOptions{}), modes, opts)
	if err != nil {
		t.Fatal(err)
	}
	return results, modes
}

// occRuns returns the runs of b's occupancy result.
func occRuns(t *testing.T, b *Bundle) []occupancy.RunReport {
	t.Helper()
	if b.Occupancy == nil {
		t.Fatal("no occupancy section")
	}
	if b.Occupancy.SchemaVersion != engine.SchemaVersion || b.Occupancy.Analysis != occupancy.Name {
		t.Fatalf("occupancy envelope %+v", b.Occupancy)
	}
	return b.Occupancy.Result.(*occupancy.Report).Runs
}

// TestTooManyProcsSkipsComm builds the report of a trace with messages on
// more processes than comm's dense matrices hold: the report lists comm as
// skipped with the reason the comm analysis gives, and the others run
// (comm's refusal was fatal to the whole report). Run names the trace and
// the analysis once in the same refusal. (Without regions, no state is
// derived: the exact PCA of 2000 processes would take long under the race
// detector.)
func TestTooManyProcsSkipsComm(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wide.pst")
	h := &trace.Header{Meta: trace.Meta{ClockResolution: 1}, Runs: []trace.RunInfo{{ID: 0, Procs: 2000}}}
	storetest.Create(t, path, h, []trace.Record{trace.Send(0, 1999, 10, 20, 0, 8, 0, 0), trace.Recv(0, 0, 15, 30, 1999, 8, 0, 0)})
	b, err := Build(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	const why = "run 0 has 2000 processes, and the dense n×n communication matrices hold at most 1024"
	if b.Skipped[AnalysisComm] != why || b.Comm != nil || slices.Contains(b.Ran, AnalysisComm) {
		t.Errorf("comm: skipped %q, section %v, ran %v; want skipped %q", b.Skipped[AnalysisComm], b.Comm, b.Ran, why)
	}
	for _, name := range []string{AnalysisOverview, AnalysisWaitStates, AnalysisCritPath} {
		if !slices.Contains(b.Ran, name) {
			t.Errorf("%s did not run (ran %v, skipped %v)", name, b.Ran, b.Skipped)
		}
	}
	if w, ok := b.WaitStatesResult(); !ok || len(w.Runs) != 1 {
		t.Errorf("waitstates: %+v", w)
	}
	s := storetest.Open(t, path)
	_, err = engine.Run(context.Background(), s, []engine.Request{{Analysis: comm.Name}})
	var lim *engine.LimitError
	if !errors.As(err, &lim) || err.Error() != "wide.pst: comm cannot analyse this trace: "+why {
		t.Errorf("comm alone: %v", err)
	}
}

// TestNoNullLists checks that the bundle of a trace with messages, states
// and only dropped-event markers, but no regions, holds no JSON null: the
// web views read every list (ranking_own.by_volume, mentropy.procs) and
// failed on null ("Cannot read properties of null (reading 'slice')").
func TestNoNullLists(t *testing.T) {
	path := filepath.Join(t.TempDir(), "flat.pst")
	h := &trace.Header{Meta: trace.Meta{ClockResolution: 1}}
	h.States = []trace.StateDef{{ID: 1, Name: "work"}, {ID: 2, Name: "wait"}}
	h.Events = []trace.EventDef{{ID: 1, Name: mentropy.DroppedEvent}}
	h.Runs = []trace.RunInfo{{ID: 0, Procs: 2}}
	storetest.Create(t, path, h, []trace.Record{
		trace.State(0, 0, 0, 1), trace.State(0, 1, 0, 1), trace.Event(0, 0, 5, 1, 3),
		trace.Send(0, 0, 10, 20, 1, 8, 0, 0), trace.State(0, 1, 12, 2), trace.Recv(0, 1, 15, 30, 0, 8, 0, 0),
		trace.State(0, 1, 30, 1), trace.State(0, 0, 40, 2), trace.State(0, 0, 50, 1), trace.State(0, 1, 60, 2),
	})
	b, err := Build(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []string{AnalysisComm, AnalysisMEntropy, AnalysisProfile, AnalysisWaitStates, AnalysisCritPath} {
		if !slices.Contains(b.Ran, a) {
			t.Fatalf("%s did not run (ran %v, skipped %v)", a, b.Ran, b.Skipped)
		}
	}
	data, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	var nulls []string
	var walk func(v any, path string)
	walk = func(v any, path string) {
		switch x := v.(type) {
		case nil:
			nulls = append(nulls, path)
		case map[string]any:
			for k, e := range x {
				walk(e, path+"."+k)
			}
		case []any:
			for i, e := range x {
				walk(e, fmt.Sprintf("%s[%d]", path, i))
			}
		}
	}
	walk(v, "")
	slices.Sort(nulls)
	if len(nulls) > 0 {
		t.Errorf("null in the bundle's JSON at %v", nulls)
	}
}

// sameAsEngine checks that each envelope of the report is, as JSON, what
// engine.Run gives for its analysis and options alone on the trace at path.
func sameAsEngine(t *testing.T, path string, envs ...*engine.Envelope) {
	t.Helper()
	s, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, env := range envs {
		if env == nil {
			t.Fatal("no section")
		}
		res, err := engine.Run(context.Background(), s, []engine.Request{{Analysis: env.Analysis, Options: env.Options}})
		if err != nil {
			t.Fatal(err)
		}
		a, _ := json.Marshal(env)
		b, _ := json.Marshal(res.Envelopes[0])
		if !bytes.Equal(a, b) || len(a) < 100 {
			t.Errorf("%s: the report's section and the engine's result differ:\nreport %.400s\nengine %.400s", env.Analysis, a, b)
		}
	}
}
