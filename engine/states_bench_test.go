package engine_test

import (
	"errors"
	"io"
	"path/filepath"
	"testing"

	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/store"
	"github.com/parscope/parscope/trace"
)

// regionBench writes a trace of 64 processes that each go n times through
// a function holding a loop that calls MPI_Send: 6 region records per
// iteration, 384·n in all.
func regionBench(b *testing.B, n int) *store.Store {
	b.Helper()
	path := filepath.Join(b.TempDir(), "bench.pst")
	w, err := store.Create(path, store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Abort()
	w.Header().Regions = []trace.RegionDef{
		{ID: 1, Kind: trace.RegionFunction, Label: "solve", Parent: -1},
		{ID: 2, Kind: trace.RegionLoop, Label: "loop", Parent: 1},
		{ID: 3, Kind: trace.RegionCall, Label: "MPI_Send", Parent: 2},
	}
	const procs = 64
	for i := range n {
		base := int64(i) * 1000
		for _, step := range []struct {
			dt   int64
			kind trace.Kind
			id   int32
		}{{0, trace.KindEnter, 1}, {100, trace.KindEnter, 2}, {300, trace.KindEnter, 3}, {500, trace.KindExit, 3}, {700, trace.KindExit, 2}, {900, trace.KindExit, 1}} {
			for p := range int32(procs) {
				r := trace.Enter(0, p, base+step.dt+int64(p), step.id)
				r.Kind = step.kind
				if err := w.Add(r); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	s, err := store.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

func drain(b *testing.B, rd trace.Reader) int {
	buf := make([]trace.Record, engine.BatchSize)
	n := 0
	for {
		k, err := rd.Read(buf)
		n += k
		if errors.Is(err, io.EOF) {
			return n
		}
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStatesFromRegions reads the state records derived from the
// regions of a 1.5 M-record trace (records/s counts the region records
// read), beside reading the region records alone.
func BenchmarkStatesFromRegions(b *testing.B) {
	s := regionBench(b, 4000)
	regions := s.Manifest().Stats.Records["enter"] + s.Manifest().Stats.Records["exit"]
	for _, from := range []engine.StatesFrom{engine.StatesRegions, engine.StatesMPI} {
		b.Run(string(from), func(b *testing.B) {
			src, _, err := engine.WithStates(s, from)
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if drain(b, src.Records(store.ReadOptions{Kinds: []trace.Kind{trace.KindState}})) == 0 {
					b.Fatal("no states")
				}
			}
			b.ReportMetric(float64(regions)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
	b.Run("regions-read-only", func(b *testing.B) {
		for b.Loop() {
			drain(b, s.Records(store.ReadOptions{Kinds: []trace.Kind{trace.KindEnter, trace.KindExit}}))
		}
		b.ReportMetric(float64(regions)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
	})
}
