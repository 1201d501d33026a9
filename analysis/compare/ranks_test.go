package compare

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/format/annotated"
	"github.com/parscope/parscope/report"
	"github.com/parscope/parscope/store"
	"github.com/parscope/parscope/store/storetest"
	"github.com/parscope/parscope/trace/tracetest"
)

// ringSteps is the number of steps of every rank of the rings compared
// here, as in testdata/examples/ring.
const ringSteps = 64

// annotatedRing writes the annotated ring exchange of ranks ranks
// (annotated.Generate, the program of testdata/examples/ring, which
// `go run ./testdata/examples/gen -ring N -o DIR` writes) into a folder,
// imports it into ringN.pst and returns its bundle.
func annotatedRing(t *testing.T, ranks int) *report.Bundle {
	t.Helper()
	dir := t.TempDir()
	var files []string
	for r := range ranks {
		path := filepath.Join(dir, fmt.Sprintf("ring.%d.trace", r))
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := annotated.Generate(f, r, ranks, ringSteps); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		files = append(files, path)
	}
	imp, err := format.Lookup(annotated.Name)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, fmt.Sprintf("ring%d.pst", ranks))
	w, err := store.Create(dst, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := imp.Import(context.Background(), files, format.Options{}, w); err != nil {
		w.Abort()
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := report.Build(context.Background(), dst, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// table returns the table title of the section analysis.
func table(t *testing.T, r *Result, analysis, title string) Table {
	t.Helper()
	for _, s := range r.Sections {
		for _, tb := range s.Tables {
			if s.Analysis == analysis && tb.Title == title {
				return tb
			}
		}
	}
	t.Fatalf("no table %s / %s", analysis, title)
	return Table{}
}

// checkRows checks that the table holds exactly the rows want, by name:
// name → {a, b}, in any order, each found on both sides.
func checkRows(t *testing.T, r *Result, analysis, title string, want map[string][2]float64) {
	t.Helper()
	tb := table(t, r, analysis, title)
	var names []string
	for _, rw := range tb.Rows {
		names = append(names, rw.Name)
		w, ok := want[rw.Name]
		if !ok {
			t.Errorf("%s / %s: unexpected row %+v", analysis, title, rw)
			continue
		}
		if math.Abs(rw.A-w[0]) > 1e-9*math.Abs(w[0]) || math.Abs(rw.B-w[1]) > 1e-9*math.Abs(w[1]) || rw.Only != "" ||
			math.Abs(rw.Diff-(w[1]-w[0])) > 1e-9*math.Abs(w[1]) {
			t.Errorf("%s / %s / %s: a %v b %v (only %q), want %v, %v", analysis, title, rw.Name, rw.A, rw.B, rw.Only, w[0], w[1])
		}
	}
	if len(names) != len(want) || tb.Omitted != 0 {
		t.Errorf("%s / %s: rows %v (%d omitted), want %d", analysis, title, names, tb.Omitted, len(want))
	}
}

// TestRanks16Against64 compares the annotated ring exchange on 16 ranks
// with the same program on 64. Each rank runs the same timeline (its
// clock starts 1.5 µs after its left neighbour's): mpi_init_ (2 µs), 5
// µs, then 64 steps of IF_101 in LOOP_100: mpi_irecv_ from the left (0.3
// µs), 0.7 µs, mpi_send_ of (1024 + step mod 16) × 8 bytes to the right
// (4 µs), 0.2 µs, mpi_wait_ (1.5 µs), 9 µs, and every 8th step an
// mpi_allreduce_ (25 µs) and 3 µs; then mpi_finalize_. The MPI calls are
// records, not regions, in this format. By hand, for N ranks:
//
//   - a rank's records: 66 events (init, 64 waits, finalize), 65 enters
//     and 65 exits, 64 sends, 64 receives, 8 collectives: 332;
//   - a rank lasts 7,000 + 64 × 15,700 + 8 × 28,000 = 1,235,800 ns, from
//     its mpi_init_ to its mpi_finalize_, and the run 1,500 (N − 1) more;
//   - the profile counts from LOOP_100's entry (mpi_init_'s return) to
//     mpi_finalize_: 3,000 ns outside LOOP_100, whose exclusive time is the
//     8 × (3,000 + 25,000) of the allreduces and their computation, and
//     IF_101's the rest: 11,700 for step 0 (from mpi_init_'s return),
//     9,700 after each of the 7 steps with an allreduce before the last,
//     15,700 after the 56 others, 958,800 in all;
//   - each send waits for its receiver to post, 1,500 − 1,000 = 500 ns
//     later (a Late Receiver), but rank N − 1's to rank 0, which posted
//     long before: 64 (N − 1) calls; the receives are completed by
//     mpi_wait_ events, not calls, so no Late Sender is measured, and the
//     allreduces are on a communicator whose members the trace does not
//     give (none is measured);
//   - rank 0 starts first and rank N − 1 last: every rank is absent
//     1,500 r ns at the start and 1,500 (N − 1 − r) at the end, 1,500 N
//     (N − 1) ns in all.
//
// Every figure is summed or taken over the ranks of each side, regions
// are matched by name (no row found on one side only), no per-process
// figure is compared, and POP, which needs MPI regions, is missing on
// both sides with the reason.
func TestRanks16Against64(t *testing.T) {
	a, b := annotatedRing(t, 16), annotatedRing(t, 64)
	r, err := Bundles(a, b, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if r.TraceA != "ring16.pst" || r.TraceB != "ring64.pst" {
		t.Errorf("traces %s, %s", r.TraceA, r.TraceB)
	}
	// per returns a figure of N ranks on both sides.
	per := func(f func(n float64) float64) [2]float64 { return [2]float64{f(16), f(64)} }
	times := func(x float64) [2]float64 { return per(func(n float64) float64 { return x * n }) }
	span := per(func(n float64) float64 { return 1_235_800 + 1_500*(n-1) })

	checkRows(t, r, report.AnalysisOverview, "run", map[string][2]float64{"procs": times(1), "records": times(332), "span_ns": span})
	checkRows(t, r, report.AnalysisOverview, "records by kind (every run of the trace)", map[string][2]float64{
		"event": times(66), "enter": times(65), "exit": times(65), "send": times(64), "recv": times(64), "collective": times(8)})
	bytes := 8 * (64*1024 + 4*120.0) // a rank's: (1024 + i mod 16) × 8 over 64 steps
	checkRows(t, r, report.AnalysisProfile, "totals (regions)", map[string][2]float64{
		"procs": times(1), "total_ns": times(1_233_800), "outside_ns": times(3_000), "messages": times(64), "message_bytes": times(bytes)})
	checkRows(t, r, report.AnalysisProfile, "exclusive time by region", map[string][2]float64{"IF_101": times(958_800), "LOOP_100": times(272_000)})
	checkRows(t, r, report.AnalysisProfile, "inclusive time by region", map[string][2]float64{"IF_101": times(958_800), "LOOP_100": times(1_230_800)})
	checkRows(t, r, report.AnalysisProfile, "visits by region", map[string][2]float64{"IF_101": times(64), "LOOP_100": times(1)})

	lateReceiver := per(func(n float64) float64 { return 500 * 64 * (n - 1) })
	checkRows(t, r, report.AnalysisWaitStates, "totals", map[string][2]float64{
		// MPI time: the spans of a rank's 64 sends and 8 allreduces (a
		// receive posted outside every call spans nothing).
		"mpi_ns": times(64*4_000 + 8*25_000), "wait_ns": lateReceiver, "messages": times(64), "collectives": {0, 0}})
	zero := [2]float64{0, 0}
	checkRows(t, r, report.AnalysisWaitStates, "wait by pattern", map[string][2]float64{
		"late_sender_ns": zero, "late_receiver_ns": lateReceiver, "wait_nxn_ns": zero, "wait_barrier_ns": zero,
		"late_broadcast_ns": zero, "early_reduce_ns": zero})
	if rw := row(t, r, report.AnalysisWaitStates, "waiting calls by pattern", "late_receiver"); rw.A != 64*15 || rw.B != 64*63 {
		t.Errorf("late receiver calls %+v, want %d and %d", rw, 64*15, 64*63)
	}

	checkRows(t, r, report.AnalysisComm, "totals", map[string][2]float64{"messages": times(64), "bytes": times(bytes),
		"matched_messages": times(64), "pairs": times(1), "max_degree": {2, 2}, "mean_degree": {2, 2}})
	checkRows(t, r, report.AnalysisComm, "bytes by code structure (own)", map[string][2]float64{"LOOP_100/IF_101": times(bytes)})
	if rw := row(t, r, report.AnalysisCritPath, "path", "length_ns"); rw.A != span[0] || rw.B != span[1] {
		t.Errorf("critical path %+v, want the spans %v", rw, span)
	}
	absent := per(func(n float64) float64 { return 1_500 * n * (n - 1) })
	if rw := row(t, r, report.AnalysisOccupancy, "occupancy", "absent_ns"); rw.A != absent[0] || rw.B != absent[1] {
		t.Errorf("absent %+v, want %v", rw, absent)
	}

	// No region, kind, structure or mode is on one side only, and no row
	// is a process's.
	for _, s := range r.Sections {
		for _, tb := range s.Tables {
			for _, rw := range tb.Rows {
				if rw.Only != "" || rw.DiffPct == nil {
					t.Errorf("%s / %s: %+v", s.Analysis, tb.Title, rw)
				}
			}
		}
	}
	var missing []string
	for _, m := range r.Missing {
		missing = append(missing, m.Analysis)
		if m.Analysis == report.AnalysisPOP && (m.In != "" || m.ReasonA != m.ReasonB || m.ReasonA != a.Skipped[report.AnalysisPOP] || m.ReasonA == "") {
			t.Errorf("pop missing %+v (skipped %q)", m, a.Skipped[report.AnalysisPOP])
		}
	}
	if !slices.Equal(missing, []string{report.AnalysisPOP, report.AnalysisCounters}) {
		t.Errorf("missing %v, want pop and counters", missing)
	}
}

// mpiRing stores tracetest.MPIRing(procs, steps) and returns its bundle.
func mpiRing(t *testing.T, procs, steps int) *report.Bundle {
	t.Helper()
	path := filepath.Join(t.TempDir(), fmt.Sprintf("mpiring%d.pst", procs))
	h, recs := tracetest.MPIRing(procs, steps)
	storetest.Create(t, path, h, recs)
	b, err := report.Build(context.Background(), path, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestPOPRanks16Against64 compares tracetest.MPIRing on 16 and 64 ranks,
// 10 steps: the same work per rank on four times the ranks, with its MPI
// calls as regions, so that POP applies. On both sides a rank is useful
// for 1,000 or 2,000 ns a step (in "compute", outside the MPI regions) of
// 4,000: load balance 1,500 / 2,000 = 0.75, communication efficiency
// 2,000 / 4,000 = 0.5, parallel efficiency 0.375; on an ideal network a
// step lasts the slowest rank's 2,000 ns (the allreduce waits for it, the
// messages take no time): serialisation efficiency 1, transfer efficiency
// 0.5. Against 16 ranks, 64 do 4 times the useful work: the computation
// scalability is 16/64 = 0.25 in strong scaling (the same problem), 1 in
// weak scaling (B's useful time scaled by 16/64: the same work per rank),
// and the global efficiency 0.375 × 0.25 and 0.375 (docs/pop.md). The even
// ranks wait 1,000 ns a step in MPI_Allreduce for the odd ones (Wait at
// N×N); no message waits.
func TestPOPRanks16Against64(t *testing.T) {
	const steps = 10
	r, err := Bundles(mpiRing(t, 16, steps), mpiRing(t, 64, steps), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	same := func(x float64) [2]float64 { return [2]float64{x, x} }
	times := func(x float64) [2]float64 { return [2]float64{16 * x, 64 * x} }
	checkRows(t, r, report.AnalysisPOP, "efficiencies", map[string][2]float64{
		"parallel_efficiency": same(0.375), "load_balance": same(0.75), "communication_efficiency": same(0.5)})
	checkRows(t, r, report.AnalysisPOP, "ideal network replay", map[string][2]float64{
		"serialization_efficiency": same(1), "transfer_efficiency": same(0.5), "ideal_runtime_ns": same(2_000 * steps)})
	checkRows(t, r, report.AnalysisPOP, "times", map[string][2]float64{
		"procs": {16, 64}, "runtime_ns": same(4_000 * steps), "useful_mean_ns": same(1_500 * steps), "useful_max_ns": same(2_000 * steps)})
	checkRows(t, r, report.AnalysisPOP, "scalability (B against A, the reference)", map[string][2]float64{
		"computation_scalability_strong": {1, 0.25}, "global_efficiency_strong": {0.375, 0.375 * 0.25},
		"computation_scalability_weak": {1, 1}, "global_efficiency_weak": {0.375, 0.375}})
	checkRows(t, r, report.AnalysisProfile, "exclusive time by region", map[string][2]float64{
		"compute": times(1_500 * steps), "MPI_Allreduce": times(1_000 * steps), "MPI_Irecv": times(100 * steps),
		"MPI_Send": times(1_000 * steps), "MPI_Wait": times(400 * steps), "main": {0, 0}})
	if rw := row(t, r, report.AnalysisWaitStates, "wait by pattern", "wait_nxn_ns"); rw.A != 8*1_000*steps || rw.B != 32*1_000*steps {
		t.Errorf("wait at N×N %+v, want %d and %d", rw, 8*1_000*steps, 32*1_000*steps)
	}
	if rw := row(t, r, report.AnalysisWaitStates, "totals", "wait_ns"); rw.A != 8*1_000*steps || rw.B != 32*1_000*steps {
		t.Errorf("wait %+v: only the allreduces wait", rw)
	}
}
