package comm

import (
	"context"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/parscope/parscope/internal/memlimit"
	"github.com/parscope/parscope/trace"
)

// deepReader generates, without holding them, the records of a run of two
// processes in which process 0 enters region 0 ("f", a function) depth
// times, one inside the other (a recursion), sends msgs messages of bytes
// bytes to process 1 at the bottom, each received at once, and returns
// from every call.
type deepReader struct {
	depth, msgs, bytes int64
	i                  int64 // next record
}

func (d *deepReader) Read(buf []trace.Record) (int, error) {
	n := 0
	for ; n < len(buf); n++ {
		i := d.i
		switch {
		case i < d.depth:
			buf[n] = trace.Enter(0, 0, i, 0)
		case i < d.depth+2*d.msgs:
			k := i - d.depth
			t := d.depth + k/2
			if k%2 == 0 {
				buf[n] = trace.Send(0, 0, t, t, 1, d.bytes, 0, 0)
			} else {
				buf[n] = trace.Recv(0, 1, t, t, 0, d.bytes, 0, 0)
			}
		case i < 2*d.depth+2*d.msgs:
			buf[n] = trace.Exit(0, 0, d.depth+d.msgs+(i-d.depth-2*d.msgs), 0)
		default:
			if n == 0 {
				return 0, io.EOF
			}
			return n, nil
		}
		d.i++
	}
	return n, nil
}

// TestDeepNestingMemory analyses 10^7 records nested a million regions
// deep under a 512 MiB memory limit: a structure's path is its parent and
// its name, never a copy of the names above it, so memory grows with the
// structures and not with the square of the depth. The numbers are checked
// against their closed form.
func TestDeepNestingMemory(t *testing.T) {
	depth, msgs := int64(1_000_000), int64(4_000_000)
	if memlimit.Race {
		depth, msgs = 10_000, 10_000
	}
	const bytes = 3
	memlimit.Run(t, 1<<30, func(t *testing.T) {
		h := &trace.Header{Runs: []trace.RunInfo{{ID: 0, Procs: 2}},
			Regions: []trace.RegionDef{{ID: 0, Label: "f", Kind: trace.RegionFunction, Parent: -1}}}
		res, err := Analyze(context.Background(), h, &deepReader{depth: depth, msgs: msgs, bytes: bytes}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(res.Nodes)) != depth+1 || res.Matched != msgs || !reflect.DeepEqual(res.Problems, Problems{}) {
			t.Fatalf("%d structures, %d matched, problems %+v; want %d, %d, none", len(res.Nodes), res.Matched, res.Problems, depth+1, msgs)
		}
		for id := range res.Nodes {
			n := &res.Nodes[id]
			own := int64(0)
			if int64(id) == depth {
				own = msgs
			}
			if int64(n.Depth) != int64(id) || n.Parent != id-1 || n.Entries != 1 || n.Aggregate.Messages != msgs ||
				n.Aggregate.Bytes != bytes*msgs || n.Own.Messages != own || n.Aggregate.Degree != 1 {
				t.Fatalf("structure %d: %+v", id, *n)
			}
		}
		deepest := res.Path(int(depth))
		if int64(len(deepest)) != 2*depth-1 || strings.Count(deepest, "f") != int(depth) {
			t.Errorf("the deepest path has %d bytes, want %d", len(deepest), 2*depth-1)
		}
		if got := res.Find(strings.Repeat("f/", 2) + "f"); len(got) != 1 || got[0] != 3 {
			t.Errorf("Find(f/f/f) = %v, want [3]", got)
		}
	})
}
