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
	"github.com/parscope/parscope/show/plot"
)

func init() {
	var (
		f         stateFlags
		elevation string
		azimuth   float64
		plotPath  string
		csvPath   string
	)
	cmd := &cobra.Command{
		Use:   "phasespace TRACE.pst",
		Short: "Project the parallel states into 3D: the hypercube on its diagonal (Gomez, Cai & Schubert 2017, section 3.3)",
		Long: `Phasespace places every state at X3 = Σ u_i x_i, where process i's unit
vector u_i points at angle 2πi/P around the vertical and rises so that the
all-start corner is at the bottom and the all-end corner straight above it.
A lockstep execution draws a vertical line; excursions from the axis are
processes running apart.

--csv writes the points (run, state, t, x, y, z); --plot draws a side view
(the horizontal axis at --azimuth degrees around the vertical), one colour
per run, pale early and full late.`,
		Example: `  parscope phasespace --plot phases.svg philosophers.pst
  parscope phasespace --csv points.csv --procs 4,5,6 philosophers.pst`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			el, err := phasespace.ParseElevation(elevation)
			if err != nil {
				return usagef("--elevation: %v", err)
			}
			if plotPath == "" && csvPath == "" {
				return usagef("phasespace: give --plot FILE, --csv FILE, or both")
			}
			s, open, sopts, err := f.open(cmd, args[0])
			if err != nil {
				return err
			}
			defer s.Close()
			var series []plot.Series
			var proj *phasespace.Projector
			az := azimuth * math.Pi / 180
			write := func(w io.Writer) error {
				bw := bufio.NewWriter(w)
				if w != nil {
					fmt.Fprintln(bw, "run,state,t,x,y,z")
				}
				var buf []byte
				err := state.Reconstruct(cmd.Context(), s.Header(), open(), sopts, func(r *state.Row) error {
					if proj == nil || len(series) == 0 || r.Index == 0 {
						proj = phasespace.NewProjector(r.P(), el)
						series = append(series, plot.Series{Name: fmt.Sprintf("run %d", r.Run)})
					}
					pt := proj.Project(r.X)
					if plotPath != "" {
						cur := &series[len(series)-1]
						cur.X = append(cur.X, pt[0]*math.Cos(az)+pt[1]*math.Sin(az))
						cur.Y = append(cur.Y, pt[2])
					}
					if w == nil {
						return nil
					}
					buf = strconv.AppendInt(buf[:0], int64(r.Run), 10)
					buf = append(buf, ',')
					buf = strconv.AppendInt(buf, r.Index, 10)
					buf = append(buf, ',')
					buf = strconv.AppendInt(buf, r.T, 10)
					for _, c := range pt {
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
			}
			if csvPath != "" {
				err = createOutput(csvPath, write)
			} else {
				err = write(nil)
			}
			if err != nil {
				return err
			}
			if plotPath == "" {
				return nil
			}
			thin := thinSeries(series, false)
			for i := range thin {
				n := len(thin[i].X)
				thin[i].Shade = make([]float64, n)
				for k := range thin[i].Shade {
					thin[i].Shade[k] = float64(k) / float64(max(n-1, 1))
				}
			}
			return plot.Scatter(plotPath, fmt.Sprintf("phase space, side view at %g°", azimuth), "horizontal", "vertical (lockstep axis)", thin)
		},
	}
	f.register(cmd)
	fl := cmd.Flags()
	fl.StringVar(&elevation, "elevation", "diagonal", "axis elevation: diagonal (a true cube on its corner) or paper (π/3)")
	fl.Float64Var(&azimuth, "azimuth", 0, "side view direction in degrees around the vertical")
	fl.StringVar(&plotPath, "plot", "", "draw the side view to this .png or .svg")
	fl.StringVar(&csvPath, "csv", "", "write the 3D points to this CSV file (- for standard output)")
	root.AddCommand(cmd)
}

// thinSeries keeps at most maxPlotPoints points per series; with sized, the
// markers grow with the position in the run.
func thinSeries(in []plot.Series, sized bool) []plot.Series {
	out := make([]plot.Series, len(in))
	for i, s := range in {
		idx := plot.Thin(len(s.X), maxPlotPoints)
		o := plot.Series{Name: s.Name}
		for k, j := range idx {
			o.X = append(o.X, s.X[j])
			o.Y = append(o.Y, s.Y[j])
			if sized {
				o.Size = append(o.Size, float64(k)/float64(max(len(idx)-1, 1)))
			}
		}
		out[i] = o
	}
	return out
}
