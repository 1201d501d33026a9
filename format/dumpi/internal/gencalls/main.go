// Command gencalls writes format/dumpi/calls_gen.go from the DUMPI call
// table format/dumpi/calls.txt (see package callgen). Run it with
// "go generate ./format/dumpi".
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/parscope/parscope/format/dumpi/internal/callgen"
)

func main() {
	in := flag.String("in", "calls.txt", "the call table")
	out := flag.String("out", "calls_gen.go", "the Go file to write")
	flag.Parse()
	src, err := os.ReadFile(*in)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gencalls:", err)
		os.Exit(1)
	}
	code, err := callgen.Generate(src)
	if err != nil {
		fmt.Fprintf(os.Stderr, "gencalls: %s: %v\n", *in, err)
		os.Exit(1)
	}
	if err := os.WriteFile(*out, code, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "gencalls:", err)
		os.Exit(1)
	}
}
