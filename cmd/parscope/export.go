package main

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/format/chrome"
	"github.com/parscope/parscope/format/csv"
	"github.com/parscope/parscope/format/prv"
	"github.com/parscope/parscope/internal/atomicfile"
	"github.com/parscope/parscope/internal/human"
	"github.com/parscope/parscope/internal/progress"
	"github.com/parscope/parscope/store"
)

func init() {
	var (
		formatName string
		out        string
		tableName  string
		noFlows    bool
		runs       string
		procs      string
		force      bool
	)
	cmd := &cobra.Command{
		Use:   "export --format chrome|csv|prv -o OUT TRACE",
		Short: "Export a trace to Perfetto/Chrome JSON, CSV tables or Paraver",
		Long: `Export writes a .pst trace in another format.

  chrome  Chrome trace-event JSON that opens in ui.perfetto.dev and
          chrome://tracing: one track group per process, states as slices,
          regions nested, messages as slices with flow arrows from each send
          to its receive, events as instants, counters as counter tracks.
          OUT is a file, or - for standard output.
  csv     One CSV file per table (states.csv, messages.csv, ...) plus the
          dictionaries, into the directory OUT. With --table NAME, only
          that table, into the file OUT (or - for standard output).
          Tables: ` + strings.Join(csv.TableNames(), ", ") + `.
  prv     Paraver: OUT.prv, OUT.pcf and OUT.row (one run, --runs picks it;
          default 0), for wxparaver.

Outputs are written under a temporary name beside OUT, synced to disk and
renamed into place (the CSV directory as a whole), so a failed or killed
export never leaves a partial file or directory. An existing file is
replaced only with --force, and only when it is a regular file; an
existing CSV directory only when it holds nothing but CSV tables export
writes (or nothing).`,
		Example: `  parscope export --format chrome -o amoeba.json amoeba.pst
  parscope export --format csv -o amoeba-csv/ amoeba.pst
  parscope export --format csv --table states -o - amoeba.pst | head`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return usagef("export: -o OUT is required")
			}
			opts, err := readSelection(runs, procs)
			if err != nil {
				return err
			}
			// Refuse an output that may not be replaced before reading
			// the trace.
			switch {
			case formatName == "prv" || formatName == "paraver":
				p, pcf, row := prv.Paths(out)
				err = checkFileOutputs(force, p, pcf, row)
			case formatName == "chrome" || formatName == "perfetto" || formatName == "json" || formatName == "csv" && tableName != "":
				err = checkFileOutputs(force, out)
			}
			if err != nil {
				return err
			}
			s, err := openTrace(cmd, args[0])
			if err != nil {
				return err
			}
			defer s.Close()
			switch formatName {
			case "chrome", "perfetto", "json":
				var st chrome.Stats
				err := createOutput(out, force, func(w io.Writer) error {
					return chrome.Export(w, s.Header(), s.Records(opts), chrome.Options{NoFlows: noFlows, Stats: &st})
				})
				if err != nil {
					return err
				}
				if out != "-" {
					progress.Notef(cmd.ErrOrStderr(), "wrote %s: %s trace events (%s flows) from %s records\n",
						out, human.Count(st.Events), human.Count(st.Flows), human.Count(st.Records))
				}
				return nil
			case "csv":
				if tableName != "" {
					return createOutput(out, force, func(w io.Writer) error {
						r := s.Records(opts)
						if strings.TrimSuffix(tableName, ".csv") == "bbv" {
							r = s.BBV(opts)
						}
						return csv.ExportTable(w, tableName, s.Header(), r)
					})
				}
				d, err := atomicfile.CreateDir(out, atomicfile.EmptyDirOr(csvDir))
				if err != nil {
					return err
				}
				defer d.Abort()
				if err := csv.Export(d.Path(), s.Header(), s.Records(opts), s.BBV(opts), csv.Options{}); err != nil {
					return fmt.Errorf("export: writing CSV tables into %s: %w", out, atomicfile.Cause(err))
				}
				if err := d.Commit(); err != nil {
					return err
				}
				progress.Notef(cmd.ErrOrStderr(), "wrote CSV tables into %s\n", out)
				return nil
			case "prv", "paraver":
				if out == "-" {
					return usagef("export: Paraver output is three files; give -o BASE")
				}
				po := prv.ExportOptions{Replace: replaceFile(force)}
				if len(opts.Runs) > 1 {
					return usagef("export: a Paraver trace holds one run; give --runs N")
				} else if len(opts.Runs) == 1 {
					po.Run = opts.Runs[0]
				}
				st, err := prv.Export(cmd.Context(), out, s.Header(), s.Records(opts), po)
				if err != nil {
					return err
				}
				p, _, _ := prv.Paths(out)
				progress.Notef(cmd.ErrOrStderr(), "wrote %s (+ .pcf, .row): %s records, %s skipped, %s unmatched message sides\n",
					p, human.Count(st.Records), human.Count(st.Skipped), human.Count(st.Unmatched))
				if st.Unmatched > 0 {
					progress.Warnf(cmd.ErrOrStderr(), "%s: %s message sides without their other side are left out (a Paraver communication record needs both)", p, human.Count(st.Unmatched))
				}
				return nil
			case "":
				return usagef("export: --format is required (chrome, csv or prv)")
			}
			return usagef("export: unknown format %q (want chrome, csv or prv)", formatName)
		},
	}
	f := cmd.Flags()
	f.StringVar(&formatName, "format", "", "output format: chrome, csv or prv")
	f.StringVarP(&out, "output", "o", "", "output file (chrome, csv --table) or directory (csv)")
	f.StringVar(&tableName, "table", "", "csv: write only this table")
	forceFlag(f, &force)
	f.BoolVar(&noFlows, "no-flows", false, "chrome: leave out message flow arrows")
	f.StringVar(&runs, "runs", "", "only these runs (e.g. 0,2 or 1-3)")
	f.StringVar(&procs, "procs", "", "only these processes (e.g. 4,5,6 or 0-15)")
	addTraceFlags(cmd, "input-format")
	root.AddCommand(cmd)
}

// csvDir allows replacing path, an existing entry that is not an empty
// directory (atomicfile.EmptyDirOr), only when it is a directory holding
// nothing but the CSV tables export writes.
func csvDir(path string, fi fs.FileInfo) error {
	if !fi.IsDir() {
		return fmt.Errorf("%s exists and is not a directory of CSV tables; refusing to replace it", path)
	}
	ents, err := os.ReadDir(path)
	if err != nil {
		return err
	}
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name(), ".csv")
		if !ok || !e.Type().IsRegular() || !slices.Contains(csv.TableNames(), name) {
			return fmt.Errorf("%s holds %s, which export does not write; refusing to replace the directory", path, e.Name())
		}
	}
	return nil
}

// readSelection turns --runs and --procs into store read options.
func readSelection(runs, procs string) (store.ReadOptions, error) {
	var o store.ReadOptions
	var err error
	if o.Runs, err = parseIDList(runs); err != nil {
		return o, usagef("--runs: %v", err)
	}
	if o.Procs, err = parseIDList(procs); err != nil {
		return o, usagef("--procs: %v", err)
	}
	return o, nil
}

// parseIDList parses "1,4,7-9" into ids; "" gives nil (everything).
func parseIDList(s string) ([]int32, error) { return engine.ParseIDs(s) }
