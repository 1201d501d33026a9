package entropy_test

import (
	"errors"
	"io"
	"testing"

	"github.com/parscope/parscope/analysis/entropy"
	"github.com/parscope/parscope/analysis/state"
	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/internal/memlimit"
	"github.com/parscope/parscope/store"
	"github.com/parscope/parscope/trace"
	"github.com/parscope/parscope/trace/tracetest"
)

// TestRandomRunMemory computes the entropy of 10^7 random state records
// (64 processes among 8 states, one record per ns: a new class of parallel
// states nearly every record, millions in all), as `parscope entropy`
// does, under a 384 MiB memory limit: the classes past the budget are
// spilled instead of held (0.8 GB for 5·10^6 records before). The states
// analysis, fed the same records, counts the same classes in its own way.
func TestRandomRunMemory(t *testing.T) {
	n := 10_000_000
	if memlimit.Race {
		n = 100_000
	}
	memlimit.Run(t, 384<<20, func(t *testing.T) {
		g := &tracetest.RandomStates{Procs: 64, States: 8, Limit: n, Seed: 3}
		tr := &engine.Trace{Name: "random.pst", Header: g.Header(),
			Stats: &store.Stats{Runs: []store.RunStats{{Run: 0, Procs: 64, TMax: int64(n - 1)}}}}
		var accs []engine.Accumulator
		for _, name := range []string{entropy.Name, state.Name} {
			a, _ := engine.Lookup(name)
			acc, err := a.New(tr, a.Options())
			if err != nil {
				t.Fatal(err)
			}
			accs = append(accs, acc)
		}
		buf := make([]trace.Record, engine.BatchSize)
		for {
			k, err := g.Read(buf)
			for _, acc := range accs {
				if e := acc.Add(buf[:k]); e != nil {
					t.Fatal(e)
				}
			}
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		v, err := accs[0].Result()
		if err != nil {
			t.Fatal(err)
		}
		e := v.(*entropy.Report).Runs[0]
		v, err = accs[1].Result()
		if err != nil {
			t.Fatal(err)
		}
		s := v.(*state.Summary).Runs[0]
		if e.Rows != int64(n) || s.States != int64(n) || e.DistinctClasses < n/3 || e.DistinctClasses != s.DistinctClasses {
			t.Fatalf("%d rows, %d classes; the states analysis: %d states, %d classes", e.Rows, e.DistinctClasses, s.States, s.DistinctClasses)
		}
		if e.P != 64 || e.N != 8 || !(e.EmpiricalEntropy > 0 && e.EmpiricalEntropy <= 23.26) {
			t.Fatalf("P %d, N %d, empirical entropy %v (at most log2 of %d rows)", e.P, e.N, e.EmpiricalEntropy, n)
		}
	})
}
