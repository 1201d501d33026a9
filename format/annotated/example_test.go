package annotated_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/format/annotated"
	"github.com/parscope/parscope/trace"
)

// Import one rank's trace: a loop around an any-source irecv, a send and
// the wait that completes the irecv.
func ExampleImporter_Import() {
	dir, err := os.MkdirTemp("", "annotated")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "mg.0.trace")
	text := `# rank 0 of 2
--- LOOP_151 starts --- [#1070@comm3_@"mg.f"]
[D]mpi_irecv_(count=8712 datatype=27 src=-2
tag=1100 Communicator=91 request=133)
[#1167:ready.: "mg.f"] [ 1793.078235000
1793.078257000 ] { typesize = 8 }
mpi_send_(count=2048 datatype=27 dst=1 tag=1300 Communicator=91) [#1224@give3.: "mg.f"]
[ 1793.245956000 1794.798499000 ] { typesize = 8 }
mpi_wait_(request=133) [#1230@give3.: "mg.f"] [ 1794.800000000 1794.800001000 ]
+++ LOOP_151 ends +++ [#1083@comm3_@"mg.f"]
mpi_finalize_() [#1300@main.: "mg.f"] [ 1794.900000000 1794.900002000 ]
`
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		fmt.Println(err)
		return
	}
	var m trace.Memory
	if err := (annotated.Importer{}).Import(context.Background(), []string{path}, format.Options{}, &m); err != nil {
		fmt.Println(err)
		return
	}
	ix := trace.NewIndex(&m.H)
	for _, r := range m.Records {
		switch r.Kind {
		case trace.KindEnter, trace.KindExit:
			fmt.Println(r, ix.RegionName(r.ID))
		case trace.KindEvent:
			fmt.Println(r, ix.EventName(r.ID))
		default:
			fmt.Println(r)
		}
	}
	fmt.Println("origin:", m.H.Meta.Extra["time_origin_ns"], "ns")
	// Output:
	// 0/0 0 enter 0 LOOP_151
	// 0/0 22000 recv peer=-1 bytes=69696 tag=1100 comm=91 end=1821765000 req=133 flags=3
	// 0/0 1720264000 send peer=1 bytes=16384 tag=1300 comm=91 end=1721765000 req=-1 flags=0
	// 0/0 1721766000 event 0 value=1 mpi_wait_
	// 0/0 1821765000 exit 0 LOOP_151
	// 0/0 1821767000 event 1 value=0 mpi_finalize_
	// origin: 1793078235000 ns
}
