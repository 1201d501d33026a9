package prv_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/format/prv"
	"github.com/parscope/parscope/trace"
)

// Import a two-thread Paraver trace without .pcf: a state, an MPI_Send
// call (event type 50000001) around a message, and the receiving thread.
func ExampleImporter_Import() {
	dir, _ := os.MkdirTemp("", "prv")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "tiny.prv")
	os.WriteFile(path, []byte(`#Paraver (01/01/70 at 00:00):100_ns:1(2):1:2(1:1,1:1),0
1:1:1:1:1:0:100:1
1:2:1:2:1:0:100:1
2:1:1:1:1:10:50000001:1
3:1:1:1:1:10:12:2:1:2:1:5:30:64:7
2:1:1:1:1:20:50000001:0
`), 0o644)
	var m trace.Memory
	if err := (prv.Importer{}).Import(context.Background(), []string{path}, format.Options{}, &m); err != nil {
		fmt.Println(err)
		return
	}
	m.Sort()
	for _, r := range m.Records {
		fmt.Println(r)
	}
	fmt.Println(m.H.Meta.Extra["prv.pcf"])
	// Output:
	// 0/0 0 state 1
	// 0/1 0 state 1
	// 0/1 5 recv peer=0 bytes=64 tag=7 comm=0 end=30 req=-1 flags=0
	// 0/0 10 enter 100001
	// 0/0 10 send peer=1 bytes=64 tag=7 comm=0 end=12 req=-1 flags=0
	// 0/0 20 exit 100001
	// missing: states, events and values have numeric names
}
