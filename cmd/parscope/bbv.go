package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/format/bbv"
	"github.com/parscope/parscope/internal/human"
	"github.com/parscope/parscope/internal/progress"
	"github.com/parscope/parscope/store"
)

func init() {
	var (
		out      string
		interval int64
		force    bool
		keep     string
		vgPath   string
	)
	cmd := &cobra.Command{
		Use:   "bbv -o OUT.pst [--interval N] [--force] -- CMD ARGS...",
		Short: "Run a program under valgrind exp-bbv and store its basic block vectors",
		Long: `bbv runs CMD under valgrind's exp-bbv tool, which counts the instructions
each basic block executes in every interval of N instructions, and imports
the vectors into OUT.pst (then: parscope phases OUT.pst).

valgrind follows child processes (--trace-children=yes) and writes one file
per process, so an MPI job started through its launcher, or a shell running
several programs, gives one BBV stream per process. Processes that did not
complete a single interval (launchers, shells) are left out; the others
become processes 0..P-1 in the order of their pids. The program's stdout
and stderr pass through; valgrind's own messages go to a log shown only
when the run fails. The program's GODEBUG gets cpu.rdtscp=off: valgrind
3.19 does not decode RDTSCP on AMD processors, which the Go runtime uses
at times (other programs ignore GODEBUG; a Go program that imports
golang.org/x/sys/cpu prints a harmless line that it does not know the
setting).

Nothing is written at OUT unless the program exits with status 0 and the
import succeeds; an existing OUT is replaced only with --force.`,
		Example: `  parscope bbv -o gzip.pst --interval 1000000 -- gzip -9 -k -f big.txt
  parscope bbv -o job.pst -- mpirun -np 2 ./app
  parscope bbv -o two.pst --keep raw/ -- sh -c './prog & ./prog; wait'`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return usagef("bbv: -o OUT.pst is required")
			}
			if interval < 1 {
				return usagef("bbv: --interval %d: want a positive number of instructions", interval)
			}
			if !force {
				if _, err := os.Stat(out); err == nil {
					return fmt.Errorf("bbv: %s exists (use --force to replace it)", out)
				}
			}
			vg, err := exec.LookPath(vgPath)
			if err != nil {
				return fmt.Errorf("bbv: valgrind is needed (apt-get install valgrind): %w", err)
			}
			tmp, err := os.MkdirTemp("", "parscope-bbv-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(tmp)

			vgArgs := []string{
				"--tool=exp-bbv",
				"--interval-size=" + strconv.FormatInt(interval, 10),
				"--trace-children=yes",
				"--bb-out-file=" + filepath.Join(tmp, "bb.out.%p"),
				"--pc-out-file=" + filepath.Join(tmp, "pc.out.%p"),
				"--log-file=" + filepath.Join(tmp, "valgrind.%p.log"),
			}
			run := exec.CommandContext(cmd.Context(), vg, append(vgArgs, args...)...)
			run.Stdin, run.Stdout, run.Stderr = os.Stdin, cmd.OutOrStdout(), cmd.ErrOrStderr()
			run.Env = valgrindEnv(os.Environ())
			start := time.Now()
			if err := run.Run(); err != nil {
				logs := valgrindLogs(tmp)
				var ee *exec.ExitError
				if errors.As(err, &ee) {
					return fmt.Errorf("bbv: %s under valgrind exited with status %d; nothing was written\n%s", args[0], ee.ExitCode(), logs)
				}
				return fmt.Errorf("bbv: running valgrind: %w\n%s", err, logs)
			}
			files, skipped, err := bbvFiles(tmp)
			if err != nil {
				return err
			}
			if len(files) == 0 {
				return fmt.Errorf("bbv: no process completed an interval of %d instructions; use a smaller --interval", interval)
			}
			params := map[string]string{}
			if len(files) == 1 {
				pc := filepath.Join(tmp, "pc.out."+strings.TrimPrefix(filepath.Base(files[0]), "bb.out."))
				if _, err := os.Stat(pc); err == nil {
					params["pc"] = pc
				}
			}
			if keep != "" {
				if err := keepFiles(keep, force, files); err != nil {
					return err
				}
			}
			w, err := store.Create(out, store.Options{Force: force})
			if err != nil {
				return err
			}
			defer w.Abort()
			h := w.Header()
			h.Meta.ClockResolution = 1
			h.Meta.Program = args[0]
			h.Meta.CommandLine = append([]string(nil), args...)
			h.Meta.Extra = map[string]string{"interval_size": strconv.FormatInt(interval, 10), "tool": "valgrind exp-bbv"}
			if err := (bbv.Importer{}).Import(cmd.Context(), files, format.Options{Params: params}, w); err != nil {
				return err
			}
			if err := w.Close(); err != nil {
				return err
			}
			progress.Notef(cmd.ErrOrStderr(), "bbv: %d process(es) with basic block vectors of %s instructions in %s (%d without a complete interval left out) in %s\n",
				len(files), human.Count(interval), out, skipped, time.Since(start).Round(time.Millisecond))
			if skipped > 0 {
				progress.Warnf(cmd.ErrOrStderr(), "bbv: %d process(es) ran less than one interval (%s instructions): they have no vector and are left out", skipped, human.Count(interval))
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&out, "output", "o", "", "the .pst directory to write")
	f.Int64Var(&interval, "interval", 10_000_000, "interval size in instructions")
	forceFlag(f, &force)
	f.StringVar(&keep, "keep", "", "also copy exp-bbv's raw .bb files into this directory")
	f.StringVar(&vgPath, "valgrind", "valgrind", "the valgrind executable")
	root.AddCommand(cmd)
}

// bbvFiles returns the exp-bbv output files in dir that hold at least one
// interval (a "T" line), and how many others there were.
func bbvFiles(dir string) (files []string, skipped int, err error) {
	all, err := filepath.Glob(filepath.Join(dir, "bb.out.*"))
	if err != nil {
		return nil, 0, err
	}
	for _, p := range all {
		ok, err := hasInterval(p)
		if err != nil {
			return nil, 0, err
		}
		if ok {
			files = append(files, p)
		} else {
			skipped++
		}
	}
	return files, skipped, nil
}

// hasInterval reports whether the file has a line starting with 'T'.
func hasInterval(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<16)
	atStart := true
	for {
		b, err := br.ReadByte()
		if err != nil {
			return false, nil
		}
		if atStart && b == 'T' {
			return true, nil
		}
		atStart = b == '\n'
	}
}

// keepFiles copies the raw files into dir, creating it.
func keepFiles(dir string, force bool, files []string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, filepath.Base(p))
		if err := createOutput(dst, force, func(w io.Writer) error { _, err := w.Write(data); return err }); err != nil {
			return fmt.Errorf("bbv: --keep: %w", err)
		}
	}
	return nil
}

// valgrindLogs returns the last lines of valgrind's logs, for errors.
func valgrindLogs(dir string) string {
	logs, _ := filepath.Glob(filepath.Join(dir, "valgrind.*.log"))
	var b strings.Builder
	for _, p := range logs {
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		lines := bytes.Split(bytes.TrimSpace(data), []byte("\n"))
		if len(lines) > 8 {
			lines = lines[len(lines)-8:]
		}
		fmt.Fprintf(&b, "%s:\n%s\n", filepath.Base(p), bytes.Join(lines, []byte("\n")))
	}
	return strings.TrimSpace(b.String())
}

// valgrindEnv returns env with cpu.rdtscp=off added to GODEBUG (unless
// GODEBUG already sets cpu.rdtscp), for a program run under valgrind. The
// Go runtime reads the time-stamp counter with RDTSCP when a thread waits
// for a runtime lock, and valgrind 3.19 does not decode that instruction
// on AMD processors: a Go program under it died with SIGILL in
// runtime.cputicks when such a wait happened (see probe.ModelEnv, which
// the probe's model machines run with). Programs not written in Go ignore
// GODEBUG; golang.org/x/sys/cpu reads it too and prints a line on stderr
// that it does not know the setting.
func valgrindEnv(env []string) []string {
	out := make([]string, 0, len(env)+1)
	set := false
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "GODEBUG="); ok && !set {
			set = true
			if !strings.Contains(v, "cpu.rdtscp=") {
				if v != "" {
					v += ","
				}
				kv = "GODEBUG=" + v + "cpu.rdtscp=off"
			}
		}
		out = append(out, kv)
	}
	if !set {
		out = append(out, "GODEBUG=cpu.rdtscp=off")
	}
	return out
}
