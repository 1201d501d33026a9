package gomez

import (
	"reflect"
	"testing"

	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/format/formattest"
	"github.com/parscope/parscope/trace"
)

// TestRenumberPids checks the dense renumbering of sparse pids: three lines
// of pid 1,000,000 are one process labelled with its pid, and pids 3, 70
// and 1,000,000 over two runs and two files are processes 0, 1 and 2 in
// pid order, each run labelled.
func TestRenumberPids(t *testing.T) {
	one := formattest.WriteFile(t, "", "one.txt", "0 1 1000000\n10 2 1000000\n20 1 1000000\n")
	m, err := formattest.Import(t, Importer{}, []string{one}, format.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Header().Runs; len(got) != 1 || got[0].Procs != 1 {
		t.Fatalf("runs = %+v, want one run of 1 process", got)
	}
	want := []trace.ProcInfo{{Run: 0, Proc: 0, Name: "pid 1000000", Extra: map[string]string{"pid": "1000000"}}}
	if got := m.Header().Procs; !reflect.DeepEqual(got, want) {
		t.Errorf("procs = %+v, want %+v", got, want)
	}
	for _, r := range m.Records {
		if r.Proc != 0 {
			t.Fatalf("record %+v: process %d, want 0", r, r.Proc)
		}
	}

	a := formattest.WriteFile(t, "", "a.txt", "0 1 70\n5 2 3\n9 1 70\n0 4 3\n")
	b := formattest.WriteFile(t, "", "b.txt", "1 1 1000000\n2 1 1000000\n")
	m, err = formattest.Import(t, Importer{}, []string{a, b}, format.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Header().Runs; len(got) != 2 || got[0].Procs != 3 || got[1].Procs != 1 {
		t.Fatalf("runs = %+v, want 3 processes in run 0 and 1 (pid 3) in run 1", got)
	}
	var names []string
	for _, p := range m.Header().Procs {
		names = append(names, p.Name)
	}
	if want := []string{"pid 3", "pid 70", "pid 1000000", "pid 3"}; !reflect.DeepEqual(names, want) {
		t.Errorf("process names %q, want %q", names, want)
	}
	var got [][2]int32 // run, proc of each record in file order
	for _, r := range m.Records {
		got = append(got, [2]int32{r.Run, r.Proc})
	}
	if want := [][2]int32{{0, 1}, {0, 0}, {0, 1}, {1, 0}, {0, 2}, {0, 2}}; !reflect.DeepEqual(got, want) {
		t.Errorf("records (run, process) = %v, want %v", got, want)
	}
}

// TestDensePidsKept checks that pids already 0..P-1 are neither renumbered
// nor labelled.
func TestDensePidsKept(t *testing.T) {
	p := formattest.WriteFile(t, "", "dense.txt", "0 1 2\n1 1 0\n2 1 1\n")
	m, err := formattest.Import(t, Importer{}, []string{p}, format.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Header().Procs) != 0 || m.Header().Runs[0].Procs != 3 {
		t.Fatalf("procs %+v, runs %+v: want no labels and 3 processes", m.Header().Procs, m.Header().Runs)
	}
	for i, want := range []int32{2, 0, 1} {
		if m.Records[i].Proc != want {
			t.Errorf("record %d: process %d, want %d", i, m.Records[i].Proc, want)
		}
	}
}
