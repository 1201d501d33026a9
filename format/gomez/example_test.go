package gomez_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/format/gomez"
	"github.com/parscope/parscope/trace"
)

func ExampleImport() {
	dir, err := os.MkdirTemp("", "gomez")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "amoeba.srt")
	// Two runs of two processes: the time dropping back to 0 starts run 1.
	data := "0 1 0\n0 1 1\n30 2 1\n45.5 2 0\n0 1 0\n0 1 1\n20 2 0\n"
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		panic(err)
	}

	var m trace.Memory
	if err := gomez.Import(context.Background(), []string{path}, format.Options{}, &m); err != nil {
		panic(err)
	}
	m.Sort()
	for _, r := range m.H.Runs {
		fmt.Printf("run %d: %d processes\n", r.ID, r.Procs)
	}
	for _, r := range m.Records {
		fmt.Println(r)
	}
	// Output:
	// run 0: 2 processes
	// run 1: 2 processes
	// 0/0 0 state 1
	// 0/1 0 state 1
	// 0/1 30000 state 2
	// 0/0 45500 state 2
	// 1/0 0 state 1
	// 1/1 0 state 1
	// 1/0 20000 state 2
}

func ExampleGenerate() {
	// One run of two processes, four block entries each.
	if err := gomez.Generate(os.Stdout, 1, 2, 4, 1); err != nil {
		panic(err)
	}
	// Output:
	// 0 1 0
	// 0 1 1
	// 50 2 1
	// 60 2 0
	// 60 3 1
	// 70 3 0
	// 520 13 1
	// 550 13 0
}
