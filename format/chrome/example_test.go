package chrome_test

import (
	"bytes"
	"fmt"
	"log"
	"strings"

	"github.com/parscope/parscope/format/chrome"
	"github.com/parscope/parscope/trace"
)

// A process computes and sends a message that another receives: Export
// writes a state slice, two MPI slices and a flow arrow between them (the
// metadata events that name processes and threads are left out below).
func ExampleExport() {
	m := &trace.Memory{}
	h := m.Header()
	h.EnsureRun(0, 2)
	h.States = []trace.StateDef{{ID: 0, Name: "compute"}}
	m.Add(trace.State(0, 0, 0, 0))
	m.Add(trace.Send(0, 0, 1000, 1500, 1, 64, 0, 0))
	m.Add(trace.Recv(0, 1, 1200, 1600, 0, 64, 0, 0))
	m.Sort()

	var out bytes.Buffer
	var st chrome.Stats
	if err := chrome.Export(&out, &m.H, m.Reader(), chrome.Options{Stats: &st}); err != nil {
		log.Fatal(err)
	}
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(line, `{"name":"`) && !strings.Contains(line, `"ph":"M"`) {
			fmt.Println(strings.TrimSuffix(line, ","))
		}
	}
	fmt.Printf("%d states, %d MPI slices, %d flows\n", st.States, st.MPISlices, st.Flows)
	// Output:
	// {"name":"send → 1","cat":"mpi","ph":"X","pid":1,"tid":3,"ts":1.000,"dur":0.500,"args":{"peer":1,"bytes":64,"tag":0,"comm":0}}
	// {"name":"recv ← 0","cat":"mpi","ph":"X","pid":2,"tid":3,"ts":1.200,"dur":0.400,"args":{"peer":0,"bytes":64,"tag":0,"comm":0}}
	// {"name":"msg","cat":"msg","ph":"s","id":1,"pid":1,"tid":3,"ts":1.000}
	// {"name":"msg","cat":"msg","ph":"f","bp":"e","id":1,"pid":2,"tid":3,"ts":1.200}
	// {"name":"compute","cat":"state","ph":"X","pid":1,"tid":1,"ts":0.000,"dur":1.500,"args":{"state":0}}
	// 1 states, 2 MPI slices, 1 flows
}
