package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/instrument"
	"github.com/parscope/parscope/internal/atomicfile"
	"github.com/parscope/parscope/internal/progress"
	"github.com/parscope/parscope/store"
	"github.com/parscope/parscope/trace"
)

// importFlags say how to import a trace that is not a .pst: the flags of
// parscope import, which every command reading a trace shares.
type importFlags struct {
	formatName string
	dict       string
	timeUnit   time.Duration
	params     []string
	// formatFlag is the name of the flag holding formatName: "format",
	// or "input-format" where --format names an output format (export).
	formatFlag string
}

// register defines the flags on fl. Commands other than import say that
// they apply only to a TRACE that is not a .pst.
func (f *importFlags) register(fl *pflag.FlagSet, formatFlag string, importing bool) {
	f.formatFlag = formatFlag
	when := "when TRACE is not a .pst: "
	if importing {
		when = ""
	}
	fl.StringVar(&f.formatName, formatFlag, "", when+"the input format (default: detected from content; known: "+strings.Join(format.Names(), ", ")+")")
	fl.StringVar(&f.dict, "dict", "", when+"dictionary file naming states (gomez: 'id description' lines)")
	fl.DurationVar(&f.timeUnit, "time-unit", 0, when+"unit of the input's timestamps, overriding the format's default (e.g. 1us, 1ns)")
	fl.StringArrayVar(&f.params, "param", nil, when+"format-specific option key=value (repeatable)")
}

// given reports whether any import flag was set.
func (f *importFlags) given() bool {
	return f.formatName != "" || f.dict != "" || f.timeUnit != 0 || len(f.params) > 0
}

// importer returns the importer of the trace at path: the one --format
// names, or the one whose detection accepts the content of path.
func (f *importFlags) importer(path string) (format.Importer, error) {
	if f.formatName != "" {
		return format.Lookup(f.formatName)
	}
	return format.Detect(path)
}

// options returns the import options the flags give.
func (f *importFlags) options() (format.Options, error) {
	opts := format.Options{Dict: f.dict, TimeUnit: f.timeUnit, Params: map[string]string{}}
	for _, p := range f.params {
		k, v, ok := strings.Cut(p, "=")
		if !ok {
			return opts, usagef("--param %q is not key=value", p)
		}
		opts.Params[k] = v
	}
	return opts, nil
}

// importInto imports inputs with imp into a new .pst at out (replacing
// an existing .pst only with sopts.Force), showing the records written on
// a terminal. Nothing is left at out when it fails.
func importInto(ctx context.Context, imp format.Importer, inputs []string, opts format.Options, out string, sopts store.Options) error {
	w, err := store.Create(out, sopts)
	if err != nil {
		return err
	}
	defer w.Abort()
	pw := withProgress(w, "importing "+imp.Name())
	err = imp.Import(ctx, inputs, opts, pw)
	pw.done()
	if err != nil {
		return err
	}
	return w.Close()
}

// traceImports holds the import flags of each command that reads a
// trace (see addTraceFlags).
var traceImports = map[*cobra.Command]*importFlags{}

// addTraceFlags gives cmd, a command reading a trace, the flags saying how
// to import a TRACE that is not a .pst, under formatFlag for the format.
func addTraceFlags(cmd *cobra.Command, formatFlag string) *importFlags {
	f := &importFlags{}
	f.register(cmd.Flags(), formatFlag, false)
	traceImports[cmd] = f
	return f
}

// openedTrace is a trace open for reading. Close closes it and removes the
// temporary .pst of a trace imported on the fly.
type openedTrace struct {
	*store.Store
	tmp *atomicfile.Dir // the temporary directory holding the imported .pst, or nil
}

// Close closes the store and removes what openTrace imported.
func (t *openedTrace) Close() error {
	err := t.Store.Close()
	if t.tmp != nil {
		t.tmp.Abort()
	}
	return err
}

// openTrace opens the trace at path for cmd, the one place every command
// that reads a trace opens it. A recording left unbuilt at path (by a
// program without the trace store, or PARSCOPE_BUILD=later) is built into
// its .pst first, once. A .pst is
// opened as it is. Anything else
// parscope import reads (a trace file, an OTF2 archive directory or its
// anchor file, a .meta, .prv ...) is imported, with the format detected as
// import detects it and the import flags of cmd (addTraceFlags), into a
// temporary .pst named after the trace, so that results and reports carry
// the trace's own name; Close removes it. Errors name path as the user gave
// it, never a temporary name.
func openTrace(cmd *cobra.Command, path string) (*openedTrace, error) {
	f := traceImports[cmd]
	if f == nil {
		f = &importFlags{formatFlag: "format"}
	}
	if instrument.Unbuilt(path) {
		if err := buildRecording(cmd, path); err != nil {
			return nil, err
		}
	}
	fi, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: no such file or directory", path)
		}
		return nil, err
	}
	if fi.IsDir() && store.Replaceable(path) == nil {
		if f.given() {
			return nil, usagef("%s is a .pst trace: --%s, --dict, --time-unit and --param apply to a trace to import", path, f.formatFlag)
		}
		s, err := store.Open(path)
		if err != nil {
			return nil, err
		}
		return &openedTrace{Store: s}, nil
	}
	inputs := []string{path}
	imp, err := f.importer(path)
	if err != nil && fi.IsDir() && f.formatName == "" {
		// Not a .pst nor an archive: the trace files of one format that
		// make one trace (one per rank, as the annotated format's).
		imp, inputs, err = dirInputs(path)
	}
	if err != nil {
		return nil, err
	}
	opts, err := f.options()
	if err != nil {
		return nil, err
	}
	// A temporary directory of atomicfile, never committed: Close removes
	// it, and the next import on the fly removes those of processes that
	// died before (killed, or by SIGPIPE when their output was cut).
	tmp, err := atomicfile.CreateDir(filepath.Join(os.TempDir(), "parscope-import"), nil)
	if err != nil {
		return nil, fmt.Errorf("importing %s: %w", path, atomicfile.Cause(err))
	}
	pst := filepath.Join(tmp.Path(), traceName(path, fi, imp))
	if err := importInto(cmd.Context(), imp, inputs, opts, pst, store.Options{}); err != nil {
		tmp.Abort()
		return nil, hideTemporary(err, tmp.Path(), path)
	}
	s, err := store.Open(pst)
	if err != nil {
		tmp.Abort()
		return nil, hideTemporary(err, tmp.Path(), path)
	}
	for _, warn := range format.Warnings(s.Header()) {
		progress.Warnf(cmd.ErrOrStderr(), "%s", warn) // it names the file, as for import
	}
	return &openedTrace{Store: s, tmp: tmp}, nil
}

// dirInputs returns the importer and the files of dir, a directory that
// is neither a .pst nor a trace archive, when they are trace files of one
// format, which import together as one trace (the files of each rank, or
// of each run): every regular file of dir whose name does not begin with
// a dot, in name order. A file of no known format, or of another format
// than the others, is an error that names it.
func dirInputs(dir string) (format.Importer, []string, error) {
	const rule = "a folder given as TRACE holds the trace files of one format (the annotated format's file per rank, Go or Chrome traces of several runs); for a trace made of files of several kinds give its main file: an OTF2 traces.otf2, a DUMPI .meta, a Paraver .prv"
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, err
	}
	var imp format.Importer
	var inputs []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") || !e.Type().IsRegular() {
			continue
		}
		p := filepath.Join(dir, e.Name())
		fimp, err := format.Detect(p)
		if err != nil {
			return nil, nil, fmt.Errorf("%s is not a parscope trace (no .pst manifest in it) nor a folder of trace files: %s is of no format parscope reads (known: %s); %s", dir, e.Name(), strings.Join(format.Names(), ", "), rule)
		}
		if imp != nil && fimp.Name() != imp.Name() {
			return nil, nil, fmt.Errorf("%s is not a parscope trace (no .pst manifest in it) nor a folder of trace files of one format: %s is %s, but %s is %s; %s", dir, e.Name(), fimp.Name(), filepath.Base(inputs[0]), imp.Name(), rule)
		}
		imp = fimp
		inputs = append(inputs, p)
	}
	if imp == nil {
		return nil, nil, fmt.Errorf("%s is a directory but not a parscope trace (no .pst manifest in it), a trace archive, nor a folder of trace files: it holds no file", dir)
	}
	return imp, inputs, nil
}

// hideTemporary returns err, an error of importing the trace at path into
// the temporary directory tmp, without the temporary name: an error about
// a file under tmp (a full disk, say) says what went wrong in importing
// path. Errors about the input itself are returned as they are.
func hideTemporary(err error, tmp, path string) error {
	if !strings.Contains(err.Error(), tmp) {
		return err
	}
	if cause := atomicfile.Cause(err); !strings.Contains(cause.Error(), tmp) {
		return fmt.Errorf("importing %s into a temporary .pst: %w", path, cause)
	}
	return fmt.Errorf("importing %s into a temporary .pst: %s", path, strings.ReplaceAll(err.Error(), tmp+string(filepath.Separator), ""))
}

// traceName is the name a trace imported on the fly goes by: the base name
// of its path, or, for the anchor file of an OTF2 archive (traces.otf2),
// the archive directory's name.
func traceName(path string, fi fs.FileInfo, imp format.Importer) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = filepath.Clean(path)
	}
	name := filepath.Base(abs)
	if !fi.IsDir() && imp.Name() == "otf2" {
		if dir := filepath.Base(filepath.Dir(abs)); dir != "." && dir != string(filepath.Separator) {
			name = dir
		}
	}
	return name
}

// needRecords returns an *engine.MissingError, one line saying why the
// analysis does not apply, unless the trace t holds records of one of the
// kinds.
func needRecords(t *openedTrace, analysis string, kinds ...trace.Kind) error {
	stats := t.Manifest().Stats
	for _, k := range kinds {
		if stats.Records[k.String()] > 0 {
			return nil
		}
	}
	return &engine.MissingError{Trace: filepath.Base(t.Dir()), Analysis: analysis, Needs: kinds}
}

// runsInHeader returns an error naming the first of runs that the header h
// of the trace at path does not list.
func runsInHeader(path string, h *trace.Header, runs []int32) error {
	for _, r := range runs {
		if !slices.ContainsFunc(h.Runs, func(ri trace.RunInfo) bool { return ri.ID == r }) {
			return fmt.Errorf("%s: the trace has no run %d", path, r)
		}
	}
	return nil
}

// checkRuns returns a usage error naming the runs of sel (a --runs list)
// that the trace t does not have, so that a selection of nothing is not
// taken for an empty result.
func checkRuns(t *openedTrace, sel []int32) error {
	have := map[int32]bool{}
	var ids []int32
	for _, r := range t.Manifest().Stats.Runs {
		have[r.Run] = true
		ids = append(ids, r.Run)
	}
	var missing []string
	for _, r := range sel {
		if !have[r] {
			missing = append(missing, fmt.Sprint(r))
		}
	}
	if len(missing) == 0 {
		return nil
	}
	slices.Sort(ids)
	var list []string
	for _, r := range ids {
		list = append(list, fmt.Sprint(r))
	}
	return usagef("--runs: %s has no run %s (its runs: %s)", filepath.Base(t.Dir()), strings.Join(missing, ", "), strings.Join(list, ", "))
}

// checkSourceDirs returns an error naming the first of dirs (the
// --source-dir flags) that is not a directory, so that a mistyped one is
// not taken for a program whose source lines cannot be found.
func checkSourceDirs(dirs []string) error {
	for _, d := range dirs {
		fi, err := os.Stat(d)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return fmt.Errorf("--source-dir %s: no such directory", d)
		case err != nil:
			return fmt.Errorf("--source-dir %s: %w", d, atomicfile.Cause(err))
		case !fi.IsDir():
			return fmt.Errorf("--source-dir %s: not a directory", d)
		}
	}
	return nil
}
