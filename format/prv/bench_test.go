package prv

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/format/formattest"
	"github.com/parscope/parscope/internal/cputime"
	"github.com/parscope/parscope/trace"
)

// generate writes a time-sorted .prv of procs threads and about n records:
// per step every thread has a state, an event record with an MPI call and a
// counter, and sends a message to its neighbour.
func generate(path string, procs, steps int) (int, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	fmt.Fprintf(w, "#Paraver (01/01/70 at 00:00):%d_ns:1(%d):1:%d(", steps*100, procs, procs)
	for p := 0; p < procs; p++ {
		if p > 0 {
			w.WriteByte(',')
		}
		w.WriteString("1:1")
	}
	w.WriteString("),0\n")
	lines := 0
	for s := 0; s < steps; s++ {
		t := s * 100
		for p := 1; p <= procs; p++ {
			q := p%procs + 1
			fmt.Fprintf(w, "1:%d:1:%d:1:%d:%d:%d\n", p, p, t, t+100, 1+s%3)
			fmt.Fprintf(w, "2:%d:1:%d:1:%d:50000001:1:42000050:%d\n", p, p, t, 1000+s)
			fmt.Fprintf(w, "3:%d:1:%d:1:%d:%d:%d:1:%d:1:%d:%d:1024:7\n", p, p, t+10, t+11, q, q, t+20, t+21)
			fmt.Fprintf(w, "2:%d:1:%d:1:%d:50000001:0\n", p, p, t+50)
			lines += 4
		}
	}
	if err := w.Flush(); err != nil {
		return 0, err
	}
	return lines, f.Close()
}

// BenchmarkImport imports a generated 16-thread .prv of 320,000 lines
// (about 640,000 records) and reports records per second of wall time and
// per CPU-second of the whole process (the import is single-threaded; the
// garbage collector's work on other cores counts too), which is the
// steadier figure on a shared machine.
func BenchmarkImport(b *testing.B) {
	path := filepath.Join(b.TempDir(), "gen.prv")
	if _, err := generate(path, 16, 5000); err != nil {
		b.Fatal(err)
	}
	st, _ := os.Stat(path)
	b.SetBytes(st.Size())
	b.ReportAllocs()
	var records int64
	cpu0 := cputime.Used()
	for b.Loop() {
		w := &formattest.Count{}
		if err := (Importer{}).Import(context.Background(), []string{path}, format.Options{}, w); err != nil {
			b.Fatal(err)
		}
		records += w.N
	}
	b.ReportMetric(float64(records)/b.Elapsed().Seconds(), "records/s")
	if cpu := cputime.Used() - cpu0; cpu > 0 {
		b.ReportMetric(float64(records)/cpu.Seconds(), "records/cpu-s")
	}
}

// TestGenerated checks the generator's trace imports with the expected counts.
func TestGenerated(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gen.prv")
	if _, err := generate(path, 4, 50); err != nil {
		t.Fatal(err)
	}
	m, err := formattest.Import(t, Importer{}, []string{path}, format.Options{})
	if err != nil {
		t.Fatal(err)
	}
	n := formattest.CountKinds(m.Records)
	want := map[trace.Kind]int{trace.KindState: 200, trace.KindEnter: 200, trace.KindExit: 200, trace.KindCounter: 200, trace.KindSend: 200, trace.KindRecv: 200}
	for k, v := range want {
		if n[k] != v {
			t.Errorf("%s records = %d, want %d", k, n[k], v)
		}
	}
	if len(m.H.Repairs) != 0 {
		t.Errorf("repairs %v, want none", m.H.Repairs)
	}
}
