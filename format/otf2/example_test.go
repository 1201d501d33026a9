package otf2_test

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/parscope/parscope/format/otf2"
	"github.com/parscope/parscope/trace"
)

// Import an OTF2 archive (its directory or traces.otf2) into memory.
func Example() {
	ar, err := otf2.Open(filepath.Join("..", "..", "testdata", "real", "traces", "otf2", "ping-pong-otf2"))
	if err != nil {
		fmt.Println("no data:", err != nil)
		return
	}
	var m trace.Memory
	st, err := otf2.Convert(context.Background(), ar, 0, &m)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(ar.Anchor.Creator, ar.Anchor.Version())
	fmt.Println(len(m.H.Procs), "processes;", st.Events["MPI_SEND"], "sends;", st.Events["ENTER"], "enters")
	// Output:
	// Score-P 7.1 2.3.0
	// 2 processes; 16 sends; 42 enters
}
