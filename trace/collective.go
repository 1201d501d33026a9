package trace

import (
	"fmt"
	"strings"
)

// CollectiveOp is the operation of a collective record (stored in Record.ID).
type CollectiveOp int32

// Collective operations. The numeric values are stored in .pst files.
const (
	OpUnknown CollectiveOp = iota
	OpBarrier
	OpBcast
	OpReduce
	OpAllreduce
	OpGather
	OpAllgather
	OpScatter
	OpAlltoall
	OpReduceScatter
	OpScan
	OpExscan
)

var opNames = [...]string{"unknown", "barrier", "bcast", "reduce", "allreduce", "gather",
	"allgather", "scatter", "alltoall", "reduce_scatter", "scan", "exscan"}

// String returns the lower-case name of the operation ("allreduce").
func (op CollectiveOp) String() string {
	if op >= 0 && int(op) < len(opNames) {
		return opNames[op]
	}
	return fmt.Sprintf("op(%d)", int32(op))
}

// ParseCollectiveOp maps an operation name, with or without an "mpi_"
// prefix and in any case ("MPI_Allreduce", "allreduce", "mpi_allreduce_"),
// to its CollectiveOp. Variants with a "v" or "w" suffix (gatherv,
// alltoallw) map to their base operation.
func ParseCollectiveOp(name string) (CollectiveOp, bool) {
	s := strings.ToLower(strings.TrimSpace(name))
	if t, ok := strings.CutPrefix(s, "pmpi_"); ok {
		s = t
	} else {
		s = strings.TrimPrefix(s, "mpi_")
	}
	s = strings.TrimSuffix(s, "_")
	var cands []string
	for _, c := range []string{s, strings.TrimPrefix(s, "i")} { // MPI_Iallreduce
		cands = append(cands, c, strings.TrimSuffix(c, "v"), strings.TrimSuffix(c, "w"))
	}
	for _, cand := range cands {
		for i, n := range opNames {
			if i > 0 && cand == n {
				return CollectiveOp(i), true
			}
		}
	}
	if s == "reducescatter" || s == "reduce_scatter_block" {
		return OpReduceScatter, true
	}
	return OpUnknown, false
}

// Decomposition selects how a collective is decomposed into point-to-point messages.
type Decomposition uint8

// Decomposition algorithms.
const (
	// Linear: the root exchanges directly with every other member.
	Linear Decomposition = iota
	// BinomialTree: broadcasts and reductions follow a binomial tree rooted at the root.
	BinomialTree
	// Ring: data travels around the members in rank order.
	Ring
)

// String returns "linear", "binomial" or "ring".
func (d Decomposition) String() string {
	switch d {
	case Linear:
		return "linear"
	case BinomialTree:
		return "binomial"
	case Ring:
		return "ring"
	}
	return fmt.Sprintf("decomposition(%d)", uint8(d))
}

// ParseDecomposition is the inverse of Decomposition.String.
func ParseDecomposition(s string) (Decomposition, error) {
	switch strings.ToLower(s) {
	case "linear":
		return Linear, nil
	case "binomial", "binomial-tree", "tree":
		return BinomialTree, nil
	case "ring":
		return Ring, nil
	}
	return 0, fmt.Errorf("unknown decomposition %q (want linear, binomial or ring)", s)
}

// Message is a matched point-to-point message, or one produced by
// decomposing a collective.
type Message struct {
	Run   int32
	Src   int32
	Dst   int32
	Bytes int64
	Tag   int32
	Comm  int32
	// SendT and SendEnd are the post and completion times of the send;
	// RecvT and RecvEnd those of the receive. A decomposed collective has
	// all four set to the collective's begin and end times.
	SendT, SendEnd, RecvT, RecvEnd int64
	// Collective is the operation this message was decomposed from, or OpUnknown.
	Collective CollectiveOp
}

// Decompose turns one collective operation into point-to-point messages.
// members are the participating process ids in communicator-rank order;
// root is a position in members (ignored by rootless operations); bytes is
// the per-process payload (Record.Value of the collective). The times are
// taken from t and end. A barrier carries no payload and yields messages of
// zero bytes so that its synchronisation pattern is visible.
func Decompose(op CollectiveOp, alg Decomposition, run int32, members []int32, root int, bytes int64, comm int32, t, end int64) ([]Message, error) {
	n := len(members)
	if n == 0 {
		return nil, nil
	}
	if root < 0 || root >= n {
		switch op {
		case OpBcast, OpReduce, OpGather, OpScatter:
			return nil, fmt.Errorf("collective %s: root %d is outside the communicator of %d members", op, root, n)
		}
		root = 0
	}
	var out []Message
	add := func(src, dst int, b int64) {
		if src == dst {
			return
		}
		out = append(out, Message{Run: run, Src: members[src], Dst: members[dst], Bytes: b, Comm: comm,
			SendT: t, SendEnd: end, RecvT: t, RecvEnd: end, Collective: op, Tag: -1})
	}
	fanOut := func(b int64) { // root -> everyone
		switch alg {
		case BinomialTree:
			binomial(n, root, func(from, to int) { add(from, to, b) })
		case Ring:
			for i := 0; i < n-1; i++ {
				add((root+i)%n, (root+i+1)%n, b)
			}
		default:
			for i := 0; i < n; i++ {
				add(root, i, b)
			}
		}
	}
	fanIn := func(b int64) { // everyone -> root
		switch alg {
		case BinomialTree:
			binomial(n, root, func(from, to int) { add(to, from, b) })
		case Ring:
			for i := n - 1; i > 0; i-- {
				add((root+i)%n, (root+i+1)%n, b)
			}
		default:
			for i := 0; i < n; i++ {
				add(i, root, b)
			}
		}
	}
	allToAll := func(b int64) {
		if alg == Ring {
			// n-1 steps, each member forwards to its right neighbour.
			for step := 0; step < n-1; step++ {
				for i := 0; i < n; i++ {
					add(i, (i+1)%n, b)
				}
			}
			return
		}
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				add(i, j, b)
			}
		}
	}
	switch op {
	case OpBcast, OpScatter:
		fanOut(bytes)
	case OpReduce, OpGather:
		fanIn(bytes)
	case OpBarrier:
		fanIn(0)
		fanOut(0)
	case OpAllreduce:
		fanIn(bytes)
		fanOut(bytes)
	case OpAllgather, OpAlltoall, OpReduceScatter:
		allToAll(bytes)
	case OpScan, OpExscan:
		for i := 0; i+1 < n; i++ {
			add(i, i+1, bytes)
		}
	default:
		return nil, fmt.Errorf("collective %s cannot be decomposed", op)
	}
	return out, nil
}

// binomial calls edge(parent, child) for every edge of a binomial broadcast
// tree over n members rooted at root.
func binomial(n, root int, edge func(from, to int)) {
	for mask := 1; mask < n; mask <<= 1 {
		for rel := 0; rel < mask && rel+mask < n; rel++ {
			edge((rel+root)%n, (rel+mask+root)%n)
		}
	}
}
