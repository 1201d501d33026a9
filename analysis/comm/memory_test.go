package comm

import (
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/engine/enginetest"
	"github.com/parscope/parscope/internal/memlimit"
	"github.com/parscope/parscope/store"
	"github.com/parscope/parscope/store/storetest"
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
// deep under a 1 GiB memory limit: a structure's path is its parent and
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

// countWriter counts the bytes written to it.
type countWriter struct{ n int64 }

func (w *countWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	return len(p), nil
}

// TestDeepNestingEngine runs the comm analysis as every face does, through
// the engine on a .pst store, on a recursion a million regions deep, and
// writes its JSON envelope, under a 4 GiB memory limit: the result puts the
// structures in canonical order and the JSON holds each structure's parent,
// never its path, so memory grows with the structures and not with the
// square of the depth (building every path, as the canonical order once
// did, needs 10^12 bytes here).
func TestDeepNestingEngine(t *testing.T) {
	depth, msgs := int64(1_000_000), int64(100_000)
	if memlimit.Race {
		depth, msgs = 10_000, 1_000
	}
	const bytes = 3
	// The JSON of the envelope is encoded in memory (590 bytes per
	// structure here, in a buffer that grows by doubling): most of the
	// limit is for it.
	memlimit.Run(t, 4<<30, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "deep.pst")
		w, err := store.Create(path, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Abort()
		h := w.Header()
		h.Runs = []trace.RunInfo{{ID: 0, Procs: 2}}
		h.Regions = []trace.RegionDef{{ID: 0, Label: "f", Kind: trace.RegionFunction, Parent: -1}}
		if err := trace.Each(&deepReader{depth: depth, msgs: msgs, bytes: bytes}, func(r *trace.Record) error { return w.Add(*r) }); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		env := enginetest.Run(t, storetest.Open(t, path), engine.Request{Analysis: Name}).Get(Name)
		rep := env.Result.(*Report)
		if len(rep.Runs) != 1 {
			t.Fatalf("%d runs", len(rep.Runs))
		}
		res := rep.Runs[0]
		if int64(len(res.Nodes)) != depth+1 || res.Matched != msgs || !reflect.DeepEqual(res.Problems, Problems{}) || len(res.Matrices) != len(res.Nodes) {
			t.Fatalf("%d structures, %d matrices, %d matched, problems %+v; want %d, %d, none", len(res.Nodes), len(res.Matrices), res.Matched, res.Problems, depth+1, msgs)
		}
		// Every path is one "f" longer than its parent's: the canonical
		// order is the order of depth.
		for id := range res.Nodes {
			n := &res.Nodes[id]
			own := int64(0)
			if int64(id) == depth {
				own = msgs
			}
			if int64(n.Depth) != int64(id) || n.Parent != id-1 || n.Entries != 1 || n.Aggregate.Messages != msgs ||
				n.Aggregate.Bytes != bytes*msgs || n.Own.Messages != own || n.Aggregate.Degree != 1 ||
				n.WorkingSets == nil || n.WorkingSets.MaxPairs != 1 {
				t.Fatalf("structure %d: %+v", id, *n)
			}
		}
		if b, c := res.Matrices[depth].Own.At(0, 1); b != bytes*msgs || c != msgs || res.RankOwn.ByVolume[0] != int(depth) {
			t.Errorf("the deepest structure sent %d bytes in %d messages and ranks %d; want %d in %d, first", b, c, res.RankOwn.ByVolume[0], bytes*msgs, msgs)
		}
		if deepest := res.Path(int(depth)); int64(len(deepest)) != 2*depth-1 {
			t.Errorf("the deepest path has %d bytes, want %d", len(deepest), 2*depth-1)
		}
		var cw countWriter
		if err := json.NewEncoder(&cw).Encode(env); err != nil {
			t.Fatal(err)
		}
		// A structure's JSON holds its numbers, not its path.
		if per := cw.n / (depth + 1); per > 1024 {
			t.Errorf("the envelope has %d bytes, %d per structure", cw.n, per)
		}
		t.Logf("%d structures, JSON of %d MiB", len(res.Nodes), cw.n>>20)
	})
}
