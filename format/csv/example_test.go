package csv_test

import (
	"fmt"
	"log"
	"os"

	"github.com/parscope/parscope/format/csv"
	"github.com/parscope/parscope/trace"
)

func ExampleExport() {
	m := &trace.Memory{}
	m.Header().EnsureRun(0, 2)
	m.Header().States = []trace.StateDef{{ID: 0, Name: "compute, inner"}}
	m.Add(trace.State(0, 0, 0, 0))
	m.Add(trace.Send(0, 0, 1000, 1500, 1, 64, 0, 0))
	m.Add(trace.Recv(0, 1, 1200, 1600, 0, 64, 0, 0))
	m.Sort()

	dir, err := os.MkdirTemp("", "parscope-csv")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := csv.Export(dir, &m.H, m.Reader(), nil, csv.Options{}); err != nil {
		log.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		fmt.Println(e.Name())
	}
	// Output:
	// messages.csv
	// runs.csv
	// state_names.csv
	// states.csv
}

// ExportTable writes one table to any writer, as `parscope export --table
// messages -o -` does.
func ExampleExportTable() {
	m := &trace.Memory{}
	m.Header().EnsureRun(0, 2)
	m.Add(trace.Send(0, 0, 1000, 1500, 1, 64, 0, 0))
	m.Add(trace.Recv(0, 1, 1200, 1600, 0, 64, 0, 0))
	m.Sort()
	if err := csv.ExportTable(os.Stdout, "messages", &m.H, m.Reader()); err != nil {
		log.Fatal(err)
	}
	// Output:
	// run,proc,t,end,kind,peer,bytes,tag,comm,request,flags
	// 0,0,1000,1500,send,1,64,0,0,-1,0
	// 0,1,1200,1600,recv,0,64,0,0,-1,0
}
