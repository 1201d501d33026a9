// Package workload holds what the example workloads share: their common
// flags (-o, -seed, -force, -entropy-filter, -go-trace), the main of a
// recorded workload (Program.Main) and of a probe worker (ProbeMain), and
// a compute loop that stands for work.
package workload

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/trace"
	"strconv"
	"time"

	"github.com/parscope/parscope/instrument"
	_ "github.com/parscope/parscope/instrument/pst" // Close builds the .pst (see package pst)
	"github.com/parscope/parscope/internal/human"
	"github.com/parscope/parscope/probe"
)

// Common are the flags every example takes.
type Common struct {
	// Out is the .pst to write; empty runs the workload without recording.
	Out   string
	Seed  uint64
	Force bool
	// EntropyFilter records through the entropy filter (Özmen 2002,
	// instrument.EntropyFilter with DefaultEntropyConfig and
	// DefaultEntropyThreshold, states and events); -entropy-filter=false
	// records everything. Register sets it to true.
	EntropyFilter bool
	// Procs is the example's number of processes (ids 0..Procs−1), for
	// the entropy filter's meters; 0 makes a process's meters when the
	// recorder creates it, whatever its id.
	Procs int
	// Clock is "wall" (the default) or "sim": record on the simulated
	// clock SimClock (instrument.SimClock), for the workloads that model
	// their costs and stamp their messages (RegisterClock).
	Clock    string
	SimClock instrument.SimClock
	// GoTrace, when not empty, runs the workload under the Go runtime
	// tracer (runtime/trace) writing to this file, so that its cost can be
	// measured beside parscope's on the same run (-go-trace).
	GoTrace string
}

// RegisterClock adds -clock and the simulated clock's model (-sim-block-ns,
// -sim-latency-ns, -sim-bandwidth, defaulting to
// instrument.DefaultSimClock) to fs. Only a workload that charges its
// computation with Process.Work and sends with Process.SendStamped and
// RecvStamped registers them: on another, the simulated clock would
// model nothing but the blocks.
func (c *Common) RegisterClock(fs *flag.FlagSet) {
	d := instrument.DefaultSimClock()
	fs.StringVar(&c.Clock, "clock", "wall", "wall: record measured times; sim: record on a simulated clock (one core per process, modelled costs; deterministic)")
	fs.Int64Var(&c.SimClock.BlockCost, "sim-block-ns", d.BlockCost, "simulated clock: ns charged per block")
	fs.Int64Var(&c.SimClock.Latency, "sim-latency-ns", d.Latency, "simulated clock: message latency in ns")
	fs.Float64Var(&c.SimClock.Bandwidth, "sim-bandwidth", d.Bandwidth, "simulated clock: bandwidth in bytes per ns (0: infinite)")
}

// Sim reports whether the run records on the simulated clock.
func (c *Common) Sim() bool { return c.Clock == "sim" }

// Register adds -o, -seed, -force and -entropy-filter to fs.
func (c *Common) Register(fs *flag.FlagSet) {
	fs.StringVar(&c.Out, "o", "", "write the trace to this .pst (empty: run without recording)")
	fs.Uint64Var(&c.Seed, "seed", 1, "seed of every random choice")
	fs.BoolVar(&c.Force, "force", false, "replace an existing trace")
	fs.BoolVar(&c.EntropyFilter, "entropy-filter", true, "drop low-entropy repeats of a process's states and events, keeping their count (Özmen 2002, Table 4)")
	fs.StringVar(&c.GoTrace, "go-trace", "", "also run under the Go runtime tracer (runtime/trace), writing its trace to this file, to compare its cost with parscope's")
}

// startGoTrace starts the Go runtime tracer to c.GoTrace, when set, and
// returns what stops it and closes the file.
func (c *Common) startGoTrace() (stop func() error, err error) {
	if c.GoTrace == "" {
		return func() error { return nil }, nil
	}
	f, err := os.Create(c.GoTrace)
	if err != nil {
		return nil, fmt.Errorf("-go-trace: %w", err)
	}
	if err := trace.Start(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("-go-trace: %w", err)
	}
	return func() error {
		trace.Stop()
		if err := f.Close(); err != nil {
			return fmt.Errorf("-go-trace: %w", err)
		}
		return nil
	}, nil
}

// Start starts recording to c.Out with opts (a nil recorder when Out is
// empty), storing the seed in the trace's metadata. With EntropyFilter and
// no Filter in opts, it records through the entropy filter over the
// states of opts (their count is the alphabet; ids beyond are kept).
func (c *Common) Start(opts instrument.Options) (*instrument.Recorder, error) {
	opts.Path, opts.Force, opts.Disabled = c.Out, c.Force, c.Out == ""
	if opts.Extra == nil {
		opts.Extra = map[string]string{}
	}
	opts.Extra["seed"] = strconv.FormatUint(c.Seed, 10)
	switch c.Clock {
	case "", "wall":
	case "sim":
		sc := c.SimClock
		opts.SimClock = &sc
	default:
		return nil, fmt.Errorf("-clock %q: want wall or sim", c.Clock)
	}
	if c.EntropyFilter && opts.Filter == nil && !opts.Disabled {
		f, err := instrument.NewEntropyFilter(instrument.EntropyOptions{
			Config: instrument.DefaultEntropyConfig(), Threshold: instrument.DefaultEntropyThreshold,
			Procs: c.Procs, Dynamic: c.Procs <= 0, Alphabet: max(len(opts.States), 1),
		})
		if err != nil {
			return nil, err
		}
		opts.Filter = f
		opts.Extra["entropy_filter"] = "table4"
	}
	return instrument.Start(opts)
}

// Program is the command line of an example workload: the common flags
// and the example's own, which it defines on Flags before it calls Main.
type Program struct {
	Common
	// Name names the program in its messages and its flag set.
	Name string
	// Flags is the example's flag set: Main adds the common flags to it
	// and parses the command line with it, exiting on a bad flag.
	Flags *flag.FlagSet
}

// NewProgram returns the command line of the example name.
func NewProgram(name string) *Program {
	return &Program{Name: name, Flags: flag.NewFlagSet(name, flag.ExitOnError)}
}

// Main runs an example's main: parse flags, start the recorder, run, close,
// and report errors on stderr with exit status 1 (2 for bad usage).
func (p *Program) Main(opts func() (instrument.Options, error), run func(*instrument.Recorder) error) {
	name, c, fs := p.Name, &p.Common, p.Flags
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
	stopTrace, err := c.startGoTrace()
	if err != nil {
		rec.Abort()
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(1)
	}
	start := time.Now()
	err = run(rec)
	elapsed := time.Since(start)
	if terr := stopTrace(); err == nil {
		err = terr
	}
	if err != nil {
		rec.Abort()
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(1)
	}
	if err := rec.Close(); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(1)
	}
	switch {
	case rec.LeftUnbuilt():
		fmt.Fprintf(os.Stderr, "%s: ran in %s, left the recording in %s (PARSCOPE_BUILD=later: parscope builds %s when first given it)\n",
			name, human.Duration(elapsed), instrument.SpillDir(c.Out), c.Out)
	case c.Out != "":
		fmt.Fprintf(os.Stderr, "%s: ran in %s, wrote %s\n", name, human.Duration(elapsed), c.Out)
	default:
		fmt.Fprintf(os.Stderr, "%s: ran in %s (not recorded)\n", name, human.Duration(elapsed))
	}
}

// ProbeMain runs a probe worker's main once its flags are defined on the
// default flag set: parse the command line (exit status 2 when it is
// wrong), run task under the probe driver (probe.Main: to the end when run
// alone, as parscope asks when run by parscope probe), and print the line
// result returns, the worker's final value. An error is reported on stderr
// with exit status 1.
func ProbeMain(info probe.Info, task probe.Task, result func() string) {
	flag.Parse()
	os.Exit(probeMain(os.Stdout, os.Stderr, info, task, result))
}

// probeMain is ProbeMain after the flags, returning the exit status.
func probeMain(stdout, stderr io.Writer, info probe.Info, task probe.Task, result func() string) int {
	if err := probe.Main(info, task); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", info.Name, err)
		return 1
	}
	fmt.Fprintln(stdout, result())
	return 0
}

// RestoreState is the Restore of a probe worker whose state is *state: it
// decodes b (probe.DecodeState) into a copy of *state, which shares its
// arrays, so that a restore allocates no array, and keeps it if fits says
// it fits the task, else returns the error "NAME: the snapshot does not
// fit this size". After an error the task is undefined until the next
// successful Restore.
func RestoreState[S any](name string, b []byte, state *S, fits func(*S) bool) error {
	s := *state
	if err := probe.DecodeState(b, &s); err != nil {
		return err
	}
	if !fits(&s) {
		return errors.New(name + ": the snapshot does not fit this size")
	}
	*state = s
	return nil
}

// Marker returns the function that records instrumentation point i on a
// process both as block i and as the event named points[i], as the
// programs of Özmen 2002 are instrumented. rec may be nil (not recorded).
func Marker(rec *instrument.Recorder, points []string) func(p *instrument.Process, point int) {
	ev := make([]int32, len(points))
	for i, name := range points {
		ev[i] = rec.EventID(name)
	}
	return func(p *instrument.Process, point int) {
		p.Block(int32(point))
		p.Event(ev[point])
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
