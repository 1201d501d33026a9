// Package workload holds what the example workloads share: their common
// flags (-o, -seed, -force) and a compute loop that stands for work.
package workload

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/parscope/parscope/instrument"
)

// Common are the flags every example takes.
type Common struct {
	// Out is the .pst to write; empty runs the workload without recording.
	Out   string
	Seed  uint64
	Force bool
}

// Register adds -o, -seed and -force to fs.
func (c *Common) Register(fs *flag.FlagSet) {
	fs.StringVar(&c.Out, "o", "", "write the trace to this .pst (empty: run without recording)")
	fs.Uint64Var(&c.Seed, "seed", 1, "seed of every random choice")
	fs.BoolVar(&c.Force, "force", false, "replace an existing trace")
}

// Start starts recording to c.Out with opts (a nil recorder when Out is
// empty), storing the seed in the trace's metadata.
func (c *Common) Start(opts instrument.Options) (*instrument.Recorder, error) {
	opts.Path, opts.Force, opts.Disabled = c.Out, c.Force, c.Out == ""
	if opts.Extra == nil {
		opts.Extra = map[string]string{}
	}
	opts.Extra["seed"] = strconv.FormatUint(c.Seed, 10)
	return instrument.Start(opts)
}

// Main runs an example's main: parse flags, start the recorder, run, close,
// and report errors on stderr with exit status 1 (2 for bad usage).
func Main(name string, c *Common, fs *flag.FlagSet, opts func() (instrument.Options, error), run func(*instrument.Recorder) error) {
	c.Register(fs)
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	o, err := opts()
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(2)
	}
	rec, err := c.Start(o)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(1)
	}
	start := time.Now()
	err = run(rec)
	elapsed := time.Since(start)
	if err != nil {
		rec.Abort()
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(1)
	}
	if err := rec.Close(); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(1)
	}
	if c.Out != "" {
		fmt.Fprintf(os.Stderr, "%s: ran in %v, wrote %s\n", name, elapsed.Round(time.Microsecond), c.Out)
	} else {
		fmt.Fprintf(os.Stderr, "%s: ran in %v (not recorded)\n", name, elapsed.Round(time.Microsecond))
	}
}

// Spin does n rounds of 9 floating-point operations (3 multiplications, 6
// additions, the cost unit of FUN in Gomez, Cai & Schubert 2017) and returns a value that
// depends on all of them, so the compiler cannot drop the loop.
func Spin(n int, x float64) float64 {
	a, b, c := x, 1.0000001, 0.9999999
	for i := 0; i < n; i++ {
		a = a*b + c + 1e-9
		b = b*c + a*1e-12 + 1e-9
		c = c + 1e-12 - 1e-13
	}
	return a + b + c
}
