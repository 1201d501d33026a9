package mpi

import (
	"strconv"

	"github.com/parscope/parscope/trace"
)

// Func is an MPI function as numbered in event records (shim.h's
// PS_FUNCS list; funcs_test.go checks the two agree).
type Func uint32

// funcNames are the functions by number, without the "MPI_" prefix.
var funcNames = map[Func]string{
	1: "Send", 2: "Bsend", 3: "Ssend", 4: "Rsend", 5: "Recv", 6: "Isend", 7: "Ibsend", 8: "Issend", 9: "Irsend",
	10: "Irecv", 11: "Sendrecv", 12: "Sendrecv_replace", 13: "Wait", 14: "Waitall", 15: "Waitany", 16: "Waitsome",
	17: "Test", 18: "Testall", 19: "Testany", 20: "Testsome", 21: "Barrier", 22: "Bcast", 23: "Reduce",
	24: "Allreduce", 25: "Gather", 26: "Gatherv", 27: "Scatter", 28: "Scatterv", 29: "Allgather", 30: "Allgatherv",
	31: "Alltoall", 32: "Alltoallv", 33: "Reduce_scatter", 34: "Reduce_scatter_block", 35: "Scan", 36: "Exscan",
	37: "Pcontrol", 38: "Request_free",
}

// fnRequestFree is MPI_Request_free, whose completion record releases a
// request without completing its message.
const fnRequestFree Func = 38

// String returns the MPI name ("MPI_Send"), or "MPI function N" for a
// number the table does not know.
func (f Func) String() string {
	if n, ok := funcNames[f]; ok {
		return "MPI_" + n
	}
	return "MPI function " + strconv.FormatUint(uint64(f), 10)
}

// Collective returns the collective operation of f, or false when f is
// not a collective.
func (f Func) Collective() (trace.CollectiveOp, bool) {
	n, ok := funcNames[f]
	if !ok || f < 21 || f > 36 {
		return trace.OpUnknown, false
	}
	if n == "Reduce_scatter_block" {
		return trace.OpReduceScatter, true
	}
	return trace.ParseCollectiveOp(n)
}
