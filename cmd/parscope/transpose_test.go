package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"
)

// gtPhase is one phase of the ground truth: the first and last event
// index and the dominant event.
type gtPhase struct {
	start, end int
	dominant   string
}

// transposePhases is the ground truth of examples/transpose for an n×n
// matrix whose rows and columns divide evenly (k = n/15 per worker): the
// runs of each process's event sequence. The master sends n rows and
// receives n columns; a worker receives k rows, computes k rows, sends and
// receives 14 blocks, computes k columns and sends k back.
func transposePhases(n int) (master, worker []gtPhase) {
	k := n / 15
	master = []gtPhase{{0, n, "send_row"}, {n + 1, 2 * n, "recv_res"}, {2*n + 1, 2*n + 1, "program_sp"}}
	// program_st (index 0) joins the first run: a run of one event has no
	// low stretch before the next change.
	runs := []struct {
		name string
		len  int
	}{{"recv_row", k + 1}, {"row_calc", k}, {"send_col", 14}, {"recv_col", 14}, {"col_calc", k}, {"send_res", k}, {"program_sp", 1}}
	at := 0
	for _, r := range runs {
		worker = append(worker, gtPhase{at, at + r.len - 1, r.name})
		at += r.len
	}
	return master, worker
}

// The matrix-transpose workload (examples/transpose, 16 processes, rows
// then columns, the paper's AIMS example): the phases mentropy finds per
// process against the workload's ground truth.
//
// With Table 4's table, K = 100 and uniform p over a worker's 8 events, the
// first event of a new run (β case) has H ≥ 100·(1/8)·g(β₄ = 0.01) = 0.576,
// its second (α, I = 1) 0.195, and every later one (I ≥ 2) at most 0.0061.
// So with T = 0.1 a run of k events leaves k−2 low events, and the event
// after it starts a new phase exactly (tolerance 0: the rise is the
// change event itself) when k−2 ≥ --min-low = 3. With n = 90 every run but
// the opening program_st has ≥ 5 events and each phase is one run of the
// ground truth. With n = 45 (3 rows per worker) the row runs are too short
// and merge into the exchange: the detector's resolution limit.
func TestMentropyTransposePhases(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the example")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "transpose")
	if out, err := exec.Command("go", "build", "-o", bin, "../../examples/transpose").CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	m90, w90 := transposePhases(90)
	m45, _ := transposePhases(45)
	for _, c := range []struct {
		n              int
		master, worker []gtPhase
	}{
		{90, m90, w90},
		// k = 3: program_st, 3 recv_row, 3 row_calc merge into the 14
		// send_col; col_calc, send_res (3 each) and program_sp merge,
		// col_calc first on the tie.
		{45, m45, []gtPhase{{0, 20, "send_col"}, {21, 34, "recv_col"}, {35, 41, "col_calc"}}},
	} {
		t.Run(fmt.Sprint("n=", c.n), func(t *testing.T) {
			pst := filepath.Join(dir, fmt.Sprint(c.n, ".pst"))
			if out, err := exec.Command(bin, "-n", fmt.Sprint(c.n), "-work", "5", "-seed", "7", "-o", pst, "-entropy-filter=false").CombinedOutput(); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			out := mustRun(t, "mentropy", "--K", "100", "--json", "--phase-threshold", "0.1", "--min-low", "3", pst)
			got := mentropyOf(t, out).Procs
			if len(got) != 16 {
				t.Fatalf("%d processes, want 16", len(got))
			}
			for i, p := range got {
				if p.Proc != int32(i) {
					t.Fatalf("series %d is process %d", i, p.Proc)
				}
				want := c.worker
				if p.Proc == 0 {
					want = c.master
				}
				var g []gtPhase
				for _, ph := range p.Phases {
					g = append(g, gtPhase{ph.Start, ph.End, ph.Dominant})
				}
				if fmt.Sprint(g) != fmt.Sprint(want) {
					t.Errorf("process %d: phases %v, want %v", p.Proc, g, want)
				}
			}
		})
	}
}
