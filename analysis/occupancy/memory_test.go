package occupancy

import (
	"context"
	"io"
	"slices"
	"testing"

	"github.com/parscope/parscope/internal/memlimit"
	"github.com/parscope/parscope/trace"
)

// cycleReader generates, without holding them, the records of a run of
// four processes in three states: at time 10·k (k = 0..steps-1) process i
// enters state (k+i) mod 3. The macrostate of step k has two processes in
// mode k mod 3 and one in each other mode.
type cycleReader struct {
	steps, i int64
}

func (c *cycleReader) Read(buf []trace.Record) (int, error) {
	n := 0
	for ; n < len(buf) && c.i < 4*c.steps; n++ {
		k, p := c.i/4, c.i%4
		buf[n] = trace.State(0, int32(p), 10*k, int32((k+p)%3))
		c.i++
	}
	if n == 0 {
		return 0, io.EOF
	}
	return n, nil
}

// TestLongRunMemory computes the occupancies of 10^7 records under a
// 512 MiB memory limit: without the time trace nothing is kept per record
// or per macrostate row. The tables are checked against their closed form.
func TestLongRunMemory(t *testing.T) {
	steps := int64(2_500_000)
	if memlimit.Race {
		steps = 25_000
	}
	memlimit.Run(t, 512<<20, func(t *testing.T) {
		h := &trace.Header{Runs: []trace.RunInfo{{ID: 0, Procs: 4}},
			States: []trace.StateDef{{ID: 0, Name: "a"}, {ID: 1, Name: "b"}, {ID: 2, Name: "c"}}}
		res, err := Compute(context.Background(), h, &cycleReader{steps: steps}, StateModes(h), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(res) != 1 {
			t.Fatalf("%d runs", len(res))
		}
		r := res[0]
		// The run ends at the last record, 10·(steps-1): steps-1 microstates
		// of 10 ns, each a macrostate row of its own (neighbours differ).
		if r.Records != 4*steps || r.End != 10*(steps-1) || r.Microstates != steps-1 || r.Rows != steps-1 || len(r.Table) != 3 {
			t.Fatalf("%d records, end %d, %d microstates, %d rows, %d macrostates", r.Records, r.End, r.Microstates, r.Rows, len(r.Table))
		}
		// Step k (k < steps-1) adds 10 ns to the macrostate of k mod 3.
		for j, e := range r.Table {
			want := []int32{1, 1, 1}
			want[j]++
			if n := (steps - 1 - int64(j) + 2) / 3; !slices.Equal(e.Counts, want) || e.Occupancy != 10*n {
				t.Errorf("row %d: %v for %d ns, want %v for %d ns", j, e.Counts, e.Occupancy, want, 10*n)
			}
		}
		// Process i is in mode j at the steps k with (k+i) mod 3 = j.
		for i, row := range r.Local {
			for j, v := range row {
				first := (int64(j) - int64(i)%3 + 3) % 3
				if n := (steps - 1 - first + 2) / 3; v != 10*n {
					t.Errorf("process %d mode %d: %d ns, want %d", i, j, v, 10*n)
				}
			}
		}
	})
}
