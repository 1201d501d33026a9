package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/parscope/parscope/collect/mpi"
	"github.com/parscope/parscope/internal/human"
	"github.com/parscope/parscope/internal/progress"
	"github.com/parscope/parscope/store"
)

// mpirunReport is what `parscope mpirun --json` prints.
type mpirunReport struct {
	Output string `json:"output"`
	// Impl is the MPI implementation the shim was built for ("" with --merge).
	Impl    string   `json:"impl,omitempty"`
	Shim    string   `json:"shim,omitempty"`
	RawDir  string   `json:"raw_dir,omitempty"`
	Command []string `json:"command,omitempty"`
	// ExitCode is the command's exit status (-1 when killed by a signal).
	ExitCode int `json:"exit_code"`
	*mpi.Report
}

func init() {
	var (
		out       string
		force     bool
		mpicc     string
		implName  string
		rawDir    string
		mergeDir  string
		buffer    int64
		callSites string
		cacheDir  string
		asJSON    bool
	)
	cmd := &cobra.Command{
		Use:   "mpirun -o OUT.pst [flags] -- LAUNCHER [ARGS...]",
		Short: "Run an MPI program under parscope's PMPI shim and merge its ranks into a .pst",
		Long: `mpirun records an MPI program, its messages tied to code structure as in
Jones et al. 2007. It builds parscope's PMPI shim
with the MPI library's mpicc (once; builds are cached), runs the launch command
with the shim preloaded (LD_PRELOAD) in every rank, then merges the per-rank
files into OUT.pst: point-to-point messages (blocking and non-blocking, with
their completion times), collectives, communicators, user regions marked with
parscope.h (print it with --header), and MPI call sites resolved to function,
file and line from the program's DWARF (compile it with -g).

The MPI implementation is guessed from the launcher (mpirun.mpich and
mpirun.openmpi, or what mpirun points to); --impl or --mpicc override it.
With Open MPI the ranks get the shim's variables through -x, and running as
root and oversubscribing are allowed.

A rank that dies leaves a partial file that still merges; the trace is
written, the problem reported, and parscope exits non-zero like the command.
--merge DIR merges rank files written before (with --raw) without running
anything.`,
		Example: `  parscope mpirun -o mg.pst -- mpirun.mpich -np 16 ./mg
  parscope mpirun -o cg.pst --impl openmpi -- mpirun -np 8 ./cg
  parscope mpirun -o mg.pst --raw mg.raw -- mpirun -np 27 ./mg
  parscope mpirun -o mg.pst --merge mg.raw
  parscope mpirun --header > parscope.h`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if h, _ := cmd.Flags().GetBool("header"); h {
				b, err := mpi.Sources.ReadFile("include/parscope.h")
				if err != nil {
					return err
				}
				_, err = cmd.OutOrStdout().Write(b)
				return err
			}
			if out == "" {
				return usagef("mpirun: -o OUT.pst is required")
			}
			mode, err := mpi.ParseCallSiteMode(callSites)
			if err != nil {
				return usagef("--call-sites: %v", err)
			}
			rep := mpirunReport{Output: out, ExitCode: 0}
			var runErr error
			keep := false // keep the temporary rank files (a failed merge)
			dir := mergeDir
			if mergeDir != "" {
				if len(args) > 0 {
					return usagef("mpirun: --merge takes no command")
				}
			} else {
				if len(args) == 0 {
					return usagef("mpirun: no command to run (parscope mpirun -o OUT.pst -- mpirun -np N ./app)")
				}
				if !force {
					if _, err := os.Stat(out); err == nil {
						return fmt.Errorf("%s exists (use --force to replace it)", out)
					}
				}
				impl := mpi.DetectImpl(cmd.Context(), args[0])
				switch implName {
				case "":
				case "mpich", "openmpi":
					impl.Name = implName
					impl.MPICC = "mpicc." + implName
				default:
					return usagef("--impl %q: want mpich or openmpi", implName)
				}
				if mpicc != "" {
					impl.MPICC = mpicc
				}
				if impl.MPICC == "" {
					return usagef("mpirun: cannot tell which MPI library %s runs; give --impl mpich|openmpi or --mpicc", args[0])
				}
				lib, err := mpi.Build(cmd.Context(), mpi.BuildOptions{MPICC: impl.MPICC, CacheDir: cacheDir})
				if err != nil {
					return err
				}
				rep.Impl, rep.Shim, rep.Command = impl.Name, lib, args
				if dir == "" {
					if rawDir != "" {
						dir = rawDir
					} else {
						tmp, err := os.MkdirTemp("", "parscope-mpi-")
						if err != nil {
							return err
						}
						dir = tmp
						defer func() {
							if !keep {
								os.RemoveAll(tmp)
							}
						}()
					}
				}
				if err := os.MkdirAll(dir, 0o755); err != nil {
					return err
				}
				if old, _ := mpi.RankFiles(dir); len(old) > 0 {
					return fmt.Errorf("%s already holds rank files of another run (%s); remove them or choose another --raw", dir, filepath.Base(old[0]))
				}
				if abs, err := filepath.Abs(dir); err == nil {
					dir = abs
				}
				argv := mpi.LaunchArgs(args, impl, buffer)
				c := exec.Command(argv[0], argv[1:]...)
				c.Env = mpi.LaunchEnv(os.Environ(), impl, lib, dir, buffer)
				c.Stdin, c.Stdout, c.Stderr = os.Stdin, cmd.OutOrStdout(), cmd.ErrOrStderr()
				if asJSON {
					c.Stdout = cmd.ErrOrStderr() // keep stdout for the JSON report
				}
				start := time.Now()
				runErr = c.Run()
				var ee *exec.ExitError
				switch {
				case errors.As(runErr, &ee):
					rep.ExitCode = ee.ExitCode()
				case runErr != nil:
					return fmt.Errorf("mpirun: running %s: %w", args[0], runErr)
				}
				progress.Notef(cmd.ErrOrStderr(), "parscope: %s ran in %s (exit status %d)\n", args[0], time.Since(start).Round(time.Millisecond), rep.ExitCode)
			}
			if rawDir != "" || mergeDir != "" {
				rep.RawDir = dir
			}
			files, err := mpi.RankFiles(dir)
			if err != nil {
				return err
			}
			if len(files) == 0 {
				return fmt.Errorf("mpirun: no rank files in %s: the command ran no MPI program under the shim "+
					"(is it an MPI program linked with the MPI library the shim was built for?)", dir)
			}
			w, err := store.Create(out, store.Options{Force: force})
			if err != nil {
				return err
			}
			defer w.Abort()
			program := ""
			if len(args) > 0 {
				program = filepath.Base(args[len(args)-1])
			}
			r, err := mpi.Merge(cmd.Context(), files, w, mpi.Options{CallSites: mode, Program: program, CommandLine: args})
			if err != nil {
				if mergeDir == "" && rawDir == "" {
					keep = true // for a look
					return fmt.Errorf("%w (the rank files are kept in %s)", err, dir)
				}
				return err
			}
			rep.Report = r
			if err := w.Close(); err != nil {
				return err
			}
			if asJSON {
				if err := writeJSON(cmd.OutOrStdout(), rep); err != nil {
					return err
				}
			} else if err := printMPIRun(cmd.OutOrStdout(), rep); err != nil {
				return err
			}
			if rep.ExitCode != 0 {
				return fmt.Errorf("mpirun: %s exited with status %d; %s holds what the ranks recorded", args[0], rep.ExitCode, out)
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&out, "output", "o", "", "the .pst directory to write")
	forceFlag(fl, &force)
	fl.StringVar(&mpicc, "mpicc", "", "MPI compiler wrapper to build the shim with (default: the launcher's implementation's)")
	fl.StringVar(&implName, "impl", "", "MPI implementation of the launcher: mpich or openmpi (default: guessed)")
	fl.StringVar(&rawDir, "raw", "", "keep the per-rank files in this directory")
	fl.StringVar(&mergeDir, "merge", "", "merge the rank files in this directory instead of running a command")
	fl.Int64Var(&buffer, "buffer", 0, "per-rank buffer in bytes before a write to the rank file (default 1 MiB)")
	fl.StringVar(&callSites, "call-sites", "auto", "make a region of every MPI call site: auto (when no user regions), on or off")
	fl.StringVar(&cacheDir, "cache", "", "directory of built shims (default: the user cache directory)")
	fl.Bool("header", false, "print parscope.h, the header that marks regions, and exit")
	fl.BoolVar(&asJSON, "json", false, "print JSON (the program's own output then goes to stderr)")
	root.AddCommand(cmd)
}

func printMPIRun(w io.Writer, rep mpirunReport) error {
	r := rep.Report
	t := newTable(w)
	fmt.Fprintf(t, "trace\t%s\n", rep.Output)
	if rep.Impl != "" {
		fmt.Fprintf(t, "MPI\t%s (%s)\n", rep.Impl, r.MPI)
	} else if r.MPI != "" {
		fmt.Fprintf(t, "MPI\t%s\n", r.MPI)
	}
	fmt.Fprintf(t, "ranks\t%d (%d files)\n", r.Ranks, len(r.Files))
	fmt.Fprintf(t, "messages\t%s sends, %s receives, %s matched\n", human.Count(r.Sends), human.Count(r.Recvs), human.Count(r.Matched))
	fmt.Fprintf(t, "collectives\t%s\n", human.Count(r.Collectives))
	cs := ""
	if r.CallSites {
		cs = " (MPI call sites)"
	}
	fmt.Fprintf(t, "regions\t%d%s, %s marks\n", r.Regions, cs, human.Count(r.RegionMarks))
	fmt.Fprintf(t, "communicators\t%d\n", r.Communicators)
	if r.AnySource > 0 {
		fmt.Fprintf(t, "MPI_ANY_SOURCE\t%s receives, %s resolved from their status\n", human.Count(r.AnySource), human.Count(r.AnySourceResolved))
	}
	var partial []string
	for _, f := range r.Files {
		if !f.Complete {
			how := "no MPI_Finalize"
			if f.Truncated {
				how = "cut inside a record"
			}
			partial = append(partial, fmt.Sprintf("rank %d (%s, %d events kept)", f.Rank, how, f.Events))
		}
	}
	if len(partial) > 0 {
		fmt.Fprintf(t, "partial files\t%s\n", strings.Join(partial, "; "))
	}
	if len(r.MissingRanks) > 0 {
		fmt.Fprintf(t, "missing ranks\t%v\n", r.MissingRanks)
	}
	fmt.Fprintf(t, "unmatched\t%s sends, %s receives\n", human.Count(r.UnmatchedSends), human.Count(r.UnmatchedRecvs))
	for _, u := range r.Unmatched {
		fmt.Fprintf(t, "\t%s\n", u)
	}
	for _, x := range []struct {
		what string
		n    int64
	}{{"outside their communicator", r.OutsideComm}, {"uncompleted requests", r.Uncompleted},
		{"MPI_PROC_NULL calls", r.ProcNull}, {"unknown communicators", r.UnknownComm},
		{"completions of unknown requests", r.UnknownRequest}, {"call sites without a source line", int64(r.UnresolvedSites)}} {
		if x.n > 0 {
			fmt.Fprintf(t, "%s\t%s\n", x.what, human.Count(x.n))
		}
	}
	for _, o := range r.Outside {
		fmt.Fprintf(t, "\t%s\n", o)
	}
	return t.Flush()
}
