package annotated

import (
	"bufio"
	"fmt"
	"io"
)

// Generate writes a synthetic annotated trace of one rank of a ring
// exchange among nprocs processes, for tests and benchmarks. The trace
// declares itself ("# rank R of N"), wraps its call records over several
// lines as Figure 4 does, and for each of steps iterations enters an IF
// region, posts an mpi_irecv_ from the left neighbour, sends to the right
// one with mpi_send_, waits for the receive with mpi_wait_ and leaves the
// region; every eighth iteration ends with an mpi_allreduce_. The whole is
// inside one loop region and framed by mpi_init_ and mpi_finalize_.
// Timestamps are deterministic, so the files of all ranks form a
// consistent trace whose sends and receives match. Each iteration yields 5
// records (6 with the allreduce).
func Generate(w io.Writer, rank, nprocs, steps int) error {
	if nprocs <= 0 || rank < 0 || rank >= nprocs || steps < 0 {
		return fmt.Errorf("annotated: cannot generate rank %d of %d processes over %d steps", rank, nprocs, steps)
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	left, right := (rank+nprocs-1)%nprocs, (rank+1)%nprocs
	t := int64(1000_000_000_000) + int64(rank)*1500 // ns; ranks start 1.5 µs apart
	prevEnd := int64(0)
	// stamps returns "[ t_end_prev t_start ]" for a call lasting d ns and
	// advances the clock by d plus some computation.
	stamps := func(d, compute int64) string {
		s := fmt.Sprintf("[ %d.%09d %d.%09d ]", prevEnd/1e9, prevEnd%1e9, t/1e9, t%1e9)
		prevEnd = t + d
		t = prevEnd + compute
		return s
	}
	fmt.Fprintf(bw, "# rank %d of %d\n", rank, nprocs)
	fmt.Fprintf(bw, "mpi_init_() [#5@main_@\"ring.f\"] %s\n", stamps(2000, 5000))
	fmt.Fprintf(bw, "--- LOOP_100 starts --- [#100@ring_@\"ring.f\"]\n")
	for i := 0; i < steps; i++ {
		tag := 1000 + i%7
		req := 300 + i%4
		fmt.Fprintf(bw, "--- IF_101 starts --- [#101@ring_@\"ring.f\"]\n")
		fmt.Fprintf(bw, "[D]mpi_irecv_(count=%d datatype=27 src=%d\ntag=%d Communicator=91 request=%d)\n[#102:ring.: \"ring.f\"] %s { typesize = 8 }\n",
			1024+i%16, left, tag, req, stamps(300, 700))
		fmt.Fprintf(bw, "[D]mpi_send_(count=%d datatype=27 dst=%d\ntag=%d Communicator=91) [#103@ring.: \"ring.f\"]\n%s { typesize = 8 }\n",
			1024+i%16, right, tag, stamps(4000, 200))
		fmt.Fprintf(bw, "mpi_wait_(request=%d) [#104@ring.: \"ring.f\"]\n%s\n", req, stamps(1500, 9000))
		fmt.Fprintf(bw, "+++ IF_101 ends +++ [#105@ring_@\"ring.f\"]\n")
		if i%8 == 7 {
			fmt.Fprintf(bw, "mpi_allreduce_(count=1 datatype=27 op=3 Communicator=91) [#107@ring.: \"ring.f\"]\n%s { typesize = 8 }\n", stamps(25000, 3000))
		}
	}
	fmt.Fprintf(bw, "+++ LOOP_100 ends +++ [#110@ring_@\"ring.f\"]\n")
	fmt.Fprintf(bw, "mpi_finalize_() [#120@main_@\"ring.f\"] %s\n", stamps(1000, 0))
	return bw.Flush()
}
