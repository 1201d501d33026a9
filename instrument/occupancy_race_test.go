package instrument

import (
	"path/filepath"
	"sync"
	"testing"

	"github.com/parscope/parscope/store"
	"github.com/parscope/parscope/store/storetest"
)

// TestConcurrentDoneWithOccupancy finishes many processes at once with
// occupancy counters on; the recorder's header building must not race with
// the processes registering their counters (run under -race).
func TestConcurrentDoneWithOccupancy(t *testing.T) {
	path := filepath.Join(t.TempDir(), "occ.pst")
	rec, err := Start(Options{Path: path, Occupancy: true})
	if err != nil {
		t.Fatal(err)
	}
	const procs = 16
	var wg sync.WaitGroup
	for id := 0; id < procs; id++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := rec.Process(id)
			for i := 0; i < 200; i++ {
				p.Block(int32(id*10 + i%5)) // states of its own: every Done registers new counters
			}
			p.Done()
		}()
	}
	wg.Wait()
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	s := storetest.Open(t, path)
	if got := s.Manifest().Stats.Records["state"]; got != procs*200 {
		t.Fatalf("%d state records, want %d", got, procs*200)
	}
	if n := len(s.Header().Counters); n != procs*5 {
		t.Fatalf("%d occupancy counters defined, want %d (one per state)", n, procs*5)
	}
}

// TestDoneRacesClose: processes that have finished recording call Done
// while the program closes the recorder (a goroutine's deferred Done as
// main returns). Done and Close must not race; a Done that comes after
// Close reports ErrClosed, and the trace holds every record.
func TestDoneRacesClose(t *testing.T) {
	for round := 0; round < 5; round++ {
		path := filepath.Join(t.TempDir(), "race.pst")
		rec, err := Start(Options{Path: path, Occupancy: true})
		if err != nil {
			t.Fatal(err)
		}
		const procs = 12
		var recorded, finished sync.WaitGroup
		errs := make([]error, procs)
		for id := 0; id < procs; id++ {
			recorded.Add(1)
			finished.Add(1)
			go func() {
				defer finished.Done()
				p := rec.Process(id)
				for i := 0; i < 100; i++ {
					p.Block(int32(id*10 + i%3))
				}
				recorded.Done()
				errs[id] = p.Done()
			}()
		}
		recorded.Wait()
		if err := rec.Close(); err != nil {
			t.Fatal(err)
		}
		finished.Wait()
		for id, err := range errs {
			if err != nil && err != ErrClosed {
				t.Fatalf("process %d: Done = %v", id, err)
			}
		}
		s, err := store.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		n := s.Manifest().Stats.Records["state"]
		s.Close()
		if n != procs*100 {
			t.Fatalf("round %d: %d state records, want %d", round, n, procs*100)
		}
	}
}
