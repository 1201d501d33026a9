// Package compare sets two runs side by side: a run of one trace's report
// bundle against a run of another's (before and after a change, 16 against
// 64 ranks), or two runs of the same trace. For every analysis present in
// both bundles it lists the figures of each side with their difference.
//
// Processes differ between traces, so only aggregates and figures per
// region (matched by name) are compared, never per-process arrays. The
// package computes no analysis: it reads the results report.FromStore
// gathered.
package compare

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/parscope/parscope/analysis/comm"
	"github.com/parscope/parscope/analysis/entropy"
	"github.com/parscope/parscope/analysis/occupancy"
	"github.com/parscope/parscope/analysis/pop"
	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/report"
)

// Name is the analysis name of the comparison in JSON envelopes.
const Name = "compare"

// MaxRegions bounds the region rows of a table: the largest absolute
// changes are kept and Table.Omitted counts the others.
const MaxRegions = 30

// Units of Row.Unit.
const (
	UnitNS    = "ns"
	UnitBytes = "bytes"
	UnitCount = "count"
	UnitRatio = "ratio"
	UnitBits  = "bits"
	// UnitValue is a counter's own unit (Row.Name names the counter).
	UnitValue = "value"
)

// Sides of Row.Only and Missing.In.
const (
	SideA = "a"
	SideB = "b"
)

// Result is the comparison of run RunA of trace TraceA with run RunB of
// trace TraceB.
type Result struct {
	TraceA string `json:"trace_a"`
	RunA   int32  `json:"run_a"`
	TraceB string `json:"trace_b"`
	RunB   int32  `json:"run_b"`
	// Sections hold one entry per analysis present on both sides, in the
	// order of the report bundle.
	Sections []Section `json:"sections"`
	// Missing lists the analyses present on one side only (or on none),
	// with the reason the other side lacks them.
	Missing []Missing `json:"missing"`
}

// Section is the comparison of one analysis' figures.
type Section struct {
	// Analysis is the analysis' name (report.AnalysisProfile, …).
	Analysis string  `json:"analysis"`
	Tables   []Table `json:"tables"`
}

// Table is one group of figures of a section.
type Table struct {
	// Title says what the rows are ("run", "exclusive time by region").
	Title string `json:"title"`
	Rows  []Row  `json:"rows"`
	// Omitted counts the rows MaxRegions left out (the smallest changes).
	Omitted int `json:"omitted"`
	// Note qualifies the rows, when they need it.
	Note string `json:"note,omitempty"`
}

// Row is one figure on both sides.
type Row struct {
	Name string `json:"name"`
	// Unit is the figure's unit: UnitNS, UnitBytes, UnitCount, UnitRatio
	// or UnitBits.
	Unit string  `json:"unit"`
	A    float64 `json:"a"`
	B    float64 `json:"b"`
	// Diff is B − A.
	Diff float64 `json:"diff"`
	// DiffPct is Diff as a percentage of A; null when A is 0 and B is
	// not (an infinite change), 0 when both are 0.
	DiffPct *float64 `json:"diff_pct"`
	// Only is SideA or SideB for a region found on that side only (its
	// figure on the other side is then 0).
	Only string `json:"only,omitempty"`
}

// Missing is an analysis that cannot be compared.
type Missing struct {
	Analysis string `json:"analysis"`
	// In is the side that has it (SideA, SideB), or "" for neither.
	In string `json:"in"`
	// ReasonA and ReasonB say why a side lacks it ("" for a side that
	// has it).
	ReasonA string `json:"reason_a,omitempty"`
	ReasonB string `json:"reason_b,omitempty"`
}

// NewRow returns the row of a figure: a on side A and b on side B.
func NewRow(name, unit string, a, b float64) Row {
	r := Row{Name: name, Unit: unit, A: a, B: b, Diff: b - a}
	switch {
	case a != 0:
		p := r.Diff / math.Abs(a) * 100
		r.DiffPct = &p
	case b == 0:
		p := 0.0
		r.DiffPct = &p
	}
	return r
}

// side is one bundle and the run compared.
type side struct {
	b   *report.Bundle
	run int32
}

// Bundles compares run runA of bundle a with run runB of bundle b. It
// fails when a bundle is nil or lacks the run asked for.
func Bundles(a, b *report.Bundle, runA, runB int32) (*Result, error) {
	if a == nil || b == nil {
		return nil, fmt.Errorf("compare: no bundle")
	}
	sa, sb := side{a, runA}, side{b, runB}
	for _, s := range []struct {
		side
		name string
	}{{sa, "A"}, {sb, "B"}} {
		if !hasRun(s.b, s.run) {
			return nil, fmt.Errorf("compare: trace %s (%s) has no run %d (runs: %s)", s.name, s.b.Trace, s.run, runList(s.b))
		}
	}
	res := &Result{TraceA: a.Trace, RunA: runA, TraceB: b.Trace, RunB: runB, Sections: []Section{}, Missing: []Missing{}}
	for _, c := range comparers {
		ta, whyA := c.tables(sa)
		tb, whyB := c.tables(sb)
		if ta == nil || tb == nil {
			m := Missing{Analysis: c.name}
			if ta == nil {
				m.ReasonA = whyA
			} else {
				m.In = SideA
			}
			if tb == nil {
				m.ReasonB = whyB
			} else {
				m.In = SideB
			}
			res.Missing = append(res.Missing, m)
			continue
		}
		tables := join(ta, tb)
		if c.name == report.AnalysisPOP {
			tables = append(tables, scalability(sa, sb)...)
		}
		res.Sections = append(res.Sections, Section{Analysis: c.name, Tables: tables})
	}
	return res, nil
}

// scalability is the POP scalability of run B against run A, the
// reference: computation scalability, the total useful time of A over
// that of B (strong scaling: the same problem on more processes), and
// the same with B's total scaled by P_A/P_B (weak scaling: the same work
// per process); global efficiency is parallel efficiency × computation
// scalability, 1 × A's parallel efficiency for A. None when a side has no
// POP figures of its run.
func scalability(a, b side) []Table {
	pa, okA := popRun(a)
	pb, okB := popRun(b)
	if !okA || !okB || pa.Procs == 0 || pb.Procs == 0 {
		return nil
	}
	usefulA := pa.UsefulMeanNS * float64(pa.Procs)
	usefulB := pb.UsefulMeanNS * float64(pb.Procs)
	if usefulA <= 0 || usefulB <= 0 {
		return nil
	}
	strong := usefulA / usefulB
	weak := usefulA / (usefulB * float64(pa.Procs) / float64(pb.Procs))
	return []Table{{Title: "scalability (B against A, the reference)", Rows: []Row{
		NewRow("computation_scalability_strong", UnitRatio, 1, strong),
		NewRow("global_efficiency_strong", UnitRatio, pa.ParallelEfficiency, pb.ParallelEfficiency*strong),
		NewRow("computation_scalability_weak", UnitRatio, 1, weak),
		NewRow("global_efficiency_weak", UnitRatio, pa.ParallelEfficiency, pb.ParallelEfficiency*weak),
	}, Note: "POP: computation scalability = Σ useful time of A / Σ useful time of B (strong scaling; weak scaling scales B's by P_A/P_B); global efficiency = parallel efficiency × computation scalability"}}
}

// popRun returns the POP figures of a side's run.
func popRun(s side) (pop.Run, bool) {
	r, ok := s.b.POPResult()
	if !ok {
		return pop.Run{}, false
	}
	for _, p := range r.Runs {
		if p.Run == s.run {
			return p, true
		}
	}
	return pop.Run{}, false
}

// figures are the tables of one side before they are joined: each table
// an ordered list of named figures.
type figures []figTable

type figTable struct {
	title string
	// regions marks a table of regions: rows sorted by absolute change,
	// names present on one side marked, at most MaxRegions kept.
	regions bool
	note    string
	figs    []fig
	// partial says that this side's list is cut (the analysis kept its
	// top rows only): a name missing here may be among those left out.
	partial bool
}

type fig struct {
	name, unit string
	v          float64
}

// comparer reads one analysis' figures of a side, or says why it has none.
type comparer struct {
	name   string
	tables func(s side) (figures, string)
}

var comparers = []comparer{
	{report.AnalysisOverview, overviewFigures},
	{report.AnalysisProfile, profileFigures},
	{report.AnalysisPOP, popFigures},
	{report.AnalysisWaitStates, waitFigures},
	{report.AnalysisCritPath, critFigures},
	{report.AnalysisComm, commFigures},
	{report.AnalysisOccupancy, occupancyFigures},
	{report.AnalysisEntropy, entropyFigures},
	{report.AnalysisCounters, countersFigures},
}

// join pairs the tables of the two sides by title, in side A's order
// (then side B's tables that A lacks), and their rows by name.
func join(a, b figures) []Table {
	out := []Table{}
	byTitle := map[string]int{}
	for i, t := range b {
		byTitle[t.title] = i
	}
	seen := map[string]bool{}
	for _, ta := range a {
		seen[ta.title] = true
		j, ok := byTitle[ta.title]
		if !ok {
			out = append(out, Table{Title: ta.title, Rows: []Row{}, Note: "only trace A has these figures"})
			continue
		}
		out = append(out, joinTable(ta, b[j]))
	}
	for _, tb := range b {
		if !seen[tb.title] {
			out = append(out, Table{Title: tb.title, Rows: []Row{}, Note: "only trace B has these figures"})
		}
	}
	return out
}

// joinTable matches the rows of a table's two sides by name. The rows of
// a region table are sorted by absolute change, largest first (then by
// name), at most MaxRegions; the others keep their order.
func joinTable(a, b figTable) Table {
	t := Table{Title: a.title, Rows: []Row{}, Note: a.note}
	if a.partial || b.partial {
		t.Note = "a side lists its largest regions only: a region marked as found on one side may be among those the other side left out"
	}
	unit := map[string]string{}
	va, vb := map[string]float64{}, map[string]float64{}
	var names []string
	add := func(m map[string]float64, figs []fig) {
		for _, f := range figs {
			if math.IsNaN(f.v) || math.IsInf(f.v, 0) {
				continue
			}
			if _, ok := unit[f.name]; !ok {
				names = append(names, f.name)
				unit[f.name] = f.unit
			}
			m[f.name] += f.v
		}
	}
	add(va, a.figs)
	add(vb, b.figs)
	for _, n := range names {
		x, inA := va[n]
		y, inB := vb[n]
		r := NewRow(n, unit[n], x, y)
		switch {
		case !inB:
			r.Only = SideA
		case !inA:
			r.Only = SideB
		}
		t.Rows = append(t.Rows, r)
	}
	if !a.regions {
		return t
	}
	slices.SortStableFunc(t.Rows, func(p, q Row) int {
		if c := cmp.Compare(math.Abs(q.Diff), math.Abs(p.Diff)); c != 0 {
			return c
		}
		return cmp.Compare(p.Name, q.Name)
	})
	if len(t.Rows) > MaxRegions {
		t.Omitted = len(t.Rows) - MaxRegions
		t.Rows = t.Rows[:MaxRegions]
	}
	return t
}

func hasRun(b *report.Bundle, run int32) bool {
	for _, r := range b.Runs {
		if r.Run == run {
			return true
		}
	}
	return false
}

func runList(b *report.Bundle) string {
	s := ""
	for i, r := range b.Runs {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprint(r.Run)
	}
	if s == "" {
		return "none"
	}
	return s
}

// absent says why a side has no result of an analysis.
func absent(s side, name string) string {
	if why := s.b.Skipped[name]; why != "" {
		return why
	}
	return "not computed"
}

func noRun(s side) string { return fmt.Sprintf("no result for run %d", s.run) }

func count(name string, v int64) fig    { return fig{name, UnitCount, float64(v)} }
func ns(name string, v int64) fig       { return fig{name, UnitNS, float64(v)} }
func ratio(name string, v float64) fig  { return fig{name, UnitRatio, v} }
func bytesFig(name string, v int64) fig { return fig{name, UnitBytes, float64(v)} }
func bits(name string, v float64) fig   { return fig{name, UnitBits, v} }
func nsF(name string, v float64) fig    { return fig{name, UnitNS, v} }
func countF(name string, v float64) fig { return fig{name, UnitCount, v} }

func overviewFigures(s side) (figures, string) {
	if s.b.Overview == nil && len(s.b.Runs) == 0 {
		return nil, absent(s, report.AnalysisOverview)
	}
	for _, r := range s.b.Runs {
		if r.Run != s.run {
			continue
		}
		run := figTable{title: "run", figs: []fig{
			count("procs", int64(r.Procs)),
			count("records", r.Records),
			ns("span_ns", r.EndNS-r.BeginNS),
		}}
		kinds := make([]string, 0, len(s.b.Records))
		for k := range s.b.Records {
			kinds = append(kinds, k)
		}
		slices.Sort(kinds)
		rec := figTable{title: "records by kind (every run of the trace)", regions: true}
		for _, k := range kinds {
			rec.figs = append(rec.figs, count(k, s.b.Records[k]))
		}
		return figures{run, rec}, ""
	}
	return nil, noRun(s)
}

func profileFigures(s side) (figures, string) {
	r, ok := s.b.ProfileResult()
	if !ok {
		return nil, absent(s, report.AnalysisProfile)
	}
	for _, p := range r.Runs {
		if p.Run != s.run {
			continue
		}
		tot := figTable{title: "totals (" + r.Of + ")", figs: []fig{
			count("procs", int64(p.Procs)),
			ns("total_ns", p.TotalNS),
			ns("outside_ns", p.OutsideNS),
			count("messages", p.Messages.Count),
			bytesFig("message_bytes", p.Messages.Bytes),
		}}
		partial := p.FlatOmitted > 0
		ex := figTable{title: "exclusive time by region", regions: true, partial: partial}
		in := figTable{title: "inclusive time by region", regions: true, partial: partial}
		vi := figTable{title: "visits by region", regions: true, partial: partial}
		for _, e := range p.Flat {
			ex.figs = append(ex.figs, ns(e.Name, e.ExclusiveNS))
			in.figs = append(in.figs, ns(e.Name, e.InclusiveNS))
			vi.figs = append(vi.figs, count(e.Name, e.Visits))
		}
		return figures{tot, ex, in, vi}, ""
	}
	return nil, noRun(s)
}

func popFigures(s side) (figures, string) {
	r, ok := s.b.POPResult()
	if !ok {
		return nil, absent(s, report.AnalysisPOP)
	}
	for _, p := range r.Runs {
		if p.Run != s.run {
			continue
		}
		eff := figTable{title: "efficiencies", figs: []fig{
			ratio("parallel_efficiency", p.ParallelEfficiency),
			ratio("load_balance", p.LoadBalance),
			ratio("communication_efficiency", p.CommunicationEfficiency),
		}}
		times := figTable{title: "times", figs: []fig{
			count("procs", int64(p.Procs)),
			ns("runtime_ns", p.RuntimeNS),
			nsF("useful_mean_ns", p.UsefulMeanNS),
			ns("useful_max_ns", p.UsefulMaxNS),
		}}
		if p.Ideal == nil {
			// No replay (no matched message, no collective): no
			// serialisation or transfer efficiency on this side.
			return figures{eff, times}, ""
		}
		ideal := figTable{title: "ideal network replay", figs: []fig{
			ratio("serialization_efficiency", p.Ideal.SerializationEfficiency),
			ratio("transfer_efficiency", p.Ideal.TransferEfficiency),
			ns("ideal_runtime_ns", p.Ideal.RuntimeNS),
		}}
		return figures{eff, ideal, times}, ""
	}
	return nil, noRun(s)
}

func waitFigures(s side) (figures, string) {
	r, ok := s.b.WaitStatesResult()
	if !ok {
		return nil, absent(s, report.AnalysisWaitStates)
	}
	for _, w := range r.Runs {
		if w.Run != s.run {
			continue
		}
		tot := figTable{title: "totals", figs: []fig{
			ns("mpi_ns", w.MPINS),
			ns("wait_ns", w.WaitNS),
			count("messages", w.Messages),
			count("collectives", w.Collectives),
		}}
		pat := figTable{title: "wait by pattern"}
		calls := figTable{title: "waiting calls by pattern"}
		for _, a := range w.Patterns {
			pat.figs = append(pat.figs, ns(a.Pattern+"_ns", a.WaitNS))
			calls.figs = append(calls.figs, count(a.Pattern, a.Calls))
		}
		return figures{tot, pat, calls}, ""
	}
	return nil, noRun(s)
}

func critFigures(s side) (figures, string) {
	r, ok := s.b.CritPathResult()
	if !ok {
		return nil, absent(s, report.AnalysisCritPath)
	}
	for _, p := range r.Runs {
		if p.Run != s.run {
			continue
		}
		path := figTable{title: "path", figs: []fig{
			ns("length_ns", p.LengthNS),
			ns("computation_ns", p.ComputationNS),
			ns("communication_ns", p.CommunicationNS),
			count("message_jumps", p.MessageJumps),
			count("collective_jumps", p.CollectiveJumps),
		}}
		reg := figTable{title: "time on the path by region", regions: true, partial: p.RegionsOmitted > 0}
		for _, g := range p.Regions {
			reg.figs = append(reg.figs, ns(g.Name, g.NS))
		}
		return figures{path, reg}, ""
	}
	return nil, noRun(s)
}

func commFigures(s side) (figures, string) {
	if s.b.Comm == nil || s.b.Comm.Envelope == nil {
		return nil, absent(s, report.AnalysisComm)
	}
	r, ok := s.b.Comm.Result.(*comm.Report)
	if !ok {
		return nil, absent(s, report.AnalysisComm)
	}
	for _, p := range r.Runs {
		if p.Result == nil || p.Run != s.run || len(p.Nodes) == 0 {
			continue
		}
		root := p.Nodes[0].Aggregate
		tot := figTable{title: "totals", figs: []fig{
			count("messages", root.Messages),
			bytesFig("bytes", root.Bytes),
			count("matched_messages", p.Matched),
			count("pairs", int64(root.Pairs)),
			count("max_degree", int64(root.Degree)),
			countF("mean_degree", root.MeanDegree),
		}}
		// Bytes by structure, named by the path of names from the root.
		by := figTable{title: "bytes by code structure (own)", regions: true}
		for i := 1; i < len(p.Nodes); i++ {
			n := p.Nodes[i]
			if n.Own.Bytes != 0 {
				by.figs = append(by.figs, bytesFig(p.Path(i), n.Own.Bytes))
			}
		}
		return figures{tot, by}, ""
	}
	return nil, noRun(s)
}

func occupancyFigures(s side) (figures, string) {
	if s.b.Occupancy == nil {
		return nil, absent(s, report.AnalysisOccupancy)
	}
	r, ok := s.b.Occupancy.Result.(*occupancy.Report)
	if !ok {
		return nil, absent(s, report.AnalysisOccupancy)
	}
	for _, p := range r.Runs {
		if p.Run != s.run {
			continue
		}
		head := figTable{title: "occupancy", figs: []fig{
			count("procs", int64(p.Procs)),
			count("state_records", p.StateRecords),
			count("microstates", p.Microstates),
			count("observed_macrostates", int64(p.ObservedMacrostates)),
			countF("compression", p.Compression),
			ns("absent_ns", p.AbsentNS),
		}}
		mean := figTable{title: "mean processes × time by mode (global_ns)", regions: true}
		for _, m := range p.Mean {
			mean.figs = append(mean.figs, nsF(m.Mode, m.GlobalNS))
		}
		return figures{head, mean}, ""
	}
	return nil, noRun(s)
}

func countersFigures(s side) (figures, string) {
	r, ok := s.b.CountersResult()
	if !ok {
		return nil, absent(s, report.AnalysisCounters)
	}
	for _, p := range r.Runs {
		if p.Run != s.run {
			continue
		}
		mean := figTable{title: "mean by counter", regions: true}
		samples := figTable{title: "samples by counter", regions: true}
		for _, c := range p.Counters {
			mean.figs = append(mean.figs, fig{c.Name, UnitValue, c.Mean})
			samples.figs = append(samples.figs, count(c.Name, c.Samples))
		}
		return figures{mean, samples}, ""
	}
	return nil, noRun(s)
}

func entropyFigures(s side) (figures, string) {
	if s.b.Entropy == nil {
		return nil, absent(s, report.AnalysisEntropy)
	}
	r, ok := s.b.Entropy.Result.(*entropy.Report)
	if !ok {
		return nil, absent(s, report.AnalysisEntropy)
	}
	for _, p := range r.Runs {
		if p.Run != s.run {
			continue
		}
		return figures{{title: "entropy", figs: []fig{
			bits("comb_entropy", p.CombEntropy),
			bits("comb_entropy_distinct", p.CombEntropyDistinct),
			count("distinct_classes", int64(p.DistinctClasses)),
			ratio("distinct_fraction", p.DistinctFraction),
			bits("surprisal_mean", p.SurprisalMean),
			count("rows", p.Rows),
		}}}, ""
	}
	return nil, noRun(s)
}

// Side names one side of a comparison: a trace and its run.
type Side struct {
	Trace string `json:"trace"`
	Run   int32  `json:"run"`
}

// Envelope is the JSON of a comparison every face answers (parscope
// compare --json, the web server's /api/compare), shaped like the
// engine's envelopes.
type Envelope struct {
	SchemaVersion int     `json:"schema_version"`
	Analysis      string  `json:"analysis"`
	A             Side    `json:"a"`
	B             Side    `json:"b"`
	Result        *Result `json:"result"`
}

// Wrap returns the envelope of r.
func Wrap(r *Result) *Envelope {
	return &Envelope{SchemaVersion: engine.SchemaVersion, Analysis: Name,
		A: Side{r.TraceA, r.RunA}, B: Side{r.TraceB, r.RunB}, Result: r}
}
