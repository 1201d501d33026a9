package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/parscope/parscope/collect/rewrite"
	"github.com/parscope/parscope/internal/human"
	"github.com/parscope/parscope/internal/progress"
	"github.com/parscope/parscope/store"
	"github.com/parscope/parscope/trace"
)

func init() {
	group := &cobra.Command{
		Use:   "filter",
		Short: "Filter files for parscope instrument --filter",
	}
	var (
		out    string
		asJSON bool
		force  bool
		o      rewrite.SuggestOptions
	)
	suggest := &cobra.Command{
		Use:   "suggest TRACE",
		Short: "From a first run's trace, list functions by recording cost and suggest a filter file",
		Long: `Suggest reads the trace of a first run of a program rewritten by parscope
instrument and lists its functions by estimated recording cost (records ×
--record-cost plus dropped events × --drop-cost, like Score-P's
scorep-score; unless given, both are measured on this machine first, by
recording a few tens of milliseconds with the rewritten program's filter
and throttle): calls, records, mean call time
(entry to exit block), distinct paths of its own blocks, and the mean
modified entropy of a call (Özmen 2002, Table 4's table, K = 1, uniform
probabilities over the function's paths, each process's calls of one
function a stream). A function is suggested for exclusion when it was
called at least --min-calls times, a call lasts under --max-call-ns, and
its calls carry at most --max-entropy nats each: it costs much and its
records say little more than its count. main and function literals are
never excluded (a filter cannot name them).

A function not excluded is suggested coarse (its entry and exit recorded,
no block or region inside it: function-level instrumentation, as
Score-P's) when its calls run at least --min-blocks-per-call block events
each, recorded or dropped by the recorder's filter and throttle, its
events are at least 1% of those the filtered program would still record
(largest functions first: the trace's, less those of the functions
excluded and of the larger ones made coarse), and recording them costs
at least a millisecond: its loops are what recording it costs.

With -o FILE it writes the suggestion as a filter file ("exclude PATTERN"
and "coarse PATTERN" lines) for parscope instrument --filter. A throttled trace (parscope info
lists what was dropped) undercounts calls beyond the throttle.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := openTrace(cmd, args[0])
			if err != nil {
				return err
			}
			defer s.Close()
			if o.RecordCostNs == 0 || o.DropCostNs == 0 {
				rec, drop, err := rewrite.MeasureCosts()
				if err != nil {
					return err
				}
				if o.RecordCostNs == 0 {
					o.RecordCostNs = rec
				}
				if o.DropCostNs == 0 {
					o.DropCostNs = drop
				}
				progress.Notef(cmd.ErrOrStderr(), "the recorder's costs measured on this machine: %.1f ns a record, %.1f ns a dropped event\n", rec, drop)
			}
			sel := store.ReadOptions{Kinds: []trace.Kind{trace.KindState, trace.KindEnter, trace.KindExit}}
			sug, err := rewrite.Suggest(cmd.Context(), s.Header(), s.Records(sel), o)
			if err != nil {
				return err
			}
			if out != "" {
				if err := createOutput(out, force, sug.WriteFilter); err != nil {
					return err
				}
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), sug)
			}
			return printSuggestion(cmd.OutOrStdout(), sug)
		},
	}
	fl := suggest.Flags()
	fileOutputFlag(fl, &out, "output", "o", "", "write the filter file here (\"-\": standard output)")
	forceFlag(fl, &force)
	fl.BoolVar(&asJSON, "json", false, "print JSON")
	addTraceFlags(suggest, "format")
	fl.Int64Var(&o.MinCalls, "min-calls", rewrite.DefaultSuggestMinCalls, "exclude only functions called at least this often")
	fl.Float64Var(&o.MaxCallNs, "max-call-ns", rewrite.DefaultSuggestMaxCallNs, "exclude only functions whose mean call is shorter (ns)")
	fl.Float64Var(&o.MaxEntropy, "max-entropy", rewrite.DefaultSuggestMaxEntropy, "exclude only functions whose calls carry at most this modified entropy each (nats)")
	fl.Float64Var(&o.RecordCostNs, "record-cost", 0, "estimated cost of one record (ns; 0: measured on this machine)")
	fl.Float64Var(&o.DropCostNs, "drop-cost", 0, "estimated cost of an event the recorder dropped (ns; 0: measured on this machine)")
	fl.Float64Var(&o.MinBlocksPerCall, "min-blocks-per-call", rewrite.DefaultSuggestMinBlocksPerCall, "make coarse only functions whose calls run at least this many block events each")
	fl.Int64Var(&o.ThrottleCalls, "throttle-calls", rewrite.DefaultSuggestThrottleCalls, "exclude functions called at least this often with calls shorter than --max-call-ns, whatever their entropy (TAU's throttle rule; negative: never)")
	group.AddCommand(suggest)
	root.AddCommand(group)
}

// printSuggestion prints the functions by decreasing estimated cost.
func printSuggestion(w io.Writer, s *rewrite.Suggestion) error {
	tw := newTable(w)
	fmt.Fprintf(tw, "function\tcalls\trecords\tdropped\tcost ms\tmean call ns\tpaths\tentropy/call\tsuggestion\n")
	var excl, cost float64
	for _, f := range s.Functions {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.3f\t%.0f\t%d\t%.4g\t%s\n", f.Function, human.Count(f.Calls), human.Count(f.Records), human.Count(f.Dropped), f.CostNs/1e6, f.MeanCallNs, f.Paths, f.Entropy, f.Why)
		switch {
		case f.Exclude:
			excl += float64(f.Records + f.Dropped)
			cost += f.CostNs
		case f.Coarse:
			// Its entry and exit blocks stay.
			excl += float64(f.Records + f.Dropped - 2*f.Calls)
			cost += f.CostNs * float64(f.Records+f.Dropped-2*f.Calls) / float64(f.Records+f.Dropped)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "the suggested filter saves %s of %s events, recorded or dropped (est. %.3f ms of recording)\n", human.Count(int64(excl)), human.Count(s.Records+s.Dropped), cost/1e6)
	return err
}
