package instrument

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parscope/parscope/store/storetest"
	"github.com/parscope/parscope/trace"
)

// readBack opens the .pst at path and returns its header and records per
// process (in the store's time-merged order, which keeps each process's
// stream order).
func readBack(t *testing.T, path string) (*trace.Header, map[int32][]trace.Record) {
	t.Helper()
	h, recs, bbv := storetest.Read(t, path)
	by := map[int32][]trace.Record{}
	for _, r := range append(recs, bbv...) {
		by[r.Proc] = append(by[r.Proc], r)
	}
	return h, by
}

// described returns the records of process 0 of the .pst at path as
// describe gives them, an event as NAME=VALUE (the dropped-event counts of
// the filters), and the trace's header.
func described(t *testing.T, path string) (*trace.Header, []string) {
	t.Helper()
	h, by := readBack(t, path)
	ix := trace.NewIndex(h)
	var got []string
	for _, r := range by[0] {
		if r.Kind == trace.KindEvent {
			got = append(got, fmt.Sprintf("%s=%d", ix.EventName(r.ID), r.Value))
		} else {
			got = append(got, describe(r))
		}
	}
	return h, got
}

// workload records a deterministic sequence on process p: n steps, each a
// block, with a region, a message pair and an event every few steps.
func workload(p *Process, n int, ev int32) {
	procs := 4
	for i := 0; i < n; i++ {
		p.Block(int32(i % 7))
		switch i % 10 {
		case 3:
			p.Enter(1)
		case 4:
			p.Exit(1)
		case 5:
			p.Send((p.ID()+1)%procs, int64(8*i), int32(i))
		case 6:
			p.Recv((p.ID()+procs-1)%procs, int64(8*i), int32(i))
		case 7:
			p.Event(ev)
		}
	}
}

// expected is workload's sequence as (kind, id) pairs.
func expected(n int, ev int32) []string {
	var out []string
	for i := 0; i < n; i++ {
		out = append(out, fmt.Sprintf("state %d", i%7))
		switch i % 10 {
		case 3:
			out = append(out, "enter 1")
		case 4:
			out = append(out, "exit 1")
		case 5:
			out = append(out, fmt.Sprintf("send %d", 8*i))
		case 6:
			out = append(out, fmt.Sprintf("recv %d", 8*i))
		case 7:
			out = append(out, fmt.Sprintf("event %d", ev))
		}
	}
	return out
}

func describe(r trace.Record) string {
	switch r.Kind {
	case trace.KindSend, trace.KindRecv:
		return fmt.Sprintf("%s %d", r.Kind, r.Value)
	}
	return fmt.Sprintf("%s %d", r.Kind, r.ID)
}

func TestRecordRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name   string
		procs  int
		steps  int
		buffer int
		res    int64
		tsc    bool
		mem    int64
	}{
		{"one buffer", 4, 100, 0, 1, true, 0},
		{"in memory", 4, 5000, 64, 1, true, 0},
		{"spilled to disk", 4, 5000, 64, 1, true, 1},
		{"microseconds", 3, 2000, 128, 1000, true, 10000},
		{"monotonic clock", 4, 3000, 100, 1, false, 1},
		{"many goroutines", 64, 500, 32, 1, true, 5000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer setTSC(tc.tsc && tscOn())()
			path := filepath.Join(t.TempDir(), "out.pst")
			states := []trace.StateDef{{ID: 0, Name: "zero"}, {ID: 6, Name: "six"}}
			rec, err := Start(Options{Path: path, Program: "test", States: states, BufferRecords: tc.buffer, MemoryLimit: tc.mem, ClockResolution: tc.res, Extra: map[string]string{"seed": "7"}})
			if err != nil {
				t.Fatal(err)
			}
			ev := rec.EventID("tick")
			if again := rec.EventID("tick"); again != ev {
				t.Fatalf("EventID gave %d then %d", ev, again)
			}
			var wg sync.WaitGroup
			for i := 0; i < tc.procs; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					workload(rec.Process(i), tc.steps, ev)
				}()
			}
			wg.Wait()
			if err := rec.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(SpillDir(path)); !os.IsNotExist(err) {
				t.Errorf("spill directory still there after Close: %v", err)
			}
			h, by := readBack(t, path)
			if len(h.Runs) != 1 || h.Runs[0].Procs != int32(tc.procs) {
				t.Errorf("runs = %+v, want one run of %d processes", h.Runs, tc.procs)
			}
			if h.Meta.Program != "test" || h.Meta.Extra["seed"] != "7" || h.Meta.ClockResolution != tc.res {
				t.Errorf("meta = %+v", h.Meta)
			}
			if ix := trace.NewIndex(h); ix.StateName(6) != "six" || ix.EventName(ev) != "tick" {
				t.Errorf("dictionaries: state 6 = %q, event %d = %q", ix.StateName(6), ev, ix.EventName(ev))
			}
			want := expected(tc.steps, ev)
			for p := int32(0); p < int32(tc.procs); p++ {
				got := by[p]
				if len(got) != len(want) {
					t.Fatalf("process %d: %d records, want %d", p, len(got), len(want))
				}
				// Records at the same time may come back in any kind order
				// (the store merges its per-kind tables by time), so the
				// sequence is compared kind by kind, and as a whole where
				// times are distinct.
				if g, w := byKind(got, describe), byKind(want, func(s string) string { return s }); fmt.Sprint(g) != fmt.Sprint(w) {
					t.Fatalf("process %d: per-kind sequences differ\n got %v\nwant %v", p, g, w)
				}
				for i, r := range got {
					distinct := (i == 0 || got[i-1].T != r.T) && (i+1 == len(got) || got[i+1].T != r.T)
					if d := describe(r); distinct && d != want[i] {
						t.Fatalf("process %d record %d: %s, want %s", p, i, d, want[i])
					}
					if i > 0 && r.T < got[i-1].T {
						t.Fatalf("process %d record %d goes back in time: %d after %d", p, i, r.T, got[i-1].T)
					}
					if r.T%tc.res != 0 {
						t.Fatalf("time %d is not a multiple of %d", r.T, tc.res)
					}
					if r.Kind == trace.KindSend && r.Peer != (p+1)%4 {
						t.Fatalf("send to %d, want %d", r.Peer, (p+1)%4)
					}
				}
			}
		})
	}
}

// byKind splits a sequence of descriptions by their first word (the kind).
func byKind[T any](xs []T, desc func(T) string) map[string][]string {
	out := map[string][]string{}
	for _, x := range xs {
		d := desc(x)
		k, _, _ := strings.Cut(d, " ")
		out[k] = append(out[k], d)
	}
	return out
}

// tscOn reports whether recorders use the time-stamp counter on this
// machine.
func tscOn() bool {
	chooseClock()
	return useTSC
}

// setTSC selects the clock for a test and returns the function restoring it.
func setTSC(on bool) func() {
	chooseClock() // so that Start does not choose over the test's choice
	old := useTSC
	useTSC = on
	return func() { useTSC = old }
}

func TestProcessHandleIsShared(t *testing.T) {
	rec, err := Start(Options{Path: filepath.Join(t.TempDir(), "x.pst")})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Abort()
	const n = 32
	got := make([]*Process, n)
	var wg sync.WaitGroup
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i] = rec.Process(i % 4)
		}()
	}
	wg.Wait()
	for i, p := range got {
		if p != got[i%4] || p.ID() != i%4 {
			t.Fatalf("Process(%d) returned handle of %d / a different handle", i%4, p.ID())
		}
	}
}

func TestOccupancy(t *testing.T) {
	for _, tsc := range []bool{false, true} {
		t.Run(fmt.Sprintf("tsc=%v", tsc), func(t *testing.T) {
			defer setTSC(tsc && tscOn())()
			path := filepath.Join(t.TempDir(), "occ.pst")
			rec, err := Start(Options{Path: path, Occupancy: true, BufferRecords: 50, MemoryLimit: 1, States: []trace.StateDef{{ID: 2, Name: "busy"}}})
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			for i := 0; i < 3; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					p := rec.Process(i)
					for k := 0; k < 1000; k++ {
						p.Block(int32(k % (3 + i)))
					}
					if i == 0 {
						p.Done()
					}
				}()
			}
			wg.Wait()
			if err := rec.Close(); err != nil {
				t.Fatal(err)
			}
			h, by := readBack(t, path)
			ix := trace.NewIndex(h)
			if ix.Counter(2) == nil || ix.Counter(2).Name != "occupancy busy" || ix.Counter(2).Unit != "ns" {
				t.Errorf("counter 2 = %+v", ix.Counter(2))
			}
			for p := int32(0); p < 3; p++ {
				sum := map[int32]float64{}
				var states []trace.Record
				counters := map[int32]trace.Record{}
				for _, r := range by[p] {
					switch r.Kind {
					case trace.KindState:
						states = append(states, r)
					case trace.KindCounter:
						counters[r.ID] = r
					}
				}
				if len(states) != 1000 || len(counters) != int(3+p) {
					t.Fatalf("process %d: %d states and %d counters, want 1000 and %d", p, len(states), len(counters), 3+p)
				}
				end := counters[0].T
				for i, s := range states {
					next := end
					if i+1 < len(states) {
						next = states[i+1].T
					}
					sum[s.ID] += float64(next - s.T)
				}
				var total float64
				for id, c := range counters {
					if c.T != end {
						t.Errorf("process %d: counters at %d and %d", p, c.T, end)
					}
					total += c.Float()
					// Each state entry's time is rounded once: the sums agree
					// exactly on the nanosecond clock, within a nanosecond per
					// entry on the TSC.
					tol := 0.0
					if tsc {
						tol = 1000
					}
					if math.Abs(c.Float()-sum[id]) > tol {
						t.Errorf("process %d state %d: occupancy %.0f ns, durations sum to %.0f", p, id, c.Float(), sum[id])
					}
				}
				if span := float64(end - states[0].T); math.Abs(total-span) > 1000 {
					t.Errorf("process %d: occupancies sum to %.0f, span is %.0f", p, total, span)
				}
			}
		})
	}
}

func TestBBV(t *testing.T) {
	for _, tc := range []struct {
		every, blocks int64
	}{{10, 95}, {7, 70}, {1000, 50}} {
		t.Run(fmt.Sprint(tc.every), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "bbv.pst")
			rec, err := Start(Options{Path: path, BBVInterval: tc.every, Filter: DropKinds(trace.KindState)})
			if err != nil {
				t.Fatal(err)
			}
			p := rec.Process(0)
			want := map[[2]int32]int64{}
			for i := int64(0); i < tc.blocks; i++ {
				id := int32(i*i%5) + 100*int32(i%2)
				p.Block(id)
				want[[2]int32{int32(i / tc.every), id}]++
			}
			if err := rec.Close(); err != nil {
				t.Fatal(err)
			}
			_, by := readBack(t, path)
			got := map[[2]int32]int64{}
			sums := map[int32]int64{}
			for _, r := range by[0] {
				switch r.Kind {
				case trace.KindState:
					t.Fatalf("state record kept despite the filter: %v", r)
				case trace.KindBBV:
					got[[2]int32{r.Seq, r.ID}] += r.Value
					sums[r.Seq] += r.Value
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("vectors\n got %v\nwant %v", got, want)
			}
			intervals := int32((tc.blocks + tc.every - 1) / tc.every)
			if int32(len(sums)) != intervals {
				t.Fatalf("%d intervals, want %d", len(sums), intervals)
			}
			for seq, s := range sums {
				w := tc.every
				if seq == intervals-1 && tc.blocks%tc.every != 0 {
					w = tc.blocks % tc.every
				}
				if s != w {
					t.Errorf("interval %d sums to %d, want %d", seq, s, w)
				}
			}
		})
	}
}

// dropBlock drops state id 2 and every region record.
type dropBlock struct{}

func (dropBlock) Keep(_ int, k trace.Kind, id int32, _ int64) bool {
	return !(k == trace.KindState && id == 2) && k != trace.KindEnter && k != trace.KindExit
}

func TestFilterCountsDrops(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.pst")
	rec, err := Start(Options{Path: path, Filter: dropBlock{}})
	if err != nil {
		t.Fatal(err)
	}
	p := rec.Process(0)
	seq := []int32{1, 2, 2, 2, 3, 2, 1, 2, 2}
	for _, id := range seq {
		p.Block(id)
	}
	p.Enter(4)
	p.Exit(4)
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	_, got := described(t, path)
	want := fmt.Sprint([]string{"state 1", DroppedEvent + "=3", "state 3", DroppedEvent + "=1", "state 1", DroppedEvent + "=4"})
	if fmt.Sprint(got) != want {
		t.Errorf("got  %v\nwant %v", got, want)
	}
}

func TestDisabled(t *testing.T) {
	rec, err := Start(Options{Path: filepath.Join(t.TempDir(), "d.pst"), Disabled: true})
	if err != nil || rec != nil {
		t.Fatalf("Start(Disabled) = %v, %v; want nil, nil", rec, err)
	}
	p := rec.Process(3)
	p.Block(1)
	p.Enter(1)
	p.Exit(1)
	p.Send(1, 2, 3)
	p.Recv(1, 2, 3)
	p.Event(rec.EventID("x"))
	if p != nil || p.Flush() != nil || p.Done() != nil || rec.Flush() != nil || rec.Close() != nil {
		t.Fatal("a disabled recorder did something")
	}
}

func TestStartErrors(t *testing.T) {
	dir := t.TempDir()
	existing := filepath.Join(dir, "old.pst")
	storetest.Create(t, existing, nil, nil)
	notATrace := filepath.Join(dir, "notes")
	os.Mkdir(notATrace, 0o755)
	leftover := filepath.Join(dir, "crashed.pst")
	os.Mkdir(SpillDir(leftover), 0o755)
	for _, tc := range []struct {
		name string
		opts Options
		ok   bool
	}{
		{"no path", Options{}, false},
		{"exists", Options{Path: existing}, false},
		{"exists force", Options{Path: existing, Force: true}, true},
		{"force over what is not a trace", Options{Path: notATrace, Force: true}, false},
		{"leftover spill", Options{Path: leftover}, false},
		{"leftover spill force", Options{Path: leftover, Force: true}, true},
		{"negative bbv", Options{Path: filepath.Join(dir, "n.pst"), BBVInterval: -1}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec, err := Start(tc.opts)
			if (err == nil) != tc.ok {
				t.Fatalf("err = %v, want ok=%v", err, tc.ok)
			}
			rec.Abort()
		})
	}
}

// The helper process of TestFlushSurvivesExit: it records on two processes,
// flushes at known points, records more and leaves with os.Exit.
func TestMain(m *testing.M) {
	if path := os.Getenv("INSTRUMENT_EXIT_HELPER"); path != "" {
		rec, err := Start(Options{Path: path, Program: "crasher"})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		ev := rec.EventID("late")
		a, b := rec.Process(0), rec.Process(1)
		for i := 0; i < 10; i++ {
			a.Block(int32(i))
			b.Block(int32(100 + i))
		}
		a.Flush() // a: 10 records on disk
		for i := 0; i < 5; i++ {
			a.Block(50) // after the flush point: lost
		}
		b.Event(ev)
		if err := rec.Flush(); err != nil { // b: 11 records on disk, a: 15
			os.Exit(2)
		}
		a.Block(60)
		b.Block(60) // lost
		os.Exit(3)
	}
	os.Exit(m.Run())
}

func TestFlushSurvivesExit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "crash.pst")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "INSTRUMENT_EXIT_HELPER="+path)
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 3 {
		t.Fatalf("helper: %v", err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("a trace exists before Recover: %v", err)
	}
	if _, err := Recover(path, RecoverOptions{}); err != nil {
		t.Fatal(err)
	}
	h, by := readBack(t, path)
	if h.Meta.Program != "crasher" || h.Meta.Extra["recovered"] != "true" {
		t.Errorf("meta = %+v", h.Meta)
	}
	ix := trace.NewIndex(h)
	var a, b []string
	for _, r := range by[0] {
		a = append(a, describe(r))
	}
	for _, r := range by[1] {
		if r.Kind == trace.KindEvent {
			b = append(b, ix.EventName(r.ID))
		} else {
			b = append(b, describe(r))
		}
	}
	var wantA, wantB []string
	for i := 0; i < 10; i++ {
		wantA = append(wantA, fmt.Sprintf("state %d", i))
		wantB = append(wantB, fmt.Sprintf("state %d", 100+i))
	}
	for i := 0; i < 5; i++ {
		wantA = append(wantA, "state 50")
	}
	wantB = append(wantB, "late")
	if fmt.Sprint(a) != fmt.Sprint(wantA) || fmt.Sprint(b) != fmt.Sprint(wantB) {
		t.Errorf("recovered\n a %v\n b %v\nwant\n a %v\n b %v", a, b, wantA, wantB)
	}
	if _, err := os.Stat(SpillDir(path)); !os.IsNotExist(err) {
		t.Errorf("spill directory kept after Recover")
	}
	if _, err := Recover(path, RecoverOptions{}); err == nil {
		t.Error("a second Recover succeeded")
	}
}

// TestClockShortAndLongRuns checks the tick-to-nanosecond conversion with
// no wait at Start or Close: in a run of about 1 ms and one of 150 ms,
// each with a gap between two blocks timed on the monotonic clock, the
// trace must show the gap to within 20 µs (a wrong tick rate is off by a
// large factor). In the long run (refreshCalibration shortened to 100
// ms), the spill header's calibration must have been refreshed at least
// refreshCalibration after the start on the TSC, with a process recording
// meanwhile (under -race, the refresh against it), and not at all on the
// monotonic clock.
func TestClockShortAndLongRuns(t *testing.T) {
	for _, tc := range []struct {
		name string
		gap  time.Duration
		long bool
	}{{"short", time.Millisecond, false}, {"long", 150 * time.Millisecond, true}} {
		t.Run(tc.name, func(t *testing.T) {
			defer func(d time.Duration) { refreshCalibration = d }(refreshCalibration)
			refreshCalibration = 100 * time.Millisecond
			path := filepath.Join(t.TempDir(), "out.pst")
			rec, err := Start(Options{Path: path, Program: "test"})
			if err != nil {
				t.Fatal(err)
			}
			p := rec.Process(0)
			a := nanotime()
			p.Block(1)
			for i := int32(0); nanotime()-a < int64(tc.gap); i++ {
				if tc.long && i%1024 == 0 {
					p.Block(3 + i/1024%2) // recording while the header is refreshed
				}
			}
			b := nanotime()
			p.Block(2)
			if tc.long {
				data, err := os.ReadFile(filepath.Join(SpillDir(path), headerFile))
				if err != nil {
					t.Fatal(err)
				}
				var h spillHeader
				if err := json.Unmarshal(data, &h); err != nil {
					t.Fatal(err)
				}
				d := time.Duration(h.Calibrated.Nanos - h.Start.Nanos)
				switch {
				case useTSC && d < refreshCalibration:
					t.Errorf("the spill header's calibration spans %v after %v of recording, want at least %v", d, tc.gap, refreshCalibration)
				case !useTSC && d >= refreshCalibration:
					// On the monotonic clock there is nothing to refresh,
					// and no goroutine should wake to do it.
					t.Errorf("the spill header was refreshed (%v) on the monotonic clock", d)
				}
			}
			if err := rec.Close(); err != nil {
				t.Fatal(err)
			}
			_, by := readBack(t, path)
			var t1, t2 int64 = -1, -1
			for _, r := range by[0] {
				switch {
				case r.Kind == trace.KindState && r.ID == 1 && t1 < 0:
					t1 = r.T
				case r.Kind == trace.KindState && r.ID == 2:
					t2 = r.T
				}
			}
			if t1 < 0 || t2 < 0 {
				t.Fatalf("blocks 1 and 2 not found in %d records", len(by[0]))
			}
			if got, want := t2-t1, b-a; got < want-20_000 || got > want+20_000 {
				t.Errorf("the trace puts %d ns between the blocks, the monotonic clock %d ns", got, want)
			}
		})
	}
}

// TestBufferGrowsBeforeSpilling records more entries than a process's first
// buffer holds and fewer than Options.BufferRecords: the buffer doubles
// instead of handing chunks to the spill writer, a process that is done
// keeps no buffer, and the trace holds every entry in order. A process of
// a full buffer and more hands whole chunks of BufferRecords.
func TestBufferGrowsBeforeSpilling(t *testing.T) {
	path := filepath.Join(t.TempDir(), "g.pst")
	rec, err := Start(Options{Path: path, BufferRecords: 1000})
	if err != nil {
		t.Fatal(err)
	}
	small, big := rec.Process(0), rec.Process(1)
	if len(small.buf) != firstBuffer {
		t.Fatalf("first buffer holds %d entries, want %d", len(small.buf), firstBuffer)
	}
	for i := range 300 {
		small.Block(int32(i))
	}
	if len(small.buf) != 512 || small.spilled {
		t.Fatalf("after 300 entries: buffer of %d, spilled %v; want 512 entries, nothing spilled", len(small.buf), small.spilled)
	}
	for i := range 2500 {
		big.Block(int32(i))
	}
	if !big.spilled || len(big.buf) != 1000 {
		t.Fatalf("after 2500 entries: buffer of %d, spilled %v; want a full buffer of 1000 after spilling", len(big.buf), big.spilled)
	}
	if err := small.Done(); err != nil {
		t.Fatal(err)
	}
	if small.buf != nil {
		t.Fatalf("a finished process holds a buffer of %d entries", len(small.buf))
	}
	if err := big.Done(); err != nil {
		t.Fatal(err)
	}
	// Done hands the buffers over without waiting for the writer; a flush
	// point files and writes them.
	if err := rec.Flush(); err != nil {
		t.Fatal(err)
	}
	var sizes []int
	for _, c := range rec.sp.chunks[1] {
		sizes = append(sizes, c.n)
	}
	nSmall := len(rec.sp.chunks[0])
	if fmt.Sprint(sizes) != "[1000 1000 500]" || nSmall != 1 {
		t.Fatalf("chunks of process 1: %v, want [1000 1000 500]; process 0 has %d chunks, want 1", sizes, nSmall)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	_, by := readBack(t, path)
	for p, n := range map[int32]int{0: 300, 1: 2500} {
		var ids []int32
		for _, r := range by[p] {
			if r.Kind == trace.KindState {
				ids = append(ids, r.ID)
			}
		}
		// The start block (0) and the end block come first and last.
		if len(ids) < n {
			t.Fatalf("process %d: %d blocks in the trace, want at least %d", p, len(ids), n)
		}
		for i := range n {
			if ids[i] != int32(i) {
				t.Fatalf("process %d: block %d is %d, want %d", p, i, ids[i], i)
			}
		}
	}
}

// TestDefaultBufferSizes checks the sizes a recorder takes when Options
// leaves them at zero: buffers of 1024 records, four full buffers
// (128 KiB) held before the writer writes the oldest and gives them back
// for reuse, and 1 MiB of finished processes' entries held before the
// writer is woken for them; a process's first buffer grows to 1024
// records and no further. Larger defaults made programs of many
// processes fill fresh memory instead of reused buffers
// (docs/performance.md, "Buffers given back sooner").
func TestDefaultBufferSizes(t *testing.T) {
	rec, err := Start(Options{Path: filepath.Join(t.TempDir(), "d.pst")})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	if rec.opts.BufferRecords != 1024 || rec.opts.MemoryLimit != 128<<10 {
		t.Fatalf("defaults: %d records a buffer, memory limit %d; want 1024 and %d", rec.opts.BufferRecords, rec.opts.MemoryLimit, 128<<10)
	}
	if rec.sp.limit != 4 || rec.sp.holdLimit != 32768 {
		t.Fatalf("spill writer holds %d full buffers and %d entries of finished processes; want 4 and 32768 (1 MiB)", rec.sp.limit, rec.sp.holdLimit)
	}
	p := rec.Process(0)
	for i := range 1024 {
		p.Block(int32(i % 7))
	}
	if len(p.buf) != 1024 || p.spilled {
		t.Fatalf("after 1024 blocks: buffer of %d, spilled %v; want 1024 entries, not spilled yet", len(p.buf), p.spilled)
	}
	p.Block(1)
	if len(p.buf) != 1024 || !p.spilled {
		t.Fatalf("after 1025 blocks: buffer of %d, spilled %v; want a full buffer of 1024 after spilling", len(p.buf), p.spilled)
	}
}

// TestHeaderWriteFails makes the spill header's writes fail: Start, which
// writes the first one in the background, succeeds; Flush and Close report
// the failure, and Close writes no trace.
func TestHeaderWriteFails(t *testing.T) {
	full := errors.New("no space left on device")
	old := writeHeaderFile
	writeHeaderFile = func(string, *spillHeader, bool) error { return full }
	defer func() { writeHeaderFile = old }()
	path := filepath.Join(t.TempDir(), "h.pst")
	rec, err := Start(Options{Path: path})
	if err != nil {
		t.Fatalf("Start: %v (the header is written in the background)", err)
	}
	p := rec.Process(0)
	p.Block(1)
	if err := rec.Flush(); !errors.Is(err, full) {
		t.Fatalf("Flush: err = %v, want the header's write error", err)
	}
	if err := p.Flush(); !errors.Is(err, full) {
		t.Fatalf("Process.Flush: err = %v, want the header's write error", err)
	}
	if err := rec.Close(); !errors.Is(err, full) {
		t.Fatalf("Close: err = %v, want the header's write error", err)
	}
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Close wrote %s after the header failed (err %v)", path, err)
	}
}

// TestManyProcesses records more processes than build merges itself
// (mergeLimit), and as many as it does, from goroutines running at once,
// some recording more than a buffer, and checks that each process's
// records come back whole and in order.
func TestManyProcesses(t *testing.T) {
	for _, procs := range []int{mergeLimit, 3*mergeLimit + 5} {
		t.Run(fmt.Sprint(procs), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "many.pst")
			rec, err := Start(Options{Path: path, BufferRecords: 64})
			if err != nil {
				t.Fatal(err)
			}
			steps := func(id int) int { return 1 + id%7 + 100*(id%50/49) } // every 50th process records 100 more
			var wg sync.WaitGroup
			for id := range procs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					p := rec.Process(id)
					for i := range steps(id) {
						p.Block(int32(i % 5))
					}
					if err := p.Done(); err != nil {
						t.Error(err)
					}
				}()
			}
			wg.Wait()
			if err := rec.Close(); err != nil {
				t.Fatal(err)
			}
			_, by := readBack(t, path)
			if len(by) != procs {
				t.Fatalf("%d processes in the trace, want %d", len(by), procs)
			}
			for id := range procs {
				rs := by[int32(id)]
				if len(rs) != steps(id) {
					t.Fatalf("process %d: %d records, want %d", id, len(rs), steps(id))
				}
				for i, r := range rs {
					if r.Kind != trace.KindState || r.ID != int32(i%5) || (i > 0 && r.T < rs[i-1].T) {
						t.Fatalf("process %d, record %d: %s, want block %d after %d ns", id, i, describe(r), i%5, rs[max(i-1, 0)].T)
					}
				}
			}
		})
	}
}
