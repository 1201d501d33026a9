package store

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/parscope/parscope/trace"
)

// benchRecords returns n state records over procs processes in time order,
// like a merged "time block pid" trace of Gomez, Cai & Schubert (2017): each process steps through blocks 1..13
// with random dwell times in microseconds.
func benchRecords(n, procs int) []trace.Record {
	rng := rand.New(rand.NewPCG(9, 9))
	next := make([]int64, procs)
	block := make([]int32, procs)
	recs := make([]trace.Record, 0, n)
	// A simple time-ordered generator: advance the process with the
	// smallest next time; with many processes use a round-robin of random
	// increments, which keeps time order per step.
	t := int64(0)
	for len(recs) < n {
		for p := 0; p < procs && len(recs) < n; p++ {
			if next[p] <= t {
				block[p] = block[p]%13 + 1
				recs = append(recs, trace.State(0, int32(p), t*1000, block[p]))
				next[p] = t + int64(rng.IntN(40)+1)
			}
		}
		t++
	}
	return recs
}

// benchHeader is the header of the benchmarks' traces: a clock of 1 µs.
var benchHeader = trace.Header{Meta: trace.Meta{ClockResolution: 1000}}

func benchStore(b *testing.B, n, procs int) string {
	b.Helper()
	dir := b.TempDir()
	path := filepath.Join(dir, "b.pst")
	writeStore(b, path, Options{}, benchHeader, benchRecords(n, procs))
	return path
}

// BenchmarkWrite measures writing time-ordered state records into a .pst.
func BenchmarkWrite(b *testing.B) {
	for _, procs := range []int{16, 4096} {
		b.Run(fmt.Sprintf("procs=%d", procs), func(b *testing.B) {
			const n = 2_000_000
			recs := benchRecords(n, procs)
			dir := b.TempDir()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				writeStore(b, filepath.Join(dir, fmt.Sprint(i, ".pst")), Options{}, benchHeader, recs)
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
}

// BenchmarkWriteSmall measures writing a store of 2,000 records of four
// kinds (states, regions, messages, events): the size of a filtered
// recording, which the instrumented program writes at exit, where the
// fixed cost of each table's writer is what counts.
func BenchmarkWriteSmall(b *testing.B) {
	var recs []trace.Record
	for i := range 500 {
		t, p := int64(i)*5000, int32(i%4)
		recs = append(recs, trace.State(0, p, t, int32(i%3)), trace.Enter(0, p, t+1000, 1),
			trace.Send(0, p, t+2000, t+3000, (p+1)%4, 64, 0, 0), trace.Event(0, p, t+4000, 7, int64(i)))
	}
	dir := b.TempDir()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		writeStore(b, filepath.Join(dir, fmt.Sprint(i, ".pst")), Options{}, benchHeader, recs)
	}
}

// BenchmarkWriteUnsorted measures writing the same records process by
// process, which takes the sort-and-spill path.
func BenchmarkWriteUnsorted(b *testing.B) {
	const n, procs = 2_000_000, 16
	recs := benchRecords(n, procs)
	byProc := make([]trace.Record, 0, n)
	for p := int32(0); p < procs; p++ {
		for _, r := range recs {
			if r.Proc == p {
				byProc = append(byProc, r)
			}
		}
	}
	dir := b.TempDir()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		writeStore(b, filepath.Join(dir, fmt.Sprint(i, ".pst")), Options{ChunkRows: 1 << 19}, benchHeader, byProc)
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkReadMerged measures reading the time-merged stream back.
func BenchmarkReadMerged(b *testing.B) {
	for _, procs := range []int{16, 4096} {
		b.Run(fmt.Sprintf("procs=%d", procs), func(b *testing.B) {
			const n = 4_000_000
			path := benchStore(b, n, procs)
			st, err := dirSize(path)
			if err != nil {
				b.Fatal(err)
			}
			s, err := Open(path)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			buf := make([]trace.Record, 4096)
			var ms runtime.MemStats
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				r := s.Records(ReadOptions{})
				total := 0
				var last int64
				for {
					k, err := r.Read(buf)
					if k > 0 {
						total += k
						last = buf[k-1].T
					}
					if err != nil {
						break
					}
				}
				if total != n || last == 0 {
					b.Fatalf("read %d records, want %d", total, n)
				}
			}
			b.StopTimer()
			runtime.ReadMemStats(&ms)
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
			b.ReportMetric(float64(st)/n, "bytes/record")
		})
	}
}

// BenchmarkReadProcess measures reading one process's stream.
func BenchmarkReadProcess(b *testing.B) {
	for _, procs := range []int{16, 4096} {
		b.Run(fmt.Sprintf("procs=%d", procs), func(b *testing.B) {
			const n = 4_000_000
			path := benchStore(b, n, procs)
			s, err := Open(path)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			b.ResetTimer()
			got := 0
			for i := 0; i < b.N; i++ {
				recs, err := trace.ReadAll(s.Process(0, int32(i%procs)))
				if err != nil || len(recs) == 0 {
					b.Fatalf("process %d: %d records, %v", i%procs, len(recs), err)
				}
				got += len(recs)
			}
			b.ReportMetric(float64(got)/b.Elapsed().Seconds(), "records/s")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e6, "ms/process")
		})
	}
}

func dirSize(dir string) (int64, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	var n int64
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil {
			return 0, err
		}
		n += fi.Size()
	}
	return n, nil
}

// BenchmarkReadGenericRows is the peer for BenchmarkReadMerged: the same
// states table read with parquet-go's generic row reader into structs, in
// storage order (no time merge). Typed page reads plus the merge should beat it.
func BenchmarkReadGenericRows(b *testing.B) {
	const n, procs = 4_000_000, 16
	path := benchStore(b, n, procs)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		f, err := os.Open(filepath.Join(path, tStates.file()))
		if err != nil {
			b.Fatal(err)
		}
		r := parquet.NewGenericReader[stateRow](f)
		rows := make([]stateRow, 4096)
		total := 0
		for {
			k, err := r.Read(rows)
			total += k
			if err != nil {
				break
			}
		}
		r.Close()
		f.Close()
		if total != n {
			b.Fatalf("read %d rows, want %d", total, n)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
}
