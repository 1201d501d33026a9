package instrument_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/parscope/parscope/instrument"
	_ "github.com/parscope/parscope/instrument/pst" // links the store for every test of this package (see RegisterStore)
	"github.com/parscope/parscope/store"
	"github.com/parscope/parscope/trace"
)

// Two processes record blocks and a message; Close writes the .pst.
func Example() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "run.pst")
	rec, err := instrument.Start(instrument.Options{
		Path:    path,
		Program: "example",
		States:  []trace.StateDef{{ID: 0, Name: "compute"}, {ID: 1, Name: "communicate"}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	ch := make(chan float64)
	var wg sync.WaitGroup
	for rank := 0; rank < 2; rank++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := rec.Process(rank)
			p.Block(0)
			p.Block(1)
			if rank == 0 {
				p.Send(1, 8, 0)
				ch <- 3.14
			} else {
				<-ch
				p.Recv(0, 8, 0)
			}
		}()
	}
	wg.Wait()
	if err := rec.Close(); err != nil {
		fmt.Println(err)
		return
	}
	s, _ := store.Open(path)
	defer s.Close()
	fmt.Println(s.Manifest().Stats.Records)
	// Output: map[recv:1 send:1 state:4]
}
