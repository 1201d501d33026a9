package otf2

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/format/formattest"
	"github.com/parscope/parscope/internal/needtool"
	"github.com/parscope/parscope/internal/realdata"
	"github.com/parscope/parscope/trace"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// archivePath returns the path of a real Score-P experiment folder of
// testdata/real/traces/otf2, failing the test when it is missing.
func archivePath(t testing.TB, name string) string {
	t.Helper()
	return realdata.Path(t, "traces/otf2/"+name)
}

func importArchive(t testing.TB, path string) (*trace.Memory, *Stats) {
	t.Helper()
	ar, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	var m trace.Memory
	m.H.Meta.Source = "otf2"
	st, err := Convert(context.Background(), ar, 0, &m)
	if err != nil {
		t.Fatal(err)
	}
	return &m, st
}

// The counts per record type are those otf2-print 3.0.2 reports (see
// testdata/real/traces/otf2/README.md); TestOTF2Print checks them against the live tool.
func TestArchives(t *testing.T) {
	tests := []struct {
		name      string
		procs     int
		events    map[string]int64
		records   map[trace.Kind]int
		ticks     string
		clockRes  int64
		firstProc string
	}{
		{"ping-pong-otf2", 2,
			map[string]int64{"PROGRAM_BEGIN": 2, "ENTER": 42, "LEAVE": 42, "MPI_SEND": 16, "MPI_RECV": 16, "PROGRAM_END": 2},
			map[trace.Kind]int{trace.KindEnter: 42, trace.KindExit: 42, trace.KindSend: 16, trace.KindRecv: 16, trace.KindEvent: 4},
			"2095197216", 1, "Master thread"},
		{"ping-pong-otf2-papi", 2,
			map[string]int64{"PROGRAM_BEGIN": 2, "ENTER": 42, "LEAVE": 42, "MPI_SEND": 16, "MPI_RECV": 16, "PROGRAM_END": 2, "METRIC": 84},
			map[trace.Kind]int{trace.KindEnter: 42, trace.KindExit: 42, trace.KindSend: 16, trace.KindRecv: 16, trace.KindEvent: 4, trace.KindCounter: 3 * 84},
			"", 1, "Master thread"},
		{"simple-mi300-example-run", 32,
			map[string]int64{"PROGRAM_BEGIN": 1, "ENTER": 40, "LEAVE": 40, "PARAMETER_UINT64": 4, "PROGRAM_END": 1, "METRIC": 72584},
			map[trace.Kind]int{trace.KindEnter: 40, trace.KindExit: 40, trace.KindEvent: 6, trace.KindCounter: 72584},
			"3699958577", 1, "Master thread"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, st := importArchive(t, archivePath(t, tc.name))
			if !maps(st.Events, tc.events) {
				t.Errorf("events %v, want %v", st.Events, tc.events)
			}
			if len(st.Skipped) != 0 {
				t.Errorf("skipped %v, want none", st.Skipped)
			}
			var total int64
			for _, n := range tc.events {
				total += n
			}
			if total != sum(st.Events) {
				t.Errorf("%d events, want %d", sum(st.Events), total)
			}
			if got := formattest.CountKinds(m.Records); fmt.Sprint(got) != fmt.Sprint(tc.records) {
				t.Errorf("records %v, want %v", got, tc.records)
			}
			if int(m.H.Runs[0].Procs) != tc.procs || len(m.H.Procs) != tc.procs {
				t.Errorf("%d procs (%d infos), want %d", m.H.Runs[0].Procs, len(m.H.Procs), tc.procs)
			}
			if m.H.Procs[0].Name != tc.firstProc {
				t.Errorf("proc 0 is %q, want %q", m.H.Procs[0].Name, tc.firstProc)
			}
			if tc.ticks != "" && m.H.Runs[0].Extra["otf2.ticks_per_second"] != tc.ticks {
				t.Errorf("ticks/s %q, want %q", m.H.Runs[0].Extra["otf2.ticks_per_second"], tc.ticks)
			}
			if m.H.Meta.ClockResolution != tc.clockRes {
				t.Errorf("clock resolution %d, want %d", m.H.Meta.ClockResolution, tc.clockRes)
			}
			if err := m.H.Validate(); err != nil {
				t.Error(err)
			}
			// Every send matches a receive.
			m.Sort()
			var mt trace.Matcher
			matched := 0
			mt.OnMatch = func(s, r *trace.Record) {
				matched++
				if s.Value != r.Value {
					t.Errorf("matched send of %d bytes with receive of %d", s.Value, r.Value)
				}
			}
			for i := range m.Records {
				mt.Add(&m.Records[i])
			}
			us, ur := mt.Unmatched()
			if len(us)+len(ur) != 0 || matched != tc.records[trace.KindSend] {
				t.Errorf("%d matched, %d sends and %d receives unmatched", matched, len(us), len(ur))
			}
		})
	}
}

func maps(a, b map[string]int64) bool { return fmt.Sprint(a) == fmt.Sprint(b) }

func sum(m map[string]int64) (n int64) {
	for _, v := range m {
		n += v
	}
	return n
}

// TestPingPongValues checks values against otf2-print's output (otf2-print
// ping-pong-otf2/traces.otf2): timestamps, regions, message sizes and tags.
func TestPingPongValues(t *testing.T) {
	m, _ := importArchive(t, archivePath(t, "ping-pong-otf2"))
	ix := trace.NewIndex(&m.H)
	// otf2-print: global offset 7397466976977800 at 2095197216 ticks/s.
	// PROGRAM_BEGIN of location 0 at 7397466977622557: 644757 ticks = 307731.3 ns.
	// MPI_SEND of location 0 at 7397467382760060: 405782260 ticks = 193672585.4 ns.
	// PROGRAM_BEGIN of location 1 at 7397466976977800 (clock-corrected): 0 ns.
	first := map[int32]int64{}
	var sends []trace.Record
	for _, r := range m.Records {
		if _, ok := first[r.Proc]; !ok {
			first[r.Proc] = r.T
		}
		if r.Kind == trace.KindSend {
			sends = append(sends, r)
		}
	}
	if first[0] != 307731 || first[1] != 0 {
		t.Errorf("first times %v, want 0:307731 1:0", first)
	}
	if sends[0].T != 193672585 || sends[0].Proc != 0 || sends[0].Peer != 1 || sends[0].Value != 16384 || sends[0].Tag != 10 {
		t.Errorf("first send %v", sends[0])
	}
	if c := ix.Comm(sends[0].Comm); c == nil || c.Name != "MPI_COMM_WORLD" || !slices.Equal(c.Members, []int32{0, 1}) {
		t.Errorf("comm of first send: %+v", c)
	}
	tags := map[int32]int{}
	var sizes []int64
	for _, s := range sends {
		tags[s.Tag]++
		if s.Proc == 0 {
			sizes = append(sizes, s.Value)
		}
	}
	if tags[10] != 8 || tags[20] != 8 {
		t.Errorf("tags %v, want 8 of 10 and 8 of 20", tags)
	}
	for i, s := range sizes {
		if want := int64(16384) << i; s != want {
			t.Errorf("send %d of rank 0: %d bytes, want %d", i, s, want)
		}
	}
	for id, name := range map[int32]string{3: "int main(int, char**)", 148: "MPI_Init", 193: "MPI_Send", 176: "MPI_Recv"} {
		if got := ix.RegionName(id); got != name {
			t.Errorf("region %d is %q, want %q", id, got, name)
		}
	}
	if m.H.Meta.Host != "quartz10" || m.H.Meta.Program != "/g/g92/bhatele1/umd/traces/score-p/ping-pong.otf2" || m.H.Meta.Extra["creator"] != "Score-P 7.1" {
		t.Errorf("meta %+v", m.H.Meta)
	}
	if g := m.H.Procs[1].Extra["otf2.location_group"]; g != "MPI Rank 1" {
		t.Errorf("location group of proc 1: %q", g)
	}
	if n := m.H.Procs[1].Extra["otf2.system_tree_node"]; n != "machine::Linux/node::quartz10" {
		t.Errorf("system tree node of proc 1: %q", n)
	}
}

// TestGolden pins a summary of each imported archive.
func TestGolden(t *testing.T) {
	for _, name := range []string{"ping-pong-otf2", "ping-pong-otf2-papi", "simple-mi300-example-run"} {
		t.Run(name, func(t *testing.T) {
			m, st := importArchive(t, archivePath(t, name))
			formattest.Golden(t, filepath.Join("testdata", name+".golden"), summary(m, st), *update)
		})
	}
}

func summary(m *trace.Memory, st *Stats) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# produced by the otf2 importer; the event counts equal\n# otf2-print ARCHIVE/traces.otf2 | awk 'NR>4 && $1 ~ /^[A-Z_0-9]+$/ {c[$1]++} END {for (k in c) print k, c[k]}'\n")
	fmt.Fprintf(&b, "clock_resolution_ns %d\nhost %s\nprogram %s\n", m.H.Meta.ClockResolution, m.H.Meta.Host, m.H.Meta.Program)
	var keys []string
	for k := range st.Events {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "events %s %d\n", k, st.Events[k])
	}
	for _, p := range m.H.Procs {
		fmt.Fprintf(&b, "proc %d %q location=%s type=%s group=%q tree=%q\n", p.Proc, p.Name, p.Extra["otf2.location"],
			p.Extra["otf2.location_type"], p.Extra["otf2.location_group"], p.Extra["otf2.system_tree_node"])
	}
	for _, c := range m.H.Counters {
		fmt.Fprintf(&b, "counter %d %q %q\n", c.ID, c.Name, c.Unit)
	}
	for _, c := range m.H.Comms {
		fmt.Fprintf(&b, "comm %d %q %v\n", c.ID, c.Name, c.Members)
	}
	for _, e := range m.H.Events {
		fmt.Fprintf(&b, "event %d %q\n", e.ID, e.Name)
	}
	m.Sort()
	ix := trace.NewIndex(&m.H)
	n := 0
	for _, r := range m.Records {
		if r.Kind == trace.KindCounter && n >= 40 {
			continue
		}
		if n++; n > 120 {
			break
		}
		fmt.Fprintf(&b, "%s", r)
		if r.Kind == trace.KindEnter || r.Kind == trace.KindExit {
			fmt.Fprintf(&b, " %s", ix.RegionName(r.ID))
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// TestOTF2Print compares every decoded event (location, type, clock-corrected
// timestamp) with the live output of otf2-print, when it is installed.
func TestOTF2Print(t *testing.T) {
	bin := needtool.Path(t, "otf2-tools", "otf2-print")
	for _, name := range []string{"ping-pong-otf2", "ping-pong-otf2-papi", "simple-mi300-example-run"} {
		t.Run(name, func(t *testing.T) {
			dir := archivePath(t, name)
			out, err := exec.Command(bin, filepath.Join(dir, "traces.otf2")).Output()
			if err != nil {
				t.Fatal(err)
			}
			want := map[uint64][]string{}
			sc := bufio.NewScanner(bytes.NewReader(out))
			for sc.Scan() {
				f := strings.Fields(sc.Text())
				if len(f) < 3 || strings.Trim(f[0], "ABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789") != "" || f[0] == "ADDITIONAL" {
					continue
				}
				loc, err1 := strconv.ParseUint(f[1], 10, 64)
				if _, err2 := strconv.ParseUint(f[2], 10, 64); err1 != nil || err2 != nil {
					continue
				}
				want[loc] = append(want[loc], f[0]+" "+f[2])
			}
			ar, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, loc := range ar.Locations() {
				le, err := ar.OpenEvents(loc)
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				var ev Event
				for le.Next(&ev) == nil {
					got = append(got, fmt.Sprintf("%s %d", EventName(ev.Type), ev.Time))
				}
				le.Close()
				if !slices.Equal(got, want[loc.ID]) {
					t.Errorf("location %d: %d events differ from otf2-print's %d", loc.ID, len(got), len(want[loc.ID]))
				}
				n += len(got)
			}
			if n == 0 {
				t.Error("no events")
			}
		})
	}
}

func TestScale(t *testing.T) {
	tests := []struct {
		d, res uint64
		want   int64
		ok     bool
	}{
		{644757, 2095197216, 307731, true},
		{1, 3, 333333333, true},
		{2, 3, 666666667, true},
		{1, 2e9, 1, true}, // 0.5 ns rounds up
		{1, 4e9, 0, true},
		{1 << 62, 1, 0, false},
		{1e9, 1e9, 1e9, true},
	}
	for _, tc := range tests {
		got, ok := scale(tc.d, tc.res)
		if got != tc.want || ok != tc.ok {
			t.Errorf("scale(%d, %d) = %d, %v; want %d, %v", tc.d, tc.res, got, ok, tc.want, tc.ok)
		}
	}
}

func TestDetect(t *testing.T) {
	dir := archivePath(t, "ping-pong-otf2")
	head, err := format.Head(filepath.Join(dir, "traces.otf2"), 64)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		head []byte
		want bool
	}{
		{"traces.otf2", head, true},
		{dir, nil, true},
		{"x", []byte("\x03\x42OTF3\x00"), false},
		{"x", []byte("#Paraver"), false},
		{"x", head[:5], false},
	}
	for _, tc := range tests {
		if got := (Importer{}).Detect(tc.name, tc.head); got != tc.want {
			t.Errorf("Detect(%q, %q) = %v", tc.name, tc.head, got)
		}
	}
}

// copyArchive copies an archive into a temporary directory so that a test
// can damage it.
func copyArchive(t *testing.T, name string) string {
	t.Helper()
	src := archivePath(t, name)
	dst := t.TempDir()
	err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if info.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name   string
		damage func(dir string) error
		file   string
		msg    string
	}{
		{"bad magic", func(d string) error { return patch(d, "traces.otf2", 2, 'X') }, "traces.otf2", "not an OTF2 anchor file"},
		{"version", func(d string) error { return patch(d, "traces.otf2", 9, 9) }, "traces.otf2", "unsupported OTF2 version 9.3.0"},
		{"truncated anchor", func(d string) error { return truncate(d, "traces.otf2", 40) }, "traces.otf2", "truncated"},
		{"truncated defs", func(d string) error { return truncate(d, "traces.def", 5000) }, "traces.def", "truncated"},
		{"truncated events", func(d string) error { return truncate(d, "traces/0.evt", 300) }, "0.evt", "truncated"},
		{"endianness", func(d string) error { return patch(d, "traces/1.evt", 1, 0x77) }, "1.evt", "bad endianness marker"},
		{"no chunk header", func(d string) error { return patch(d, "traces/1.evt", 0, 9) }, "1.evt", "bad chunk header"},
		{"undefined region", func(d string) error { return patch(d, "traces/0.evt", 0x35, 0xfe) }, "0.evt", "undefined region"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyArchive(t, "ping-pong-otf2")
			if err := tc.damage(dir); err != nil {
				t.Fatal(err)
			}
			var m trace.Memory
			err := Importer{}.Import(context.Background(), []string{dir}, format.Options{}, &m)
			var fe *format.Error
			if !errors.As(err, &fe) {
				t.Fatalf("got %v, want a located *format.Error", err)
			}
			if !strings.HasSuffix(fe.File, tc.file) || !strings.Contains(fe.Error(), tc.msg) || fe.Offset < 0 {
				t.Errorf("got %q (file %s, byte %d), want file %s and %q", fe, fe.File, fe.Offset, tc.file, tc.msg)
			}
		})
	}
}

func patch(dir, file string, off int, b byte) error {
	p := filepath.Join(dir, file)
	data, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	data[off] = b
	return os.WriteFile(p, data, 0o644)
}

func truncate(dir, file string, n int64) error { return os.Truncate(filepath.Join(dir, file), n) }

// TestStore imports an archive through the registered importer into a
// .pst store and reads the counts back.
func TestStore(t *testing.T) {
	dir := archivePath(t, "ping-pong-otf2-papi")
	imp, err := format.Lookup("otf2")
	if err != nil {
		t.Fatal(err)
	}
	s := formattest.ImportStore(t, imp, []string{filepath.Join(dir, "traces.otf2")}, format.Options{}, nil)
	got := s.Manifest().Stats.Records
	want := map[string]int64{"enter": 42, "exit": 42, "send": 16, "recv": 16, "event": 4, "counter": 252}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("records %v, want %v", got, want)
	}
	h := s.Header()
	if h.Meta.Source != "otf2" || h.Runs[0].Extra["otf2.events.METRIC"] != "84" || len(h.Counters) != 3 {
		t.Errorf("header meta %+v, run extra %v, %d counters", h.Meta, h.Runs[0].Extra, len(h.Counters))
	}
}

// TestOutOfOrderLeave converts a location whose regions close out of
// order (Enter A, Enter B, Leave A, Leave B, as APEX and TraceR write)
// and a Leave of a region never entered: the records nest and the
// header counts each repair once.
func TestOutOfOrderLeave(t *testing.T) {
	d, err := readDefsBytes(defFile(4096, minimalDefs()), 4096)
	if err != nil {
		t.Fatal(err)
	}
	for id := uint32(193); id < 197; id++ {
		d.Regions[id] = Region{}
	}
	ar := &Archive{Anchor: &Anchor{EventChunkSize: 1 << 20}, Defs: d}
	var m trace.Memory
	cv, err := newConverter(ar, 0, &m)
	if err != nil {
		t.Fatal(err)
	}
	cv.proc, cv.reqs, cv.lastT = 0, map[uint64]int{}, math.MinInt64
	// The clock has 1e9 ticks per second from tick 1000.
	for _, ev := range []Event{
		{Type: evEnter, Time: 1010, Ref: 193},
		{Type: evEnter, Time: 1020, Ref: 194},
		{Type: evEnter, Time: 1030, Ref: 195},
		{Type: evLeave, Time: 1040, Ref: 193}, // closes 195 and 194 too
		{Type: evLeave, Time: 1050, Ref: 194}, // no longer open: dropped
		{Type: evEnter, Time: 1060, Ref: 196},
		{Type: evLeave, Time: 1070, Ref: 196},
		{Type: evLeave, Time: 1080, Ref: 196}, // not open: dropped
	} {
		ev.Decoded = true
		if err := cv.event(&ev, EventName(ev.Type)); err != nil {
			t.Fatal(err)
		}
	}
	if err := cv.flush(); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range m.Records {
		got = append(got, r.String())
	}
	want := []string{
		"0/0 10 enter 193", "0/0 20 enter 194", "0/0 30 enter 195",
		"0/0 40 exit 195", "0/0 40 exit 194", "0/0 40 exit 193",
		"0/0 60 enter 196", "0/0 70 exit 196",
	}
	if !slices.Equal(got, want) {
		t.Errorf("records:\n got  %q\n want %q", got, want)
	}
	wantRep := map[string]int64{RepairOutOfOrderLeave: 2, RepairLeaveWithoutEnter: 2}
	if len(m.H.Repairs) != 2 || m.H.Repairs[RepairOutOfOrderLeave] != 2 || m.H.Repairs[RepairLeaveWithoutEnter] != 2 {
		t.Errorf("repairs = %v, want %v", m.H.Repairs, wantRep)
	}
}
