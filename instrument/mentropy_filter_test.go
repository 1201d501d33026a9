package instrument

import (
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/parscope/parscope/analysis/mentropy"
	"github.com/parscope/parscope/trace"
)

// table4Config is the Table 4 configuration of Özmen 2002: W = 4, K = 100,
// α = 0.5 0.7 0.8 0.9 0.99, β = 0.5 0.3 0.2 0.1 0.01.
var table4Config = mentropy.Config{Window: 4, K: 100, Alpha: []float64{0.5, 0.7, 0.8, 0.9, 0.99},
	Beta: []float64{0.5, 0.3, 0.2, 0.1, 0.01}}

func TestEntropyFilterKeep(t *testing.T) {
	// Uniform over 7 ids: a repeat's H is 0.2548 at I=1, 0.0091 at I=2, so
	// a threshold of 0.1 keeps the first two events of every run.
	f, err := NewEntropyFilter(EntropyOptions{Config: table4Config, Threshold: 0.1, Procs: 2, Alphabet: 7})
	if err != nil {
		t.Fatal(err)
	}
	seq := []int32{0, 3, 3, 3, 3, 3, 4, 3, 3, 3, 9, 9, 9}
	want := "KKKdddKKKdKKK" // ids ≥ 7 are outside the alphabet: always kept
	var got strings.Builder
	for _, id := range seq {
		if f.Keep(1, trace.KindState, id, 0) {
			got.WriteByte('K')
		} else {
			got.WriteByte('d')
		}
	}
	if got.String() != want {
		t.Errorf("decisions %s, want %s", got.String(), want)
	}
	// Kinds are separate streams, processes too, and unfiltered kinds pass.
	for i := range 5 {
		if !f.Keep(0, trace.KindSend, 0, 0) || (i < 2) != f.Keep(0, trace.KindEvent, 2, 0) {
			t.Fatalf("event repeat %d", i)
		}
	}
	if !f.Keep(5, trace.KindState, 3, 0) {
		t.Error("process outside the filter dropped")
	}
	if k, d := f.Counts(1); k != 9 || d != 4 {
		t.Errorf("counts %d kept %d dropped", k, d)
	}
	for _, o := range []EntropyOptions{
		{Config: table4Config, Procs: 0, Alphabet: 7},
		{Config: table4Config, Procs: 1, Alphabet: 0},
		{Config: mentropy.Config{Window: 4}, Procs: 1, Alphabet: 7},
		{Config: table4Config, Procs: 1, Alphabet: 7, Kinds: []trace.Kind{0}},
		{Config: table4Config, Procs: 1, Alphabet: 7, Threshold: -1},
	} {
		if _, err := NewEntropyFilter(o); err == nil {
			t.Errorf("accepted %+v", o)
		}
	}
}

func TestEntropyFilterNoAlloc(t *testing.T) {
	f, err := NewEntropyFilter(EntropyOptions{Config: table4Config, Threshold: 0.1, Procs: 1, Alphabet: 7})
	if err != nil {
		t.Fatal(err)
	}
	i := int32(0)
	if a := testing.AllocsPerRun(1000, func() { i++; f.Keep(0, trace.KindState, (i/50)%7, 0) }); a != 0 {
		t.Errorf("%v allocations per Keep", a)
	}
}

// masterWorker records the Figure 3 program (blocks only): process 0
// dispatches tasks to the workers, every process runs do_calc steps for its
// tasks, the master collects the results. It returns every process's true
// block sequence.
func masterWorker(rec *Recorder, workers, tasks int, seed uint64) [][]int32 {
	const start, send, recv, calc, sendRes, recvRes, stop = 0, 1, 2, 3, 4, 5, 6
	rng := rand.New(rand.NewPCG(seed, 1))
	steps := make([]int, tasks)
	for i := range steps {
		steps[i] = 20 + rng.IntN(21)
	}
	procs := workers + 1
	truth := make([][]int32, procs)
	var mu, doneMu sync.Mutex
	// done serialises Done: with Occupancy on, concurrent Done calls race in
	// Recorder.header (it ranges over occIDs after releasing r.mu while
	// addOccupancyStates appends to it); reported to the lead.
	done := func(p *Process) {
		doneMu.Lock()
		defer doneMu.Unlock()
		p.Done()
	}
	block := func(p *Process, id int32) {
		p.Block(id)
		mu.Lock()
		truth[p.ID()] = append(truth[p.ID()], id)
		mu.Unlock()
	}
	ch := make([]chan int, procs)
	res := make([]chan int, procs)
	for w := range ch {
		ch[w], res[w] = make(chan int, tasks), make(chan int, tasks)
	}
	var wg sync.WaitGroup
	for w := 1; w < procs; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := rec.Process(w)
			block(p, start)
			for {
				block(p, recv)
				id, ok := <-ch[w]
				if !ok {
					break
				}
				p.Recv(0, 16, int32(id))
				for range steps[id] {
					block(p, calc)
				}
				block(p, sendRes)
				p.Send(0, 8, int32(id))
				res[w] <- id
			}
			block(p, stop)
			done(p)
		}()
	}
	p := rec.Process(0)
	block(p, start)
	for id := range tasks {
		if w := id % procs; w != 0 {
			block(p, send)
			p.Send(w, 16, int32(id))
			ch[w] <- id
		}
	}
	for w := 1; w < procs; w++ {
		close(ch[w])
	}
	for id := range tasks {
		if id%procs == 0 {
			for range steps[id] {
				block(p, calc)
			}
		}
	}
	for id := range tasks {
		if w := id % procs; w != 0 {
			block(p, recvRes)
			<-res[w]
			p.Recv(w, 8, int32(id))
		}
	}
	block(p, stop)
	done(p)
	wg.Wait()
	return truth
}

func dirBytes(t *testing.T, dir string) int64 {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func fileBytes(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// TestEntropyFilterMasterWorker records the master/worker program with and
// without the filter and checks that the filtered trace keeps every change
// of state, that the run lengths are rebuilt exactly from the dropped
// counts, and that the occupancies rebuilt from the kept states equal the
// occupancy counters (which see every block).
func TestEntropyFilterMasterWorker(t *testing.T) {
	const workers, tasks = 3, 400
	states := make([]trace.StateDef, 7)
	for i, n := range []string{"program_st", "send_i", "recv1", "do_calc", "send_res", "recv_res", "program_sp"} {
		states[i] = trace.StateDef{ID: int32(i), Name: n}
	}
	dir := t.TempDir()
	full := filepath.Join(dir, "full.pst")
	rec, err := Start(Options{Path: full, States: states, Occupancy: true})
	if err != nil {
		t.Fatal(err)
	}
	masterWorker(rec, workers, tasks, 7)
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	filt := filepath.Join(dir, "filtered.pst")
	f, err := NewEntropyFilter(EntropyOptions{Config: table4Config, Threshold: 0.1, Procs: workers + 1,
		Kinds: []trace.Kind{trace.KindState}, Alphabet: len(states)})
	if err != nil {
		t.Fatal(err)
	}
	rec, err = Start(Options{Path: filt, States: states, Occupancy: true, Filter: f})
	if err != nil {
		t.Fatal(err)
	}
	truth := masterWorker(rec, workers, tasks, 7)
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	h, by := readBack(t, filt)
	_, byFull := readBack(t, full)
	var dropEv int32 = -1
	for _, e := range h.Events {
		if e.Name == DroppedEvent {
			dropEv = e.ID
		}
	}
	var keptAll, totalAll, recsFull, recsFilt int
	for p := int32(0); p <= workers; p++ {
		var rebuilt []int32
		var kept []trace.Record
		occ := map[int32]float64{}
		counters := map[int32]trace.Record{}
		for _, r := range by[p] {
			switch {
			case r.Kind == trace.KindState:
				rebuilt = append(rebuilt, r.ID)
				kept = append(kept, r)
			case r.Kind == trace.KindEvent && r.ID == dropEv:
				last := rebuilt[len(rebuilt)-1]
				for range r.Value {
					rebuilt = append(rebuilt, last)
				}
			case r.Kind == trace.KindCounter:
				counters[r.ID] = r
			}
		}
		if fmt.Sprint(rebuilt) != fmt.Sprint(truth[p]) {
			t.Errorf("process %d: rebuilt sequence differs from the recorded one (%d vs %d blocks)", p, len(rebuilt), len(truth[p]))
		}
		// The kept states: every run's first two entries.
		want := 0
		for i := range truth[p] {
			if i < 2 || truth[p][i] != truth[p][i-1] || truth[p][i] != truth[p][i-2] {
				want++
			}
		}
		if len(kept) != want {
			t.Errorf("process %d: kept %d states, want %d", p, len(kept), want)
		}
		if k, d := f.Counts(int(p)); int(k) != want || int(k+d) != len(truth[p]) {
			t.Errorf("process %d: filter counts %d kept %d dropped", p, k, d)
		}
		end := counters[0].T
		for i, s := range kept {
			next := end
			if i+1 < len(kept) {
				next = kept[i+1].T
			}
			occ[s.ID] += float64(next - s.T)
		}
		for id, c := range counters {
			// One rounding per kept entry on the TSC clock.
			if math.Abs(c.Float()-occ[id]) > float64(len(kept)+1) {
				t.Errorf("process %d state %d: occupancy counter %.0f ns, rebuilt from kept states %.0f ns", p, id, c.Float(), occ[id])
			}
		}
		keptAll += len(kept)
		totalAll += len(truth[p])
		recsFull += len(byFull[p])
		recsFilt += len(by[p])
	}
	bf, bt := dirBytes(t, full), dirBytes(t, filt)
	sf, st := fileBytes(t, filepath.Join(full, "states.parquet")), fileBytes(t, filepath.Join(filt, "states.parquet"))
	t.Logf("states kept %d of %d (%.1f%% dropped); records %d → %d; states table %d → %d bytes; store %d → %d bytes (%.1f%% saved)",
		keptAll, totalAll, 100*float64(totalAll-keptAll)/float64(totalAll), recsFull, recsFilt, sf, st, bf, bt, 100*float64(bf-bt)/float64(bf))
	// The whole store of so small a run is mostly fixed overhead (Parquet
	// footers, the manifest), and the two runs' timings differ, so only the
	// records and the states table, which the filter thins, are compared.
	if recsFilt*2 >= recsFull || st >= sf {
		t.Errorf("filtered trace not smaller: %d records, states table %d bytes vs %d, %d", recsFilt, st, recsFull, sf)
	}
}

func BenchmarkEntropyFilterKeep(b *testing.B) {
	f, err := NewEntropyFilter(EntropyOptions{Config: table4Config, Threshold: 0.1, Procs: 1, Alphabet: 7})
	if err != nil {
		b.Fatal(err)
	}
	ids := make([]int32, 1024)
	for i := range ids {
		ids[i] = int32(i/100) % 7
	}
	b.ReportAllocs()
	b.ResetTimer()
	kept := 0
	for i := 0; i < b.N; i++ {
		if f.Keep(0, trace.KindState, ids[i&1023], 0) {
			kept++
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/event")
}

// TestEntropyFilterDynamic: with Dynamic, processes the program creates as
// it runs (any id) get their own meters from the recorder, and each drops
// the same repeats as a fixed process would.
func TestEntropyFilterDynamic(t *testing.T) {
	states := make([]trace.StateDef, 7)
	for i := range states {
		states[i] = trace.StateDef{ID: int32(i), Name: fmt.Sprint("s", i)}
	}
	f, err := NewEntropyFilter(EntropyOptions{Config: table4Config, Threshold: 0.1, Dynamic: true, Alphabet: len(states)})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := Start(Options{Path: filepath.Join(t.TempDir(), "d.pst"), States: states, Filter: f})
	if err != nil {
		t.Fatal(err)
	}
	ids := []int{0, 1024, 5000}
	var wg sync.WaitGroup
	for _, id := range ids {
		p := rec.Process(id)
		wg.Go(func() {
			// Runs of 10 repeats of 1, 2, 3: the first two of each run kept.
			for _, s := range []int32{1, 2, 3} {
				for range 10 {
					p.Block(s)
				}
			}
			p.Done()
		})
	}
	wg.Wait()
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if k, d := f.Counts(id); k != 6 || d != 24 {
			t.Errorf("process %d: kept %d, dropped %d; want 6, 24", id, k, d)
		}
	}
	if k, d := f.Counts(7); k != 0 || d != 0 {
		t.Errorf("process 7 never created: kept %d, dropped %d", k, d)
	}
	if _, err := NewEntropyFilter(EntropyOptions{Config: mentropy.Config{Window: 4}, Dynamic: true, Alphabet: 7}); err == nil {
		t.Error("bad configuration accepted with Dynamic")
	}
}

// TestDefaultEntropyConfig: the default is Table 4's and keeps the first
// two events of a run over 7 ids at threshold 0.1, as documented.
func TestDefaultEntropyConfig(t *testing.T) {
	c := DefaultEntropyConfig()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if c.Window != table4Config.Window || c.K != table4Config.K || fmt.Sprint(c.Alpha, c.Beta) != fmt.Sprint(table4Config.Alpha, table4Config.Beta) {
		t.Errorf("default %+v, Table 4 %+v", c, table4Config)
	}
	c.Alpha[0] = 0.1
	if DefaultEntropyConfig().Alpha[0] != 0.5 {
		t.Error("DefaultEntropyConfig shares its tables")
	}
}
