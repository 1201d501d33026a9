package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/parscope/parscope/trace"
)

// fuzzTrace is the .pst the store fuzz targets start from: two processes
// of one run with states and a message each way, in one row group per
// table, written by this package's writer. Its files are the seeds; the
// fuzzer then changes the manifest, the index and the states table.
func fuzzTrace(t testing.TB) (manifest, index, states []byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "seed.pst")
	h := trace.Header{States: []trace.StateDef{{ID: 1, Name: "Running"}, {ID: 2, Name: "Waiting"}}}
	writeStore(t, path, Options{}, h, []trace.Record{
		trace.State(0, 0, 0, 1), trace.State(0, 1, 0, 1),
		trace.Send(0, 0, 10, 12, 1, 64, 7, 0), trace.State(0, 1, 11, 2),
		trace.Recv(0, 1, 13, 10, 0, 64, 7, 0), trace.State(0, 1, 14, 1),
		trace.State(0, 0, 20, 2), trace.State(0, 0, 30, 1), trace.State(0, 1, 40, 2),
	})
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(path, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	return read(manifestFile), read(indexFile), read(tStates.file())
}

// readEverything opens the .pst at dir and reads all of it, as `parscope
// info`, the analyses and the web view do: every timed record, the BBV
// records, process 1 in a time window, and the process lists. It returns
// the timed records; a filtered read that returns a record outside its
// filter fails the test.
func readEverything(t *testing.T, dir string) ([]trace.Record, error) {
	s, err := Open(dir)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	var all []trace.Record
	buf := make([]trace.Record, 64)
	opts := []ReadOptions{{}, {}, {Procs: []int32{1}, From: 11, To: 30}}
	for i, r := range []trace.Reader{s.Records(opts[0]), s.BBV(opts[1]), s.Records(opts[2])} {
		for {
			k, err := r.Read(buf)
			for _, rec := range buf[:k] {
				switch i {
				case 0:
					all = append(all, rec)
				case 2:
					if rec.Proc != 1 || rec.T < 11 || rec.T >= 30 {
						t.Fatalf("reading process 1 in [11, 30) ns returned %+v", rec)
					}
				}
			}
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return all, err
			}
			if k == 0 {
				t.Fatal("a reader returned no records and no error")
			}
		}
	}
	for _, rs := range s.Manifest().Stats.Runs {
		s.Procs(rs.Run)
	}
	return all, nil
}

// readFuzzed reads all of the .pst at dir (readEverything) and returns its
// timed records, or false when it refused the .pst: the error must then
// name it.
func readFuzzed(t *testing.T, dir string) ([]trace.Record, bool) {
	recs, err := readEverything(t, dir)
	if err != nil {
		if !strings.Contains(err.Error(), dir) {
			t.Fatalf("error %q does not name the .pst %s", err, dir)
		}
		return nil, false
	}
	return recs, true
}

// writePst makes a directory name in a fresh temporary directory, writes
// files (by name) into it, and returns its path.
func writePst(t testing.TB, name string, files map[string][]byte) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// FuzzOpen writes a .pst whose manifest, index and states table are the
// fuzzer's bytes (the messages table and the dictionaries stay as written)
// and reads all of it. Damaged input must give an error that names the
// .pst or the file in it, never a panic, a hang or an allocation the input
// does not justify; a .pst that reads must yield exactly the timed rows
// its manifest declares, each once.
func FuzzOpen(f *testing.F) {
	m, ix, st := fuzzTrace(f)
	f.Add(m, ix, st)
	f.Add(m, ix, st[:len(st)/2])
	f.Add([]byte(`{"format":"parscope-pst","version":1,"time_unit_ns":1,"tables":{"states":{"file":"states.parquet","rows":6}}}`), ix, st)
	seed, err := os.MkdirTemp("", "fuzzopen")
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { os.RemoveAll(seed) })
	// Every file but the three fuzzed ones comes from the seed trace.
	sp := filepath.Join(seed, "seed.pst")
	w, err := Create(sp, Options{})
	if err != nil {
		f.Fatal(err)
	}
	for _, r := range []trace.Record{trace.Send(0, 0, 10, 12, 1, 64, 7, 0), trace.Recv(0, 1, 13, 10, 0, 64, 7, 0)} {
		if err := w.Add(r); err != nil {
			f.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		f.Fatal(err)
	}
	messages, err := os.ReadFile(filepath.Join(sp, tMessages.file()))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, manifest, index, states []byte) {
		dir := writePst(t, "f.pst", map[string][]byte{manifestFile: manifest, indexFile: index, tStates.file(): states, tMessages.file(): messages})
		recs, ok := readFuzzed(t, dir)
		if !ok {
			return
		}
		n := int64(len(recs))
		m, err := ReadManifest(dir)
		if err != nil {
			t.Fatalf("the .pst read, its manifest does not: %v", err)
		}
		var declared int64
		for t := table(0); t < numTables; t++ {
			if info, ok := m.Tables[t.String()]; ok && t.timed() {
				declared += info.Rows
			}
		}
		if n != declared {
			t.Fatalf("read %d records, the manifest declares %d timed rows", n, declared)
		}
	})
}

// FuzzIndex rewrites index.parquet of the seed trace with two rows per
// table whose numbers are the fuzzer's (the seed's own split is the first
// seed): the process segments of a row group that overlap, leave gaps,
// run past the group or claim negative sizes must be refused with an
// error naming the file, and an index that opens must yield every timed
// row once.
func FuzzIndex(f *testing.F) {
	m, ix, st := fuzzTrace(f)
	rows, err := parquet.Read[indexRow](bytes.NewReader(ix), int64(len(ix)))
	if err != nil {
		f.Fatal(err)
	}
	var states []indexRow
	for _, r := range rows {
		if r.Table == int32(tStates) {
			states = append(states, r)
		}
	}
	if len(states) != 2 {
		f.Fatalf("the seed trace has %d index rows for states, want 2", len(states))
	}
	seedStates := readStates(f, m, ix, st)
	a, b := states[0], states[1]
	f.Add(a.Group, a.Proc, a.First, a.Rows, a.TMin, a.TMax, b.Group, b.Proc, b.First, b.Rows, b.TMin, b.TMax)
	f.Add(a.Group, a.Proc, a.First, a.Rows+b.Rows, a.TMin, a.TMax, b.Group, b.Proc, b.First, int64(0), b.TMin, b.TMax)
	f.Add(a.Group, a.Proc, a.First, a.Rows+2, a.TMin, a.TMax, b.Group, b.Proc, b.First, b.Rows-2, b.TMin, b.TMax)
	f.Add(a.Group, b.Proc, b.First, b.Rows, a.TMin, a.TMax, b.Group, a.Proc, a.First, a.Rows, b.TMin, b.TMax)
	f.Fuzz(func(t *testing.T, g0, p0 int32, first0, rows0, tmin0, tmax0 int64, g1, p1 int32, first1, rows1, tmin1, tmax1 int64) {
		// The manifest declares the states table only.
		dir := writePst(t, "f.pst", map[string][]byte{manifestFile: statesOnly(t, m), tStates.file(): st})
		index := []indexRow{
			{Table: int32(tStates), Group: g0, Proc: p0, First: first0, Rows: rows0, TMin: tmin0, TMax: tmax0},
			{Table: int32(tStates), Group: g1, Proc: p1, First: first1, Rows: rows1, TMin: tmin1, TMax: tmax1},
		}
		if err := parquet.WriteFile(filepath.Join(dir, indexFile), index); err != nil {
			t.Fatal(err)
		}
		recs, ok := readFuzzed(t, dir)
		if !ok {
			return
		}
		if got, want := sortedText(recs), sortedText(seedStates); got != want {
			t.Fatalf("read the states\n%s\nwant\n%s", got, want)
		}
	})
}

// readStates returns the records of a .pst made of the given manifest,
// index and states table (the messages table left out).
func readStates(t testing.TB, manifest, index, states []byte) []trace.Record {
	t.Helper()
	dir := writePst(t, "s.pst", map[string][]byte{manifestFile: statesOnly(t, manifest), indexFile: index, tStates.file(): states})
	recs := readRecords(t, dir)
	if len(recs) != 7 {
		t.Fatalf("the seed has %d states, want 7", len(recs))
	}
	return recs
}

// sortedText lists the records in a canonical order, to compare them as
// sets: ties in time may come in either process order.
func sortedText(recs []trace.Record) string {
	out := make([]string, len(recs))
	for i, r := range canonical(recs) {
		out[i] = fmt.Sprint(r)
	}
	slices.Sort(out)
	return strings.Join(out, "\n")
}

// TestIndexSegmentsChecked checks that Open refuses an index whose process
// segments overlap (two rows of process 1 read twice, two lost) or leave a
// gap, which the fuzzer found being read silently.
func TestIndexSegmentsChecked(t *testing.T) {
	m, ix, st := fuzzTrace(t)
	rows, err := parquet.Read[indexRow](bytes.NewReader(ix), int64(len(ix)))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name         string
		first, extra int64
	}{{"overlap", 0, 2}, {"gap", 1, 0}} {
		var damaged []indexRow
		for _, r := range rows {
			if r.Table == int32(tStates) && r.First > 0 {
				r.First -= c.extra
				r.First += c.first
				r.Rows += c.extra - c.first
			}
			damaged = append(damaged, r)
		}
		var buf bytes.Buffer
		if err := parquet.Write(&buf, damaged); err != nil {
			t.Fatal(err)
		}
		dir := writePst(t, "d.pst", map[string][]byte{manifestFile: statesOnly(t, m), indexFile: buf.Bytes(), tStates.file(): st})
		s, err := Open(dir)
		if err == nil {
			s.Close()
			t.Fatalf("%s: Open accepted the damaged index", c.name)
		}
		if !strings.Contains(err.Error(), filepath.Join(dir, tStates.file())) || !strings.Contains(err.Error(), "do not follow the rows before them") {
			t.Errorf("%s: error %q does not name the table and the damage", c.name, err)
		}
	}
}

// TestUnboundedReadIgnoresIndexTimes checks that reading without a time
// bound returns every record whatever times the index gives its row
// groups: records before time 0 (which the writer accepts), and a group
// whose index claims it ends before 0 (an input FuzzIndex found).
func TestUnboundedReadIgnoresIndexTimes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "neg.pst")
	recs := []trace.Record{trace.State(0, 0, -50, 1), trace.State(0, 0, -20, 2), trace.State(0, 1, -40, 1)}
	writeStore(t, path, Options{}, trace.Header{}, recs)
	if got := readRecords(t, path); sortedText(got) != sortedText(recs) {
		t.Errorf("read\n%s\nwant\n%s", sortedText(got), sortedText(recs))
	}
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got, err := trace.ReadAll(s.Records(ReadOptions{From: -45, To: -30})); err != nil || len(got) != 1 || got[0].T != -40 {
		t.Errorf("reading [-45, -30) ns: %v, %v; want the state at -40", got, err)
	}
}

// statesOnly returns the seed's manifest without its messages table and
// without the message records it counts, as a trace of states alone has.
func statesOnly(t testing.TB, manifest []byte) []byte {
	t.Helper()
	var m Manifest
	if err := json.Unmarshal(manifest, &m); err != nil {
		t.Fatal(err)
	}
	delete(m.Tables, tMessages.String())
	for _, k := range trace.Kinds {
		if tableOf(k) == tMessages {
			delete(m.Stats.Records, k.String())
		}
	}
	b, err := json.Marshal(&m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
