package gotrace

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	rtrace "runtime/trace"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parscope/parscope/trace"
)

// goNext lists, per goroutine state, the states a goroutine can move to.
var goNext = map[int32][]int32{
	StateRunning:  {StateRunnable, StateWaiting, StateSyscall, StateNotExist},
	StateRunnable: {StateRunning},
	StateWaiting:  {StateRunnable},
	StateSyscall:  {StateRunning, StateRunnable},
	StateNotExist: {StateRunnable},
}

// procNext lists, per P state, the states a P can move to.
var procNext = map[int32][]int32{
	StateRunning:  {StateIdle, StateNotExist},
	StateIdle:     {StateRunning, StateNotExist},
	StateNotExist: {StateIdle, StateRunning},
}

// checkSequences checks that each process's states follow the runtime's
// state machine and that its records are in time order.
func checkSequences(t *testing.T, m *trace.Memory, next map[int32][]int32) {
	t.Helper()
	last := map[int32]int32{}
	lastT := map[int32]int64{}
	bad := 0
	for _, r := range m.Records {
		if r.T < lastT[r.Proc] {
			t.Fatalf("process %d goes back in time at %v", r.Proc, r)
		}
		lastT[r.Proc] = r.T
		if r.Kind != trace.KindState {
			continue
		}
		if prev, ok := last[r.Proc]; ok {
			allowed := false
			for _, s := range next[prev] {
				allowed = allowed || s == r.ID
			}
			if !allowed && bad < 5 {
				bad++
				t.Errorf("process %d moves from %s to %s at %d", r.Proc, stateDefs[prev].Name, stateDefs[r.ID].Name, r.T)
			}
		}
		last[r.Proc] = r.ID
	}
}

// TestStateMachine checks the state sequences of the real traces.
func TestStateMachine(t *testing.T) {
	for _, name := range []string{"stress.go1.26.trace", "test-encoding-json.go1.25.trace"} {
		path := realFile(t, name)
		checkSequences(t, importFile(t, nil, path), goNext)
		checkSequences(t, importFile(t, map[string]string{ParamBy: "p"}, path), procNext)
	}
}

// genWorker receives jobs once the gate opens, works on each inside a
// "work" region and sends the result back.
func genWorker(gate <-chan struct{}, jobs <-chan int, results chan<- int, wg *sync.WaitGroup) {
	defer wg.Done()
	<-gate
	for j := range jobs {
		var r int
		rtrace.WithRegion(context.Background(), "work", func() {
			for i := range 1000 {
				r += i * j
			}
		})
		results <- r
	}
}

// TestGenerated traces a small program with runtime/trace (three workers,
// channels and a region) and checks what the import finds in it.
func TestGenerated(t *testing.T) {
	var buf bytes.Buffer
	if err := rtrace.Start(&buf); err != nil {
		t.Skipf("cannot start runtime/trace (is the test itself traced?): %v", err)
	}
	const workers, jobs = 3, 30
	gate := make(chan struct{})
	jobc, results := make(chan int), make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go genWorker(gate, jobc, results, &wg)
	}
	go func() {
		time.Sleep(10 * time.Millisecond) // the workers block on the gate
		close(gate)
		for i := range jobs {
			jobc <- i
		}
		close(jobc)
	}()
	go func() {
		wg.Wait()
		close(results)
	}()
	n := 0
	for range results {
		n++
	}
	rtrace.Stop()
	if n != jobs {
		t.Fatalf("%d results", n)
	}
	path := filepath.Join(t.TempDir(), "gen.trace")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}

	m := importFile(t, nil, path)
	checkSequences(t, m, goNext)
	ix := trace.NewIndex(&m.H)
	var workerProcs []int32
	for _, p := range m.H.Procs {
		if strings.HasSuffix(p.Name, ".genWorker") {
			workerProcs = append(workerProcs, p.Proc)
			if !strings.HasSuffix(p.Extra["created_by"], ".TestGenerated") {
				t.Errorf("worker %s created by %q", p.Extra["goid"], p.Extra["created_by"])
			}
		}
	}
	if len(workerProcs) != workers {
		t.Fatalf("%d processes named after genWorker, want %d: %+v", len(workerProcs), workers, m.H.Procs)
	}
	isWorker := map[int32]bool{}
	for _, p := range workerProcs {
		isWorker[p] = true
	}
	var enters, exits, blocks int
	depth := map[int32]int{}
	for _, r := range m.Records {
		switch r.Kind {
		case trace.KindEnter, trace.KindExit:
			if ix.RegionName(r.ID) != "work" || !isWorker[r.Proc] {
				t.Fatalf("region %q on process %d", ix.RegionName(r.ID), r.Proc)
			}
			if r.Kind == trace.KindEnter {
				enters++
				depth[r.Proc]++
			} else {
				exits++
				depth[r.Proc]--
			}
			if depth[r.Proc] < 0 || depth[r.Proc] > 1 {
				t.Fatalf("region depth %d on process %d", depth[r.Proc], r.Proc)
			}
		case trace.KindEvent:
			if isWorker[r.Proc] && strings.HasPrefix(ix.EventName(r.ID), "block: chan") {
				blocks++
			}
		}
	}
	if enters != jobs || exits != jobs {
		t.Errorf("%d enters and %d exits of region work, want %d", enters, exits, jobs)
	}
	if blocks < workers {
		t.Errorf("%d channel blocks on the workers, want at least %d (each waits at the gate)", blocks, workers)
	}
	if len(m.H.Repairs) != 0 {
		t.Errorf("repairs %v", m.H.Repairs)
	}
}
