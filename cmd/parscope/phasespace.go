package main

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/parscope/parscope/analysis/phasespace"
	"github.com/parscope/parscope/analysis/state"
	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/internal/human"
	"github.com/parscope/parscope/show/plot"
	"github.com/parscope/parscope/trace"
)

func init() {
	params := phasespace.DefaultParams()
	var (
		runs     string
		azimuth  float64
		plotPath string
		csvPath  string
		asJSON   bool
		force    bool
	)
	cmd := &cobra.Command{
		Use:   "phasespace TRACE",
		Short: "Project the parallel states into 3D: the hypercube on its diagonal (Gomez, Cai & Schubert 2017, section 3.3)",
		Long: `Phasespace places every state at X3 = Σ u_i x_i, where process i's unit
vector u_i points at angle 2πi/P around the vertical and rises so that the
all-start corner is at the bottom and the all-end corner straight above it.
A process that does not exist at a state's time (before its first record,
after a goroutine ended) has the coordinate -1, as in the pca analysis.
A lockstep execution draws a vertical line; excursions from the axis are
processes running apart.

The result holds the points of at most --max-points evenly spaced states of
each run (one pass counts the states, a second projects them); the text
summarises them per run, --json prints the result in the envelope every face
shares (docs/results.md), and --plot draws a side view of them (the
horizontal axis at --azimuth degrees around the vertical), one colour per
run, pale early and full late. --csv writes the point of every state (run,
state, t, x, y, z): an export of the projection, not sampled.`,
		Example: `  parscope phasespace --plot phases.svg philosophers.pst
  parscope phasespace --csv points.csv --procs 4,5,6 philosophers.pst`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			el, err := phasespace.ParseElevation(params.Elevation)
			if err != nil {
				return usagef("--elevation: %v", err)
			}
			if params.MaxPoints < 0 {
				return usagef("--max-points must not be negative")
			}
			if csvPath != "" {
				if err := exportPhaseSpaceCSV(cmd, args[0], &params.Params, el, runs, csvPath); err != nil {
					return err
				}
				if plotPath == "" && !asJSON {
					return nil
				}
			}
			env, s, err := runOne(cmd, args[0], phasespace.Name, params, runs)
			if err != nil {
				return err
			}
			s.Close()
			rep := env.Result.(*phasespace.Report)
			if plotPath != "" && !hasPoints(rep) {
				return fmt.Errorf("%s: phasespace: no state to project in the runs and processes selected; nothing to plot", env.Trace)
			}
			if plotPath != "" {
				if err := plotPhaseSpace(rep, plotPath, force, azimuth); err != nil {
					return err
				}
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), env)
			}
			if plotPath != "" {
				return nil
			}
			w := newTable(cmd.OutOrStdout())
			fmt.Fprintf(w, "run\tprocs\tstates\tprojected\tlargest distance from the lockstep axis (elevation %s)\n", rep.Elevation)
			for _, r := range rep.Runs {
				far := 0.0
				for _, pt := range r.Points {
					far = max(far, phasespace.Horizontal(pt))
				}
				fmt.Fprintf(w, "%d\t%d\t%s\t%s\t%.4g\n", r.Run, r.Procs, human.Count(r.States), human.Count(int64(len(r.Points))), far)
			}
			return w.Flush()
		},
	}
	fl := cmd.Flags()
	if err := engine.BindFlags(fl, params); err != nil {
		panic(err)
	}
	fl.StringVar(&runs, "runs", "", "only these runs (e.g. 0,2 or 1-3)")
	addProcFlags(cmd, phasespace.Name)
	fl.Float64Var(&azimuth, "azimuth", 0, "side view direction in degrees around the vertical")
	fileOutputFlag(fl, &plotPath, "plot", "", "", "draw the side view to this .png or .svg")
	fileOutputFlag(fl, &csvPath, "csv", "", "", "write the 3D point of every state to this CSV file (- for standard output)")
	forceFlag(fl, &force)
	fl.BoolVar(&asJSON, "json", false, "print the result as JSON")
	addTraceFlags(cmd, "format")
	root.AddCommand(cmd)
}

// hasPoints reports whether rep projects at least one state.
func hasPoints(rep *phasespace.Report) bool {
	for _, r := range rep.Runs {
		if len(r.Points) > 0 {
			return true
		}
	}
	return false
}

// plotPhaseSpace draws the side view of the points of rep at azimuth
// degrees, shaded by position in the run.
func plotPhaseSpace(rep *phasespace.Report, path string, force bool, azimuth float64) error {
	az := azimuth * math.Pi / 180
	var series []plot.Series
	for _, r := range rep.Runs {
		s := plot.Series{Name: fmt.Sprintf("run %d", r.Run)}
		for i, pt := range r.Points {
			s.X = append(s.X, pt[0]*math.Cos(az)+pt[1]*math.Sin(az))
			s.Y = append(s.Y, pt[2])
			s.Shade = append(s.Shade, float64(i)/float64(max(len(r.Points)-1, 1)))
		}
		series = append(series, s)
	}
	fig, err := plot.Scatter(path, fmt.Sprintf("phase space, side view at %g°", azimuth), "horizontal", "vertical (lockstep axis)", series)
	return writeFigure(path, force, fig, err)
}

// exportPhaseSpaceCSV writes the point of every state of the runs
// selected: an export of the projection, not an analysis.
func exportPhaseSpaceCSV(cmd *cobra.Command, path string, p *state.Params, el phasespace.Elevation, runs, out string) error {
	return exportStates(cmd, path, p, phasespace.Name, runs, out, func(w io.Writer, h *trace.Header, rd trace.Reader, opts state.Options) error {
		bw := bufio.NewWriter(w)
		fmt.Fprintln(bw, "run,state,t,x,y,z")
		var (
			buf  []byte
			proj *phasespace.Projector
			run  int32 = -1
		)
		err := state.Reconstruct(cmd.Context(), h, rd, opts, func(r *state.Row) error {
			if proj == nil || r.Run != run {
				proj, run = phasespace.NewProjector(r.P(), el), r.Run
			}
			buf = strconv.AppendInt(buf[:0], int64(r.Run), 10)
			buf = append(buf, ',')
			buf = strconv.AppendInt(buf, r.Index, 10)
			buf = append(buf, ',')
			buf = strconv.AppendInt(buf, r.T, 10)
			for _, c := range proj.Project(r.X) {
				buf = append(buf, ',')
				buf = strconv.AppendFloat(buf, c, 'g', 8, 64)
			}
			buf = append(buf, '\n')
			_, err := bw.Write(buf)
			return err
		})
		if err != nil {
			return err
		}
		return bw.Flush()
	})
}
