package store

import (
	"bytes"
	"cmp"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/parscope/parscope/trace"
)

// randomTrace builds per-process streams of every timed kind over several
// runs, plus BBVs. Times are multiples of unit.
func randomTrace(seed uint64, runs, procs, perProc int, unit int64) (*trace.Memory, [][]trace.Record) {
	rng := rand.New(rand.NewPCG(seed, 7))
	m := &trace.Memory{}
	m.H.Meta.ClockResolution = unit
	var streams [][]trace.Record
	for run := int32(0); run < int32(runs); run++ {
		for p := int32(0); p < int32(procs); p++ {
			var s []trace.Record
			t := int64(0)
			for i := 0; i < perProc; i++ {
				if rng.IntN(4) > 0 { // equal timestamps happen
					t += int64(rng.IntN(50)) * unit
				}
				var r trace.Record
				switch rng.IntN(8) {
				case 0, 1, 2:
					r = trace.State(run, p, t, int32(rng.IntN(13)+1))
				case 3:
					r = trace.Enter(run, p, t, int32(rng.IntN(5)))
				case 4:
					r = trace.Send(run, p, t, t+int64(rng.IntN(9))*unit, int32(rng.IntN(procs)), int64(rng.IntN(1<<20)), int32(rng.IntN(3)), 0)
					r.Flags = trace.FlagDynamic
					r.Seq = int32(rng.IntN(100)) - 1
				case 5:
					r = trace.Coll(run, p, t, t+unit, trace.OpAllreduce, -1, 8, 0)
				case 6:
					r = trace.Event(run, p, t, int32(rng.IntN(4)), rng.Int64N(1000)-500)
				case 7:
					r = trace.Counter(run, p, t, 1, rng.Float64()*1e6)
				}
				s = append(s, r)
			}
			for iv := int32(0); iv < 5; iv++ {
				for b := int32(1); b <= 3; b++ {
					s = append(s, trace.BBV(run, p, iv, 0, b*int32(p+1), int64(rng.IntN(1000))))
				}
			}
			streams = append(streams, s)
		}
	}
	return m, streams
}

func writeStore(t testing.TB, path string, opts Options, h trace.Header, recs []trace.Record) {
	t.Helper()
	w, err := Create(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	*w.Header() = h
	for _, r := range recs {
		if err := w.Add(r); err != nil {
			w.Abort()
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// readRecords returns the timed records of the .pst at dir, failing the
// test if it cannot be opened or read.
func readRecords(t testing.TB, dir string) []trace.Record {
	t.Helper()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	recs, err := trace.ReadAll(s.Records(ReadOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

func canonical(rs []trace.Record) []trace.Record {
	out := make([]trace.Record, len(rs))
	for i, r := range rs {
		out[i] = r.Canonical()
	}
	return out
}

func splitBBV(rs []trace.Record) (timed, bbv []trace.Record) {
	for _, r := range rs {
		if r.Kind == trace.KindBBV {
			bbv = append(bbv, r)
		} else {
			timed = append(timed, r)
		}
	}
	return
}

// tableOrder sorts records the way Records returns them: by (run, time,
// process), then by table, keeping stream order inside a table.
func tableOrder(rs []trace.Record) []trace.Record {
	out := slices.Clone(rs)
	slices.SortStableFunc(out, func(a, b trace.Record) int {
		if c := trace.Compare(a, b); c != 0 {
			return c
		}
		return int(tableOf(a.Kind)) - int(tableOf(b.Kind))
	})
	return out
}

func TestRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name       string
		interleave bool // time-sorted input instead of process by process
		opts       Options
	}{
		{"sorted-input", true, Options{GroupRows: 97}},
		{"per-process-input-spills", false, Options{GroupRows: 61, ChunkRows: 150}},
		{"per-process-one-chunk", false, Options{}},
		{"sorted-default-groups", true, Options{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem, streams := randomTrace(42, 3, 7, 300, 1000)
			var input []trace.Record
			for _, s := range streams {
				input = append(input, s...)
			}
			if tc.interleave {
				input = tableOrder(input)
			}
			path := filepath.Join(t.TempDir(), "x.pst")
			writeStore(t, path, tc.opts, mem.H, input)

			s, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			timed, bbv := splitBBV(input)
			want := tableOrder(canonical(timed))
			got, err := trace.ReadAll(s.Records(ReadOptions{}))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("got %d records, want %d", len(got), len(want))
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("record %d: got %v, want %v", i, got[i], want[i])
				}
			}
			// One process's stream.
			for _, rp := range [][2]int32{{0, 0}, {1, 3}, {2, 6}} {
				var wantP []trace.Record
				for _, r := range want {
					if r.Run == rp[0] && r.Proc == rp[1] {
						wantP = append(wantP, r)
					}
				}
				gotP, err := trace.ReadAll(s.Process(rp[0], rp[1]))
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(gotP, wantP) {
					t.Fatalf("process %v: got %d records, want %d", rp, len(gotP), len(wantP))
				}
			}
			// BBVs in (run, proc, interval) order.
			wantB := canonical(bbv)
			slices.SortStableFunc(wantB, keyCompare(tBBV))
			gotB, err := trace.ReadAll(s.BBV(ReadOptions{}))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(gotB, wantB) {
				t.Fatalf("bbv: got %d records, want %d", len(gotB), len(wantB))
			}
			// Statistics.
			m := s.Manifest()
			if n := m.Stats.Records["state"]; n != countKind(input, trace.KindState) {
				t.Errorf("stats: %d states, want %d", n, countKind(input, trace.KindState))
			}
			if len(m.Header.Runs) != 3 || m.Header.Runs[2].Procs != 7 {
				t.Errorf("header runs = %+v", m.Header.Runs)
			}
			if m.Stats.BBVIntervals != 3*7*5 {
				t.Errorf("bbv intervals = %d, want %d", m.Stats.BBVIntervals, 3*7*5)
			}
			// No temporary files are left next to the trace.
			ents, _ := os.ReadDir(filepath.Dir(path))
			if len(ents) != 1 {
				t.Errorf("directory holds %d entries, want only the .pst", len(ents))
			}
		})
	}
}

func countKind(rs []trace.Record, k trace.Kind) int64 {
	n := int64(0)
	for _, r := range rs {
		if r.Kind == k {
			n++
		}
	}
	return n
}

func TestFilters(t *testing.T) {
	mem, streams := randomTrace(3, 2, 5, 200, 10)
	var input []trace.Record
	for _, s := range streams {
		input = append(input, s...)
	}
	path := filepath.Join(t.TempDir(), "f.pst")
	writeStore(t, path, Options{GroupRows: 50}, mem.H, input)
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	timed, _ := splitBBV(input)
	all := tableOrder(canonical(timed))
	opts := ReadOptions{Runs: []int32{1}, Procs: []int32{2, 4}, Kinds: []trace.Kind{trace.KindState, trace.KindSend}, From: 500, To: 3000}
	var want []trace.Record
	for _, r := range all {
		if r.Run == 1 && (r.Proc == 2 || r.Proc == 4) && (r.Kind == trace.KindState || r.Kind == trace.KindSend) && r.T >= 500 && r.T < 3000 {
			want = append(want, r)
		}
	}
	got, err := trace.ReadAll(s.Records(opts))
	if err != nil {
		t.Fatal(err)
	}
	if len(want) == 0 || !slices.Equal(got, want) {
		t.Fatalf("filtered read: got %d records, want %d", len(got), len(want))
	}
}

func TestNoOverwriteAndAbort(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.pst")
	h := trace.Header{Meta: trace.Meta{ClockResolution: 1}}
	writeStore(t, path, Options{}, h, []trace.Record{trace.State(0, 0, 5, 1)})
	if _, err := Create(path, Options{}); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("Create over an existing trace: err = %v, want 'already exists'", err)
	}
	// A failed write with --force leaves the old trace untouched.
	w, err := Create(path, Options{Force: true})
	if err != nil {
		t.Fatal(err)
	}
	*w.Header() = h
	if err := w.Add(trace.State(0, 0, 10, 2)); err != nil {
		t.Fatal(err)
	}
	err = w.Add(trace.State(0, 0, 3, 2))
	if !errors.Is(err, trace.ErrOutOfOrder) {
		t.Fatalf("out-of-order add: err = %v", err)
	}
	if err := w.Close(); err == nil {
		t.Fatal("Close after a failed Add succeeded")
	}
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := trace.ReadAll(s.Records(ReadOptions{}))
	s.Close()
	if len(got) != 1 || got[0].T != 5 {
		t.Fatalf("old trace changed: %v", got)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Fatalf("%d entries left in the directory, want 1", len(ents))
	}
	// --force replaces it once the new one is complete.
	writeStore(t, path, Options{Force: true}, h, []trace.Record{trace.State(0, 0, 7, 3), trace.State(0, 1, 8, 4)})
	s, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	got, _ = trace.ReadAll(s.Records(ReadOptions{}))
	s.Close()
	if len(got) != 2 || got[0].ID != 3 || got[1].ID != 4 {
		t.Fatalf("replaced trace: %v", got)
	}
}

func TestClockResolutionEnforced(t *testing.T) {
	w, err := Create(filepath.Join(t.TempDir(), "u.pst"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	w.Header().Meta.ClockResolution = 1000
	if err := w.Add(trace.State(0, 0, 2000, 1)); err != nil {
		t.Fatal(err)
	}
	if err := w.Add(trace.State(0, 0, 2500, 1)); err == nil || !strings.Contains(err.Error(), "clock resolution") {
		t.Fatalf("err = %v, want a clock-resolution error", err)
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := Open(dir); err == nil || !strings.Contains(err.Error(), "not a parscope trace") {
		t.Fatalf("Open of an empty dir: %v", err)
	}
	os.WriteFile(filepath.Join(dir, manifestFile), []byte(`{"format":"parscope-pst","version":99,"time_unit_ns":1}`), 0o644)
	if _, err := Open(dir); err == nil || !strings.Contains(err.Error(), "version 99") {
		t.Fatalf("Open of a newer version: %v", err)
	}
}

func TestEmptyTrace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "e.pst")
	writeStore(t, path, Options{}, trace.Header{}, nil)
	if got := readRecords(t, path); len(got) != 0 {
		t.Fatalf("empty trace: %v", got)
	}
}

// TestForceReplacesOnlyATrace: --force must not delete a directory or a file
// that is not a .pst, and a writer that dies before Close leaves the old
// trace as it was and a temporary that the next write removes.
func TestForceReplacesOnlyATrace(t *testing.T) {
	dir := t.TempDir()
	h := trace.Header{Meta: trace.Meta{ClockResolution: 1}}
	victim := filepath.Join(dir, "victim")
	if err := os.Mkdir(victim, 0o755); err != nil {
		t.Fatal(err)
	}
	notes := filepath.Join(victim, "notes.txt")
	if err := os.WriteFile(notes, []byte("important\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "am.srt")
	if err := os.WriteFile(file, []byte("0 1 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{victim, file} {
		_, err := Create(p, Options{Force: true})
		if err == nil || !strings.Contains(err.Error(), "replaces only a .pst") || !strings.Contains(err.Error(), p) {
			t.Fatalf("Create(%s, Force): %v, want a refusal naming it", p, err)
		}
	}
	if b, err := os.ReadFile(notes); err != nil || string(b) != "important\n" {
		t.Fatalf("notes.txt: %q, %v", b, err)
	}
	if b, err := os.ReadFile(file); err != nil || string(b) != "0 1 0\n" {
		t.Fatalf("am.srt: %q, %v", b, err)
	}

	// A writer abandoned before Close (as a killed import leaves it): the
	// old trace is untouched; its temporary belongs to this live process,
	// so it is kept until Abort.
	path := filepath.Join(dir, "a.pst")
	writeStore(t, path, Options{}, h, []trace.Record{trace.State(0, 0, 5, 1)})
	w, err := Create(path, Options{Force: true})
	if err != nil {
		t.Fatal(err)
	}
	*w.Header() = h
	if err := w.Add(trace.State(0, 0, 10, 2)); err != nil {
		t.Fatal(err)
	}
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Manifest().Stats.Records["state"]; got != 1 {
		t.Fatalf("the old trace holds %d states while a new one is written, want 1", got)
	}
	s.Close()
	w.Abort()
	writeStore(t, path, Options{Force: true}, h, []trace.Record{trace.State(0, 0, 10, 2), trace.State(0, 0, 11, 3)})
	ents, _ := os.ReadDir(dir)
	if len(ents) != 3 {
		t.Fatalf("left %d entries beside a.pst, want a.pst, am.srt and victim only", len(ents))
	}
	fi, err := os.Stat(filepath.Join(path, manifestFile))
	if err != nil || fi.Mode().Perm()&0o044 != 0o044 {
		t.Fatalf("manifest mode: %v %v", fi, err)
	}
}

// TestOpenSaysWhatThePathIs checks that opening a trace file or a missing
// path as a .pst says which it is, instead of the system's "not a
// directory".
func TestOpenSaysWhatThePathIs(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "run.srt")
	if err := os.WriteFile(file, []byte("0 1 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		file:                        file + " is a file, not a parscope trace (a .pst directory): import it first (parscope import " + file + ")",
		filepath.Join(dir, "x.pst"): filepath.Join(dir, "x.pst") + " is not a parscope trace (.pst): it does not exist",
	} {
		if _, err := Open(path); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("Open(%s) = %v, want an error starting %q", path, err, want)
		}
		if _, err := ReadManifest(path); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("ReadManifest(%s) = %v, want an error starting %q", path, err, want)
		}
	}
}

// TestTooManyRunsSaysWhy checks that a trace with more runs than a Parquet
// file holds row groups is refused with an error that says so, instead of
// the Parquet library's bare limit.
func TestTooManyRunsSaysWhy(t *testing.T) {
	w, err := Create(filepath.Join(t.TempDir(), "runs.pst"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	for run := int32(0); ; run++ {
		if err = w.Add(trace.State(run, 0, 0, 1)); err != nil {
			break
		}
		if run > maxRowGroups+1 {
			err = w.Close()
			break
		}
	}
	want := "the states table needs more than 32767 row groups, the most a Parquet file holds: every run starts a row group, and the trace reaches run 32767"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v, want it to say %q", err, want)
	}
}

// TestSparseProcessIDs checks that processes numbered far apart (ids above
// the dense bucket range, up to the largest the data model allows) are
// stored and read back in (time, process) order without the writer
// allocating a bucket for every id below them.
func TestSparseProcessIDs(t *testing.T) {
	procs := []int32{3, denseBuckets - 1, denseBuckets, 5_000_000, trace.MaxProcs - 1}
	var input []trace.Record
	for i := int64(0); i < 4; i++ {
		for j := len(procs) - 1; j >= 0; j-- {
			input = append(input, trace.State(0, procs[j], 10*i, int32(j)))
		}
	}
	path := filepath.Join(t.TempDir(), "sparse.pst")
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	writeStore(t, path, Options{GroupRows: 7}, trace.Header{}, input)
	runtime.ReadMemStats(&after)
	if a := after.TotalAlloc - before.TotalAlloc; a > 256<<20 {
		t.Errorf("writing %d records allocated %d MB", len(input), a>>20)
	}
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := trace.ReadAll(s.Records(ReadOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	want := tableOrder(canonical(input))
	if !slices.Equal(got, want) {
		t.Fatalf("got %v\nwant %v", got, want)
	}
	if p := s.Manifest().Header.Runs[0].Procs; p != trace.MaxProcs {
		t.Errorf("run 0 has %d processes, want %d", p, trace.MaxProcs)
	}
	w, err := Create(filepath.Join(t.TempDir(), "over.pst"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	err = w.Add(trace.State(0, trace.MaxProcs, 0, 1))
	if err == nil || !strings.Contains(err.Error(), "process ids must be below 16777216") {
		t.Fatalf("adding process %d: err = %v, want the limit named", trace.MaxProcs, err)
	}
}

// indexCodecs returns the codecs of the columns of the index of the .pst
// at path, and its row count.
func indexCodecs(t *testing.T, path string) (map[format.CompressionCodec]bool, int64) {
	t.Helper()
	f, err := os.Open(filepath.Join(path, indexFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	codecs := map[format.CompressionCodec]bool{}
	for _, rg := range pf.Metadata().RowGroups {
		for _, c := range rg.Columns {
			codecs[c.MetaData.Codec] = true
		}
	}
	return codecs, pf.NumRows()
}

// TestIndexCompressed checks that index.parquet is zstd-compressed like the
// tables: with a row per (table, row group, process) it was a tenth of a
// store of a thousand processes when written uncompressed. The index of a
// small store (under smallIndex rows) is written uncompressed.
func TestIndexCompressed(t *testing.T) {
	small := filepath.Join(t.TempDir(), "small.pst")
	writeStore(t, small, Options{}, trace.Header{Runs: []trace.RunInfo{{ID: 0, Procs: 4}}},
		[]trace.Record{trace.State(0, 0, 1, 1), trace.State(0, 1, 2, 1), trace.State(0, 2, 3, 2), trace.State(0, 3, 4, 1)})
	if codecs, rows := indexCodecs(t, small); len(codecs) != 1 || !codecs[format.Uncompressed] || rows != 4 {
		t.Errorf("index of 4 processes: %d rows, codecs %v; want 4 rows, uncompressed", rows, codecs)
	}

	path := filepath.Join(t.TempDir(), "many.pst")
	const procs = 1024
	var recs []trace.Record
	for k := range int64(64) {
		for p := range int32(procs) {
			recs = append(recs, trace.State(0, p, 10*k+int64(p%7), int32(k%5)))
		}
	}
	writeStore(t, path, Options{}, trace.Header{Runs: []trace.RunInfo{{ID: 0, Procs: procs}}}, recs)
	codecs, rows := indexCodecs(t, path)
	if rows < procs {
		t.Fatalf("index has %d rows, want one per process at least (%d)", rows, procs)
	}
	if len(codecs) != 1 || !codecs[format.Zstd] {
		t.Errorf("index of %d rows: codecs %v, want ZSTD only", rows, codecs)
	}
	// The index still reads back: every process's rows are found.
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := trace.ReadAll(s.Records(ReadOptions{Procs: []int32{procs - 1}}))
	if err != nil || len(got) != 64 {
		t.Fatalf("process %d: %d records, %v; want 64", procs-1, len(got), err)
	}
}

// TestManifestNamesEveryFile checks that the manifest names every Parquet
// file of a .pst, the record tables under tables and the index and the
// dictionaries under files, each with the rows the file holds.
func TestManifestNamesEveryFile(t *testing.T) {
	m, streams := randomTrace(3, 1, 3, 40, 1)
	h := m.H
	h.Runs = []trace.RunInfo{{ID: 0, Procs: 3}}
	h.States = []trace.StateDef{{ID: 1, Name: "a"}, {ID: 2, Name: "b"}}
	h.Regions = []trace.RegionDef{{ID: 0, Label: "r0", Parent: -1}, {ID: 1, Label: "r1", Parent: 0}}
	h.Events = []trace.EventDef{{ID: 0, Name: "e"}}
	h.Counters = []trace.CounterDef{{ID: 1, Name: "flops", Unit: "1"}}
	h.Procs = []trace.ProcInfo{{Run: 0, Proc: 0, Name: "rank 0"}, {Run: 0, Proc: 1, Name: "rank 1"}, {Run: 0, Proc: 2, Name: "rank 2"}}
	h.Comms = []trace.CommDef{{ID: 0, Name: "world", Members: []int32{0, 1, 2}}, {ID: 1, Name: "pair", Members: []int32{0, 1}}}
	dir := filepath.Join(t.TempDir(), "t.pst")
	writeStore(t, dir, Options{}, h, slices.Concat(streams...))
	man, err := ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"state_names": 2, "region_names": 2, "event_names": 1, "counter_names": 1, "procs": 3, "comms": 2}
	named := map[string]TableInfo{}
	for _, list := range []map[string]TableInfo{man.Tables, man.Files} {
		for name, ti := range list {
			if ti.File != name+".parquet" || ti.RowGroups < 1 || ti.Bytes <= 0 {
				t.Errorf("%s: %+v", name, ti)
			}
			named[ti.File] = ti
		}
	}
	for name, rows := range want {
		if got := man.Files[name].Rows; got != rows {
			t.Errorf("files.%s: %d rows, want %d", name, got, rows)
		}
	}
	if len(man.Files) != len(want)+1 || man.Files["index"].Rows == 0 {
		t.Errorf("files %v: want the index and %d dictionaries", man.Files, len(want))
	}
	onDisk, err := filepath.Glob(filepath.Join(dir, "*.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	if len(onDisk) != len(named) || len(man.Tables) != 7 {
		t.Errorf("%d Parquet files, the manifest names %d (%d record tables, want 7)", len(onDisk), len(named), len(man.Tables))
	}
	for _, p := range onDisk {
		ti, ok := named[filepath.Base(p)]
		if !ok {
			t.Errorf("the manifest does not name %s", filepath.Base(p))
			continue
		}
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		st, _ := f.Stat()
		pf, err := parquet.OpenFile(f, st.Size())
		if err != nil {
			t.Fatal(err)
		}
		if pf.NumRows() != ti.Rows || len(pf.RowGroups()) != ti.RowGroups || st.Size() != ti.Bytes {
			t.Errorf("%s holds %d rows in %d groups, %d bytes; the manifest says %+v", ti.File, pf.NumRows(), len(pf.RowGroups()), st.Size(), ti)
		}
		f.Close()
	}
}

// TestAddBatchEqualsAdd checks that a store written in batches is the
// store written record by record, byte for byte, with input in order and
// out of order (sorted through spilled runs), and that a batch stops at
// the record the writer refuses, which Add then refuses too.
func TestAddBatchEqualsAdd(t *testing.T) {
	inOrder := benchRecords(40_000, 16)
	shuffled := slices.Clone(inOrder)
	// Out of order across processes only: each process keeps its order.
	slices.SortStableFunc(shuffled, func(a, b trace.Record) int { return cmp.Compare(a.Proc, b.Proc) })
	for name, recs := range map[string][]trace.Record{"in order": inOrder, "by process": shuffled} {
		dir := t.TempDir()
		one, batch := filepath.Join(dir, "one.pst"), filepath.Join(dir, "batch.pst")
		opts := Options{ChunkRows: 5000}
		writeStore(t, one, opts, benchHeader, recs)
		w, err := Create(batch, opts)
		if err != nil {
			t.Fatal(err)
		}
		*w.Header() = benchHeader
		for i := 0; i < len(recs); i += 777 {
			part := recs[i:min(i+777, len(recs))]
			if n, err := w.AddBatch(part); err != nil || n != len(part) {
				t.Fatalf("%s: AddBatch = %d, %v; want %d", name, n, err, len(part))
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		sameStore(t, name+", AddBatch against Add", batch, one)
	}

	w, err := Create(filepath.Join(t.TempDir(), "bad.pst"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	*w.Header() = benchHeader
	recs := slices.Clone(inOrder[:100])
	recs[60].Proc = -1
	n, err := w.AddBatch(recs)
	if n != 60 || err == nil || !strings.Contains(err.Error(), "negative") {
		t.Fatalf("AddBatch with a bad 61st record = %d, %v; want 60 and its error", n, err)
	}
	if err2 := w.Add(inOrder[100]); err2 == nil || err2.Error() != err.Error() {
		t.Errorf("Add after the refused record: %v, want %v", err2, err)
	}
}

// TestWriterReset checks that a writer reset after records in order and
// out of order (with spilled runs on disk) writes the store of the records
// added after the reset alone, byte for byte, and leaves no spill behind.
func TestWriterReset(t *testing.T) {
	recs := benchRecords(30_000, 8)
	shuffled := slices.Clone(recs)
	slices.SortStableFunc(shuffled, func(a, b trace.Record) int { return cmp.Compare(a.Proc, b.Proc) })
	dir := t.TempDir()
	opts := Options{ChunkRows: 4000}
	want := filepath.Join(dir, "want.pst")
	writeStore(t, want, opts, benchHeader, recs[:20_000])
	for name, before := range map[string][]trace.Record{"in order": recs, "out of order": shuffled} {
		got := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".pst")
		w, err := Create(got, opts)
		if err != nil {
			t.Fatal(err)
		}
		*w.Header() = benchHeader
		if _, err := w.AddBatch(before); err != nil {
			t.Fatal(err)
		}
		if err := w.Reset(); err != nil {
			t.Fatal(err)
		}
		if spills, _ := filepath.Glob(filepath.Join(w.tmp, "spill-*")); len(spills) != 0 {
			t.Errorf("%s: spills left after Reset: %v", name, spills)
		}
		if _, err := w.AddBatch(recs[:20_000]); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		sameStore(t, name+", reset against the records after the reset alone", got, want)
		if err := w.Reset(); err == nil {
			t.Errorf("%s: Reset after Close succeeded", name)
		}
	}
}

// sameStore fails the test unless the .pst directories got and want hold
// the same files, byte for byte (at least the tables, index and manifest).
func sameStore(t *testing.T, what, got, want string) {
	t.Helper()
	files, err := os.ReadDir(want)
	if err != nil {
		t.Fatal(err)
	}
	gotFiles, err := os.ReadDir(got)
	if err != nil || len(gotFiles) != len(files) || len(files) < 3 {
		t.Fatalf("%s: %d files, want %d (at least 3): %v", what, len(gotFiles), len(files), err)
	}
	for _, f := range files {
		a, err := os.ReadFile(filepath.Join(want, f.Name()))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(got, f.Name()))
		if err != nil || !bytes.Equal(a, b) {
			t.Errorf("%s: %s differs (%v)", what, f.Name(), err)
		}
	}
}

// TestManyRuns writes the records of 6,000 processes one after another
// (more sorted runs in a chunk than the writer merges: it sorts them), a
// few records each, two of them at the same time, with the chunk held in
// memory whole and with chunks spilled, and checks that the store holds
// them in time order with each process's records of one time in the
// order written.
func TestManyRuns(t *testing.T) {
	const procs = 6000
	h := trace.Header{Meta: trace.Meta{ClockResolution: 1}, Runs: []trace.RunInfo{{ID: 0, Procs: procs}},
		States: []trace.StateDef{{ID: 0, Name: "a"}, {ID: 1, Name: "b"}, {ID: 2, Name: "c"}, {ID: 3, Name: "d"}}}
	var recs []trace.Record
	for p := range int32(procs) {
		t0 := int64(p%97) * 10
		recs = append(recs,
			trace.State(0, p, t0, 3),
			trace.State(0, p, t0+5, 1),
			trace.State(0, p, t0+5, 0), // the same time: after the one before
			trace.State(0, p, t0+400, 2))
	}
	want := slices.Clone(recs)
	slices.SortStableFunc(want, trace.Compare)
	for _, chunk := range []int{0, 20_000} {
		t.Run("chunk "+strconv.Itoa(chunk), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "runs.pst")
			writeStore(t, path, Options{ChunkRows: chunk}, h, recs)
			got := readRecords(t, path)
			if len(got) != len(want) {
				t.Fatalf("%d records, want %d", len(got), len(want))
			}
			for i := range want {
				if got[i].Proc != want[i].Proc || got[i].T != want[i].T || got[i].ID != want[i].ID {
					t.Fatalf("record %d: process %d, %d ns, state %d; want process %d, %d ns, state %d",
						i, got[i].Proc, got[i].T, got[i].ID, want[i].Proc, want[i].T, want[i].ID)
				}
			}
		})
	}
}
