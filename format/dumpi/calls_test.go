package dumpi

import (
	"bytes"
	"os"
	"slices"
	"testing"

	"github.com/parscope/parscope/format/dumpi/internal/callgen"
	"github.com/parscope/parscope/trace"
)

// TestGeneratedUpToDate checks that calls_gen.go is what gencalls writes
// from calls.txt, so the table stays the one source of the layout.
func TestGeneratedUpToDate(t *testing.T) {
	src, err := os.ReadFile("calls.txt")
	if err != nil {
		t.Fatal(err)
	}
	want, err := callgen.Generate(src)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("calls_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("calls_gen.go is stale: run go generate ./format/dumpi")
	}
}

// tableCalls parses calls.txt.
func tableCalls(t testing.TB) []callgen.Call {
	t.Helper()
	src, err := os.ReadFile("calls.txt")
	if err != nil {
		t.Fatal(err)
	}
	calls, err := callgen.Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	return calls
}

// TestSharedLayouts checks the calls that rank.go and comms.go decode with
// another call's reader: their layouts in the table must be the same.
func TestSharedLayouts(t *testing.T) {
	calls := tableCalls(t)
	if len(calls) != len(functionNames) || labelEnd != len(calls)+3 {
		t.Fatalf("%d table lines, %d names, labelEnd %d", len(calls), len(functionNames), labelEnd)
	}
	layout := func(name string) []callgen.Arg { return calls[label(name)].Args }
	for _, g := range [][]string{
		{"MPI_Send", "MPI_Bsend", "MPI_Ssend", "MPI_Rsend"},
		{"MPI_Isend", "MPI_Ibsend", "MPI_Issend", "MPI_Irsend"},
		{"MPI_Wait", "MPIO_Wait"}, {"MPI_Test", "MPIO_Test"},
		{"MPI_Waitall", "MPIO_Waitall"}, {"MPI_Testall", "MPIO_Testall"},
		{"MPI_Waitsome", "MPI_Testsome", "MPIO_Waitsome", "MPIO_Testsome"},
		{"MPI_Allreduce", "MPI_Scan", "MPI_Exscan"}, {"MPI_Allgather", "MPI_Alltoall"},
		{"MPI_Group_incl", "MPI_Group_excl"}, {"MPI_Group_range_incl", "MPI_Group_range_excl"},
		{"MPI_Group_union", "MPI_Group_intersection", "MPI_Group_difference"},
		{"MPI_Comm_size", "MPI_Comm_rank"},
	} {
		for _, n := range g[1:] {
			a, b := layout(g[0]), layout(n)
			same := len(a) == len(b)
			for i := 0; same && i < len(a); i++ {
				same = callgen.GoType(a[i].Type) == callgen.GoType(b[i].Type) && a[i].Cond == b[i].Cond
			}
			if !same {
				t.Errorf("%s and %s differ: %v / %v", g[0], n, a, b)
			}
		}
	}
	// Every label but MPI_Pcontrol is written by libdumpi.
	for _, c := range calls {
		if c.Unwritten != (c.Name == "MPI_Pcontrol") || unwritten(c.Label) != c.Unwritten {
			t.Errorf("%s: unwritten = %v", c.Name, c.Unwritten)
		}
	}
}

// tableArgs returns arguments for every argument of c in file order, as
// libdumpi's writer puts them: counts of 1 for arrays, condition arguments
// equal (so conditional arguments are present), statuses when status.
func tableArgs(c callgen.Call, oldVersion bool) []any {
	var out []any
	for _, a := range c.Args {
		if oldVersion && a.Since != [3]int{} || !oldVersion && a.Before != [3]int{} && !a.DupCount {
			continue
		}
		switch a.Type {
		case "byte", "op":
			out = append(out, uint8(1))
		case "comm", "group", "datatype", "file", "info", "win", "errhandler", "keyval":
			out = append(out, uint16(2))
		case "int", "dest", "source", "tag", "request":
			out = append(out, int32(0))
		case "int64":
			out = append(out, uint64(7))
		case "int[]", "request[]":
			out = append(out, []int32{0})
		case "datatype[]", "info[]":
			out = append(out, uint32(1), uint16(2))
		case "byte[]":
			out = append(out, uint32(1), uint8(1))
		case "char[]":
			out = append(out, uint32(2), uint8('h'), uint8('i'))
		case "char[][]", "int[][]":
			out = append(out, uint32(1), uint32(1), uint8('x'))
			if a.Type == "int[][]" {
				out = append(out[:len(out)-1], int32(5))
			}
		case "char[][][]":
			out = append(out, uint32(1), uint32(1), uint32(1), uint8('x'))
		case "status":
			if oldVersion { // no tag before 0.6.3
				out = append(out, int32(1), int32(4), int32(0), uint8(0), uint8(0))
			} else {
				out = append(out, statusArgs([3]int32{4, 0, 9})...)
			}
		case "argv":
			out = append(out, uint32(1))
			if a.DupCount && oldVersion {
				out = append(out, uint32(1))
			}
			out = append(out, uint32(1), uint8('a'))
		}
	}
	return out
}

// TestEveryCall writes one record of every label libdumpi writes, with
// statuses, into one file and decodes it: every call must be read to its
// last byte (the next record starts where the table says) and become a
// region.
func TestEveryCall(t *testing.T) {
	for _, old := range []bool{false, true} {
		var cs []testCall
		for _, c := range tableCalls(t) {
			if !c.Unwritten {
				cs = append(cs, testCall{c.Name, 10, 20, true, tableArgs(c, old)})
			}
		}
		b := buildFile([]int32{0, 4, 8}, cs)
		if old {
			b = setVersion(b, 0, 6, 1)
		}
		seen := map[int]bool{}
		recs, err := decodeRank(b, 0, 2, 0, &trace.Header{}, newCommSet(2), seen)
		if err != nil {
			t.Fatalf("old=%v: %v", old, err)
		}
		if len(seen) != len(functionNames)-1 {
			t.Errorf("old=%v: %d labels decoded, want %d", old, len(seen), len(functionNames)-1)
		}
		enters := 0
		for _, r := range recs {
			if r.Kind == trace.KindEnter {
				enters++
			}
		}
		if enters != len(cs) {
			t.Errorf("old=%v: %d regions, want %d", old, enters, len(cs))
		}
	}
}

// setVersion rewrites the version bytes of a file built by buildFile.
func setVersion(b []byte, x, y, z uint8) []byte {
	ix, err := readIndex(b)
	if err != nil {
		panic(err)
	}
	b = slices.Clone(b)
	b[ix.header], b[ix.header+1], b[ix.header+2] = x, y, z
	return b
}
