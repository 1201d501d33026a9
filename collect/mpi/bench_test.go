package mpi

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// BenchmarkShim measures the shim's cost per MPI call with
// testdata/pingpong.c on MPICH, which times its own loop (so start-up and
// the merge are left out): without the shim, with it preloaded but not
// recording (no PARSCOPE_MPI_DIR), and recording. "self" is one rank
// calling MPI_Sendrecv to itself (two records a call), "barrier" one rank
// calling MPI_Barrier on MPI_COMM_SELF (one collective record a call, and
// almost no MPI work), "pingpong" two ranks bouncing 8 bytes. It reports
// rank 0's wall-clock and CPU ns per MPI call; the difference between the
// cases is the shim's cost. Each iteration is one run of the program: use
// -benchtime=Nx.
func BenchmarkShim(b *testing.B) {
	cc, run, lib := setup(b, mpichImpl)
	exe := compile(b, cc, "testdata/pingpong.c")
	for _, mode := range []struct {
		name  string
		ranks int
		n     int
	}{{"barrier", 1, 2000000}, {"self", 1, 1000000}, {"pingpong", 2, 20000}} {
		for _, how := range []string{"plain", "preloaded", "recording"} {
			b.Run(mode.name+"/"+how, func(b *testing.B) {
				var wall, cpu float64
				var calls int
				for range b.N {
					dir := b.TempDir()
					c := exec.Command(run, "-np", fmt.Sprint(mode.ranks), exe, mode.name, fmt.Sprint(mode.n))
					switch how {
					case "plain":
						c.Env = os.Environ()
					case "preloaded":
						c.Env = append(os.Environ(), "LD_PRELOAD="+lib)
					default:
						c.Env = LaunchEnv(os.Environ(), mpichImpl.Impl, lib, dir, 0)
					}
					out, err := c.CombinedOutput()
					if err != nil {
						b.Fatalf("%v\n%s", err, out)
					}
					var k int
					var w, p float64
					if _, err := fmt.Sscanf(string(out), "calls %d wall %g cpu %g", &k, &w, &p); err != nil {
						b.Fatalf("output %q: %v", out, err)
					}
					wall += w
					cpu += p
					calls += k
				}
				b.ReportMetric(0, "ns/op")
				b.ReportMetric(wall*1e9/float64(calls), "wall-ns/call")
				b.ReportMetric(cpu*1e9/float64(calls), "cpu-ns/call")
			})
		}
	}
}
