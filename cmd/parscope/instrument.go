package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/parscope/parscope/collect/rewrite"
	"github.com/parscope/parscope/internal/atomicfile"
	"github.com/parscope/parscope/internal/progress"
)

func init() {
	var (
		out, tracePath, processVar, filter string
		force, entropyFilter, buildAtExit  bool
		leafSize                           int
		instrumentInlinable                bool
		throttle                           int64
	)
	cmd := &cobra.Command{
		Use:   "instrument [-o OUTDIR] PACKAGE_DIR",
		Short: "Rewrite a Go package so that it records itself into a .pst",
		Long: `instrument rewrites the Go package in PACKAGE_DIR into OUTDIR (default
PACKAGE_DIR.instrumented) so that, when run, it records itself with the
instrument library: basic blocks numbered in textual order (0 is a
process's start, the highest its end), loop and if regions, and channel
sends and receives as messages of the element's size (each channel is a
process of its own). Lines keep their numbers. OUTDIR also receives
parscope_rt.go (the recorder and helpers) and parscope-blocks.json (the
block dictionary: id, kind, file:line, description).

The recording process is, by default, one per goroutine; a function whose
doc comment holds "//parscope:process EXPR" (or that has an integer
parameter named by --process) records as process EXPR.

The rewritten code imports github.com/parscope/parscope/instrument: its
module must require github.com/parscope/parscope. The program records
into the trace at the end of main (PARSCOPE_OUT names it, "off" disables
it). It does not link the trace store, so that recording adds little to
its size and start-up: it leaves the complete recording in TRACE.spill,
and the first parscope command given TRACE (parscope info TRACE, say)
builds the .pst, as the Go runtime tracer leaves its conversion to go
tool trace. --build-at-exit links the store, and the program builds the
.pst itself at the end of main (PARSCOPE_BUILD=later then leaves it for
parscope again).

To keep the program as fast as it was, tiny leaf functions (at most
--leaf-size syntax nodes, no loop, calling nothing of the package, not
communicating) are left uninstrumented so that the compiler still
inlines them, and so are the functions the compiler says it inlines
(go build -gcflags=-m on the package as written) that call nothing of
the package and do not communicate, loops and all
(--instrument-inlinable instruments them); exit blocks are recorded at
each return rather than by a defer where that records the same. --filter FILE names more functions
to leave without blocks and regions ("exclude PATTERN..." lines) and
functions to record at their entry and exit only ("coarse PATTERN..."
lines: their loops record nothing); parscope filter suggest writes one
from a first run's trace. parscope-blocks.json
lists the functions left uninstrumented and why. A process of the
rewritten program records at most --throttle blocks of one id and enters
of one region (TAU's throttle; PARSCOPE_THROTTLE overrides it at run
time, 0 records everything); parscope info lists what was dropped. The
entropy filter (Özmen 2002's modified entropy, Table 4's table, per
process and record kind) drops a repeat of a process's previous block or
event when its entropy is low and records the count of the dropped ones;
--entropy-filter=false leaves it out, PARSCOPE_ENTROPY_FILTER=off|on
overrides at run time.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			if out == "" {
				out = filepath.Clean(dir) + ".instrumented"
			}
			if _, err := os.Lstat(out); err == nil && !force {
				return usagef("%s exists (use --force to replace it)", out)
			}
			opts := rewrite.Options{TracePath: tracePath, ProcessVar: processVar, LeafSize: leafSize, InstrumentInlinable: instrumentInlinable, Throttle: throttle, NoEntropyFilter: !entropyFilter, BuildAtExit: buildAtExit}
			if filter != "" {
				f, err := os.Open(filter)
				if err != nil {
					return err
				}
				rules, err := rewrite.ReadFilter(f)
				f.Close()
				opts.Exclude, opts.Coarse = rules.Exclude, rules.Coarse
				if err != nil {
					return fmt.Errorf("%s: %w", filter, err)
				}
			}
			res, err := rewrite.Package(cmd.Context(), dir, opts)
			if err != nil {
				return err
			}
			if err := writeDirAtomic(out, res.Write); err != nil {
				return err
			}
			progress.Notef(cmd.ErrOrStderr(), "instrumented %s into %s: %d blocks, %d regions, %d functions left uninstrumented\n",
				dir, out, len(res.Dict.Blocks), len(res.Dict.Regions), len(res.Dict.Uninstrumented))
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "output directory (default PACKAGE_DIR.instrumented)")
	forceFlag(cmd.Flags(), &force)
	cmd.Flags().StringVar(&tracePath, "trace", "", "trace the program writes by default (default <package dir name>.pst)")
	cmd.Flags().StringVar(&processVar, "process", "", "integer parameter or package variable naming the recording process")
	cmd.Flags().IntVar(&leafSize, "leaf-size", rewrite.DefaultLeafSize, "leave leaf functions of at most this many syntax nodes uninstrumented (-1: instrument every function)")
	cmd.Flags().BoolVar(&instrumentInlinable, "instrument-inlinable", false, "instrument the functions the compiler inlines that call nothing of the package (by default they are left as written, so that they stay inlined)")
	cmd.Flags().Int64Var(&throttle, "throttle", rewrite.DefaultThrottle, "blocks of one id and enters of one region a process records (-1: all)")
	cmd.Flags().BoolVar(&entropyFilter, "entropy-filter", true, "record with the entropy filter (Özmen 2002, Table 4): drop low-entropy repeats of a block, keeping their count (PARSCOPE_ENTROPY_FILTER=off|on at run time)")
	cmd.Flags().BoolVar(&buildAtExit, "build-at-exit", false, "link the trace store into the program, so that it builds the .pst at the end of main (by default the first parscope command given the trace builds it)")
	cmd.Flags().StringVar(&filter, "filter", "", "filter file: functions to leave without blocks and regions (\"exclude PATTERN...\" lines) or to record at entry and exit only (\"coarse PATTERN...\")")
	root.AddCommand(cmd)
}

// instrumentedDir allows replacing path, an existing entry that is not an
// empty directory (atomicfile.EmptyDirOr), only when it is a package that
// instrument wrote (it holds the block dictionary).
func instrumentedDir(path string, fi fs.FileInfo) error {
	if _, derr := os.Lstat(filepath.Join(path, rewrite.DictFile)); !fi.IsDir() || derr != nil {
		return fmt.Errorf("%s exists and is not a package parscope instrument wrote (no %s in it); --force replaces only such a directory, refusing to replace it", path, rewrite.DictFile)
	}
	return nil
}

// writeDirAtomic fills a temporary directory beside dir with write and
// renames it to dir (see package atomicfile), so a failure or a crash
// leaves nothing half-written; an existing dir is replaced only when
// instrument wrote it.
func writeDirAtomic(dir string, write func(string) error) error {
	d, err := atomicfile.CreateDir(dir, atomicfile.EmptyDirOr(instrumentedDir))
	if err != nil {
		return err
	}
	defer d.Abort()
	if err := write(d.Path()); err != nil {
		return d.Hide(err)
	}
	return d.Commit()
}
