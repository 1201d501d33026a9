package bbv

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/format/formattest"
	"github.com/parscope/parscope/trace"
)

func TestRegistered(t *testing.T) {
	imp, err := format.Lookup("bbv")
	if err != nil {
		t.Fatal(err)
	}
	if imp.Name() != "bbv" || imp.Describe() == "" {
		t.Fatalf("got %q %q", imp.Name(), imp.Describe())
	}
}

func TestDetect(t *testing.T) {
	var imp Importer
	for _, tc := range []struct {
		head string
		want bool
	}{
		{"T:1:2   :3:4\n", true},
		{"# comment\n\n  \nT:1:2\n", true},
		{"T:1:2", true},
		{"T:12", true}, // a head cut short inside the first line
		{"", false},
		{"# only comments\n", false},
		{"0 1 2\n", false},
		{"T 1 2\n", false},
		{"Thread 1\nT:1:2\n", false},
		{" T:1:2\n", false},
	} {
		if got := imp.Detect("x", []byte(tc.head)); got != tc.want {
			t.Errorf("Detect(%q) = %v, want %v", tc.head, got, tc.want)
		}
	}
	// Through format.Detect, on a gzipped real file.
	path := dataFile(t, "phases.bb.gz")
	got, err := format.Detect(path)
	if err != nil || got.Name() != "bbv" {
		t.Fatalf("format.Detect(%s) = %v, %v", path, got, err)
	}
}

func TestImport(t *testing.T) {
	dir := t.TempDir()
	a := formattest.WriteFile(t, dir, "bb.out.4711", "T:2:10   :1:5\n\n# Thread 1\n")
	b := formattest.WriteFile(t, dir, "bb.out.815", "T:1:7\nT:3:1   :2:2\n")
	pc := formattest.WriteFile(t, dir, "bb.pc", "F:1:401000:main\nF:2:4010a0:\nF:3:7f00:std::vector<int>::push_back\n")
	m, err := formattest.Import(t, Importer{}, []string{a, b}, format.Options{Params: map[string]string{"pc": pc}})
	if err != nil {
		t.Fatal(err)
	}
	// 815 < 4711, so b is process 0 and a process 1.
	want := []trace.Record{
		trace.BBV(0, 1, 0, 0, 2, 10), trace.BBV(0, 1, 0, 0, 1, 5),
		trace.BBV(0, 0, 0, 0, 1, 7), trace.BBV(0, 0, 1, 0, 3, 1), trace.BBV(0, 0, 1, 0, 2, 2),
	}
	if !reflect.DeepEqual(m.Records, want) {
		t.Errorf("records:\n got  %v\n want %v", m.Records, want)
	}
	h := m.H
	if h.Meta.Source != "bbv" || !reflect.DeepEqual(h.Meta.Inputs, []string{a, b}) {
		t.Errorf("meta = %+v", h.Meta)
	}
	if len(h.Runs) != 1 || h.Runs[0].Procs != 2 {
		t.Errorf("runs = %+v", h.Runs)
	}
	wantProcs := []trace.ProcInfo{
		{Run: 0, Proc: 1, Name: "bb.out.4711", Extra: map[string]string{"file": a, "intervals": "1", "dim": "2", "key": "4711"}},
		{Run: 0, Proc: 0, Name: "bb.out.815", Extra: map[string]string{"file": b, "intervals": "2", "dim": "3", "key": "815"}},
	}
	if !reflect.DeepEqual(h.Procs, wantProcs) {
		t.Errorf("procs:\n got  %+v\n want %+v", h.Procs, wantProcs)
	}
	wantStates := []trace.StateDef{
		{ID: 1, Name: "main", Description: "0x401000"},
		{ID: 2, Name: "0x4010a0", Description: "0x4010a0"},
		{ID: 3, Name: "std::vector<int>::push_back", Description: "0x7f00"},
	}
	if !reflect.DeepEqual(h.States, wantStates) {
		t.Errorf("states:\n got  %+v\n want %+v", h.States, wantStates)
	}
	if err := h.Validate(); err != nil {
		t.Error(err)
	}
}

func TestImportRealFile(t *testing.T) {
	path := dataFile(t, "bzip2_rt_100M.bb.gz")
	m, err := formattest.Import(t, Importer{}, []string{path}, format.Options{Params: map[string]string{"proc": "3"}})
	if err != nil {
		t.Fatal(err)
	}
	f, err := ReadFile(path, ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Records) != f.NNZ() {
		t.Fatalf("%d records, want %d", len(m.Records), f.NNZ())
	}
	sums := make([]int64, 260)
	for _, r := range m.Records {
		if r.Kind != trace.KindBBV || r.Proc != 3 || r.Run != 0 || r.ID < 1 || r.ID > 4235 {
			t.Fatalf("bad record %v", r)
		}
		sums[r.Seq] += r.Value
	}
	for i, s := range sums {
		if s != 100000000 && s != 100000001 {
			t.Fatalf("interval %d sums to %d", i, s)
		}
	}
	if m.H.Runs[0].Procs != 4 {
		t.Errorf("procs = %d, want 4", m.H.Runs[0].Procs)
	}
}

func TestImportErrors(t *testing.T) {
	dir := t.TempDir()
	good := formattest.WriteFile(t, dir, "good.bb", "T:1:1\n")
	frac := formattest.WriteFile(t, dir, "frac.bb", "T:1:1\n\nT:1:2.5\n")
	neg := formattest.WriteFile(t, dir, "neg.bb", "T:1:1 ;2;-4\n")
	bad := formattest.WriteFile(t, dir, "bad.bb", "T:1:1\nT:1\n")
	badpc := formattest.WriteFile(t, dir, "bad.pc", "F:1:401000:main\nF:1:401010:main\n")
	badpc2 := formattest.WriteFile(t, dir, "bad2.pc", "F:1:40g000:main\n")
	for _, tc := range []struct {
		inputs []string
		params map[string]string
		want   string
	}{
		{nil, nil, "bbv: no input files"},
		{[]string{frac}, nil, frac + ":3: block 1 has count 2.5, which is not an integer"},
		{[]string{neg}, map[string]string{"quirks": "simpoint"}, neg + ":1: block 2 has negative count -4"},
		{[]string{bad}, nil, bad + ":2: column 4: expected ':' after block id 1"},
		{[]string{good, good}, map[string]string{"proc": "1"}, "applies to a single input"},
		{[]string{good}, map[string]string{"proc": "-1"}, "want a non-negative integer"},
		{[]string{good}, map[string]string{"quirks": "yes"}, `quirks="yes"`},
		{[]string{good}, map[string]string{"maxdim": "0"}, `maxdim="0"`},
		{[]string{good}, map[string]string{"pc": badpc}, badpc + ":2: block 1 is already defined on line 1"},
		{[]string{good}, map[string]string{"pc": badpc2}, badpc2 + `:1: bad address "40g000"`},
		{[]string{filepath.Join(dir, "missing.bb")}, nil, "no such file"},
	} {
		_, err := formattest.Import(t, Importer{}, tc.inputs, format.Options{Params: tc.params})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v %v: got %v, want %q", tc.inputs, tc.params, err, tc.want)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := (Importer{}).Import(ctx, []string{good}, format.Options{}, &trace.Memory{}); err == nil {
		t.Error("cancelled context: no error")
	}
}

func TestAssignProcs(t *testing.T) {
	for _, tc := range []struct {
		inputs []string
		want   []int32
	}{
		{[]string{"bb.rank10", "bb.rank2", "bb.rank0", "bb.rank1"}, []int32{3, 2, 0, 1}},
		{[]string{"d1/bb.out.900.gz", "d2/bb.out.12.gz"}, []int32{1, 0}},
		{[]string{"a.bb", "b.bb"}, []int32{0, 1}},           // no keys: input order
		{[]string{"x/run1.bb", "y/run1.bb"}, []int32{0, 1}}, // duplicate keys: input order
		{[]string{"b.7", "a.bb"}, []int32{0, 1}},            // a missing key: input order
		{[]string{"only.5"}, []int32{0}},
	} {
		got, _, err := AssignProcs(tc.inputs, "")
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("AssignProcs(%v) = %v, %v; want %v", tc.inputs, got, err, tc.want)
		}
	}
	for path, want := range map[string]int64{"bb.out.1234": 1234, "x/bb.rank3.gz": 3, "v2/phases.bb": -1, "a12b34c": 34, "n99999999999999999999": -1} {
		if got := NameKey(path); got != want {
			t.Errorf("NameKey(%q) = %d, want %d", path, got, want)
		}
	}
}

func ExampleParse() {
	in := "T:1:500   :3:250   :2:250\nT:2:1000\n\n# Thread 1\n"
	f, err := Parse("example.bb", strings.NewReader(in), ParseOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(f.Vectors), "intervals, dim", f.Dim)
	for i, v := range f.Vectors {
		fmt.Println(i, v.Blocks, v.Counts, v.Sum())
	}
	_, err = Parse("bad.bb", strings.NewReader("T:1:500\nT:0:3\n"), ParseOptions{})
	fmt.Println(err)
	// Output:
	// 2 intervals, dim 3
	// 0 [1 3 2] [500 250 250] 1000
	// 1 [2] [1000] 1000
	// bad.bb:2: column 3: block id 0: ids are 1-based
}
