package dumpi

import (
	"testing"

	"github.com/parscope/parscope/trace"
)

// BenchmarkDecode decodes one rank's file of 30,000 calls (Isend, Irecv,
// Waitall, Allreduce, Comm_rank in turn) and reports records/s; the target
// is 3 M records/s on one core (docs/performance.md).
func BenchmarkDecode(b *testing.B) {
	var calls []testCall
	for i := range uint32(6000) {
		t := i * 100
		calls = append(calls,
			testCall{"MPI_Isend", t, t + 5, false, []any{int32(8), uint16(2), int32(1), int32(7), uint16(commWorld), int32(2*i + 1)}},
			testCall{"MPI_Irecv", t + 10, t + 15, false, []any{int32(8), uint16(2), int32(1), int32(7), uint16(commWorld), int32(2*i + 2)}},
			testCall{"MPI_Waitall", t + 20, t + 30, true, append([]any{int32(2), []int32{int32(2*i + 1), int32(2*i + 2)}},
				statusArgs([3]int32{64, 1, 7}, [3]int32{64, 1, 7})...)},
			testCall{"MPI_Allreduce", t + 40, t + 50, false, []any{int32(1), uint16(2), uint8(1), uint16(commWorld)}},
			testCall{"MPI_Comm_rank", t + 60, t + 61, false, []any{uint16(commWorld), int32(0)}},
		)
	}
	file := buildFile([]int32{0, 4, 8}, calls)
	b.SetBytes(int64(len(file)))
	b.ResetTimer()
	var n int
	for b.Loop() {
		recs, err := decodeRank(file, 0, 2, 0, &trace.Header{}, newCommSet(2), map[int]bool{})
		if err != nil {
			b.Fatal(err)
		}
		n += len(recs)
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "records/s")
}
