package dumpi_test

import (
	"context"
	"fmt"

	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/format/dumpi"
	"github.com/parscope/parscope/trace"
)

// Import the real 4-rank DUMPI sample of testdata/real (a ring exchange)
// and list the messages of rank 0.
func ExampleImporter_Import() {
	var m trace.Memory
	err := (dumpi.Importer{}).Import(context.Background(),
		[]string{"../../testdata/real/traces/dumpi/testtrace.meta"}, format.Options{}, &m)
	if err != nil {
		fmt.Println(err)
		return
	}
	ix := trace.NewIndex(&m.H)
	fmt.Println(m.H.Runs[0].Procs, "ranks")
	for _, r := range m.Records {
		switch {
		case r.Proc != 0:
		case r.Kind == trace.KindSend || r.Kind == trace.KindRecv:
			fmt.Printf("%s peer %d, %d bytes, tag %d\n", r.Kind, r.Peer, r.Value, r.Tag)
		case r.Kind == trace.KindCollective:
			fmt.Printf("%s of %d bytes\n", trace.CollectiveOp(r.ID), r.Value)
		case r.Kind == trace.KindEnter && r.ID == 82:
			fmt.Println(ix.RegionName(r.ID))
		}
	}
	// Output:
	// 4 ranks
	// MPI_Comm_rank
	// barrier of 0 bytes
	// send peer 1, 4 bytes, tag 1337
	// recv peer 3, 4 bytes, tag 1337
	// allreduce of 4 bytes
}
