package dumpi

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/format/formattest"
	"github.com/parscope/parscope/internal/realdata"
	"github.com/parscope/parscope/trace"
)

// sample returns the path of the real 4-rank DUMPI sample's meta file
// (testdata/real/traces/dumpi), failing the test when it is missing.
func sample(t testing.TB) string {
	t.Helper()
	return realdata.Path(t, "traces/dumpi/testtrace.meta")
}

func TestLabels(t *testing.T) {
	for name, want := range map[string]int{"MPI_Send": 0, "MPI_Isend": 8, "MPI_Wait": 13, "MPI_Barrier": 52,
		"MPI_Allreduce": 65, "MPI_Comm_size": 81, "MPI_Comm_rank": 82, "MPI_Init": 124, "MPI_Finalize": 125} {
		if got := label(name); got != want {
			t.Errorf("label(%s) = %d, want %d", name, got, want)
		}
	}
	if labelEnd != 293 {
		t.Errorf("labelEnd = %d, want 293", labelEnd)
	}
}

// TestRing checks the real 4-rank sample: every rank makes the same 9
// calls, the Isend/Recv pairs form a ring, and the Allreduce moves 4 bytes.
func TestRing(t *testing.T) {
	m := formattest.MustImport(t, Importer{}, format.Options{}, sample(t))
	if m.H.Runs[0].Procs != 4 {
		t.Fatalf("procs = %d, want 4", m.H.Runs[0].Procs)
	}
	wantCalls := []string{"MPI_Init", "MPI_Comm_rank", "MPI_Comm_size", "MPI_Barrier", "MPI_Isend", "MPI_Recv", "MPI_Wait", "MPI_Allreduce", "MPI_Finalize"}
	ix := trace.NewIndex(&m.H)
	calls := map[int32][]string{}
	sends := map[int32]trace.Record{}
	recvs := map[int32]trace.Record{}
	var colls int
	for _, r := range m.Records {
		switch r.Kind {
		case trace.KindEnter:
			calls[r.Proc] = append(calls[r.Proc], ix.RegionName(r.ID))
		case trace.KindSend:
			sends[r.Proc] = r
		case trace.KindRecv:
			recvs[r.Proc] = r
		case trace.KindCollective:
			colls++
			if op := trace.CollectiveOp(r.ID); op == trace.OpAllreduce && r.Value != 4 {
				t.Errorf("allreduce of rank %d moves %d bytes, want 4", r.Proc, r.Value)
			}
		}
		if r.T < 0 || r.T > 10e9 {
			t.Errorf("record %v: time outside the run's first 10 s", r)
		}
	}
	for p := int32(0); p < 4; p++ {
		if got := calls[p]; len(got) != 9 {
			t.Errorf("rank %d calls %v, want %v", p, got, wantCalls)
			continue
		}
		for i, c := range wantCalls {
			if calls[p][i] != c {
				t.Errorf("rank %d call %d = %s, want %s", p, i, calls[p][i], c)
			}
		}
		s, r := sends[p], recvs[p]
		if s.Peer != (p+1)%4 || s.Tag != 1337 || s.Value != 4 || s.End < s.T || s.Seq < 0 {
			t.Errorf("rank %d send %v, want to %d tag 1337, 4 bytes, completed by the wait", p, s, (p+1)%4)
		}
		if r.Peer != (p+3)%4 || r.Tag != 1337 || r.Value != 4 || r.Flags != 0 {
			t.Errorf("rank %d recv %v, want from %d tag 1337", p, r, (p+3)%4)
		}
	}
	// The README: all ranks together cover walltime 1296777956.737669 to
	// .743226 (the .meta's startime is the origin).
	lo, hi := int64(1<<62), int64(0)
	for _, r := range m.Records {
		lo, hi = min(lo, r.T), max(hi, r.EndTime())
	}
	if lo < 737669000 || lo >= 737670000 || hi < 743226000 || hi >= 743227000 {
		t.Errorf("walltime span [%d, %d] ns, want [737669xxx, 743226xxx]", lo, hi)
	}
	if colls != 8 {
		t.Errorf("collectives = %d, want 8 (barrier and allreduce on 4 ranks)", colls)
	}
	m.Sort()
	var mt trace.Matcher
	matched := 0
	mt.OnMatch = func(s, r *trace.Record) {
		matched++
		if r.Proc != s.Peer || (s.Proc+1)%4 != r.Proc {
			t.Errorf("matched %v with %v: not a ring edge", s, r)
		}
	}
	for i := range m.Records {
		mt.Add(&m.Records[i])
	}
	if us, ur := mt.Unmatched(); matched != 4 || len(us)+len(ur) != 0 {
		t.Errorf("matched %d messages, %d/%d unmatched; want 4 and none", matched, len(us), len(ur))
	}
	if err := m.H.Validate(); err != nil {
		t.Error(err)
	}
}

// TestCorrupt truncates and damages a rank file: the error must name the
// file and a byte offset, never panic.
func TestCorrupt(t *testing.T) {
	meta := sample(t)
	src, err := os.ReadFile(filepath.Join(filepath.Dir(meta), "testtrace-0000.bin"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		mod  func([]byte) []byte
	}{
		{"truncated", func(b []byte) []byte { return b[:len(b)/2] }},
		{"badmagic", func(b []byte) []byte { b[0] = 0; return b }},
		{"badlabel", func(b []byte) []byte { b[16], b[17] = 0x7f, 0xff; return b }},
		{"empty", func(b []byte) []byte { return nil }},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			mp := filepath.Join(dir, "x.meta")
			os.WriteFile(mp, []byte("numprocs=1\nfileprefix=x\n"), 0o644)
			os.WriteFile(filepath.Join(dir, "x-0000.bin"), c.mod(append([]byte(nil), src...)), 0o644)
			err := (Importer{}).Import(context.Background(), []string{mp}, format.Options{}, &trace.Memory{})
			var fe *format.Error
			if !errors.As(err, &fe) || fe.Offset < 0 || filepath.Base(fe.File) != "x-0000.bin" {
				t.Fatalf("error %v: want a format.Error at a byte offset of x-0000.bin", err)
			}
		})
	}
}
