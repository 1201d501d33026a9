package main

import (
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/internal/human"
	"github.com/parscope/parscope/internal/progress"
	"github.com/parscope/parscope/store"
)

// importMemoryLimit is the soft memory limit of an import (GOMEMLIMIT
// overrides it): comfortably above what the store's bounded buffers need.
const importMemoryLimit = 200 << 20

func init() {
	var (
		imf   importFlags
		out   string
		force bool
	)
	cmd := &cobra.Command{
		Use:   "import [--format F] -o OUT.pst INPUT...",
		Short: "Convert trace files into a .pst trace",
		Long: `Import converts trace files into parscope's .pst store. The format is
guessed from the content of the first input unless --format is given.
Known formats: ` + strings.Join(format.Names(), ", ") + `.

Nothing is written at OUT until the import has succeeded; an existing OUT is
replaced only with --force.`,
		Example: `  parscope import -o amoeba.pst testdata/examples/amoeba.srt
  parscope import --format gomez --dict blocks.txt -o run.pst run.0 run.1 run.2
  parscope import -o mg.pst mg.rank*.trace`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return usagef("import: -o OUT.pst is required")
			}
			imp, err := imf.importer(args[0])
			if err != nil {
				return err
			}
			opts, err := imf.options()
			if err != nil {
				return usagef("import: %v", err)
			}
			if os.Getenv("GOMEMLIMIT") == "" {
				// Imports stream in bounded memory; a soft limit keeps the
				// garbage collector from letting the heap double past it.
				debug.SetMemoryLimit(importMemoryLimit)
			}
			start := time.Now()
			if err := importInto(cmd.Context(), imp, args, opts, out, store.Options{Force: force}); err != nil {
				return err
			}
			s, err := store.Open(out)
			if err != nil {
				return err
			}
			defer s.Close()
			var n int64
			for _, c := range s.Manifest().Stats.Records {
				n += c
			}
			progress.Notef(cmd.ErrOrStderr(), "imported %s records (%s) from %d file(s) into %s in %s\n",
				human.Count(n), imp.Name(), len(args), out, human.Duration(time.Since(start)))
			for _, warn := range format.Warnings(s.Header()) {
				progress.Warnf(cmd.ErrOrStderr(), "%s", warn)
			}
			return nil
		},
	}
	f := cmd.Flags()
	imf.register(f, "format", true)
	f.StringVarP(&out, "output", "o", "", "the .pst directory to write")
	forceFlag(f, &force)
	root.AddCommand(cmd)
}
