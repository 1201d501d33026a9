package rewrite

import (
	"cmp"
	"context"
	"fmt"
	"hash/fnv"
	"io"
	"slices"
	"strings"

	"github.com/parscope/parscope/analysis/mentropy"
	"github.com/parscope/parscope/instrument"
	"github.com/parscope/parscope/trace"
)

// Defaults of SuggestOptions.
const (
	// DefaultSuggestMinCalls is the fewest calls of a function for the
	// suggestion to exclude it.
	DefaultSuggestMinCalls = 10000
	// DefaultSuggestMaxCallNs is the longest mean call (ns, entry to exit
	// block) of a function the suggestion excludes: TAU's throttle rule
	// of 10 µs a call.
	DefaultSuggestMaxCallNs = 10000
	// DefaultSuggestMaxEntropy is the largest mean modified entropy per
	// call (nats, K = 1) of a function the suggestion excludes. A function
	// whose calls all take one path reaches 0.000123 a call from its sixth
	// call on; two paths in alternation give 0.17 a call.
	DefaultSuggestMaxEntropy = 0.01
	// DefaultRecordCostNs is the estimated cost of recording one block or
	// region enter or exit when SuggestOptions gives none: the instrument
	// library's recording of one block with its timestamp, 17.8–22.3 ns
	// on two cores with an invariant time-stamp counter
	// (docs/performance.md). MeasureCosts measures it on the machine at
	// hand, as `parscope filter suggest` does.
	DefaultRecordCostNs = 20
	// DefaultDropCostNs is the estimated cost of a block or region enter
	// the recorder drops (filter or throttle): about 8 ns an event on
	// spectral-norm (docs/performance.md).
	DefaultDropCostNs = 8
	// DefaultSuggestMinBlocksPerCall is the fewest block events a call
	// (recorded and dropped, over its calls) of a function the suggestion
	// makes coarse: its loops, not its calls, are what recording costs.
	DefaultSuggestMinBlocksPerCall = 1000
	// DefaultSuggestThrottleCalls is the call count from which the
	// suggestion excludes a function of short calls whatever their
	// entropy: TAU's throttle (100,000 calls of under 10 µs each), which
	// the rewritten program's recorder applies at run time in any case
	// (DefaultThrottle), only paying to drop each event.
	DefaultSuggestThrottleCalls = DefaultThrottle
)

// SuggestOptions configure Suggest. Zero fields take the defaults above.
type SuggestOptions struct {
	MinCalls   int64
	MaxCallNs  float64
	MaxEntropy float64
	// RecordCostNs is the estimated cost of one record, in ns, and
	// DropCostNs that of an event the recorder dropped.
	RecordCostNs, DropCostNs float64
	// MinBlocksPerCall is the fewest block events a call of a function
	// the suggestion makes coarse (see Suggest).
	MinBlocksPerCall float64
	// ThrottleCalls is the call count from which a function of calls
	// shorter than MaxCallNs is excluded whatever its entropy (see
	// Suggest); negative: never.
	ThrottleCalls int64
}

// FunctionCost is what a first run's trace says about one function of a
// rewritten program.
type FunctionCost struct {
	// Function is the function's name as the dictionary writes it.
	Function string `json:"function"`
	// Calls counts its entry blocks, over all processes.
	Calls int64 `json:"calls"`
	// AllCalls is Calls and the entry blocks the recorder dropped.
	AllCalls int64 `json:"all_calls"`
	// Records counts its block records and its regions' enters and exits.
	Records int64 `json:"records"`
	// Dropped counts the events of its blocks the recorder dropped (its
	// filter and throttle, from the trace's metadata).
	Dropped int64 `json:"dropped"`
	// CostNs is Records × SuggestOptions.RecordCostNs + Dropped ×
	// SuggestOptions.DropCostNs.
	CostNs float64 `json:"cost_ns"`
	// MeanCallNs is the mean time from a call's entry block to its exit
	// block (calls without an exit block are not counted).
	MeanCallNs float64 `json:"mean_call_ns"`
	// Paths is the number of distinct sequences of its own blocks its
	// calls took.
	Paths int `json:"paths"`
	// Entropy is the mean modified entropy of a call (see Suggest).
	Entropy float64 `json:"entropy"`
	// Exclude says the suggestion excludes it, Coarse that it makes it
	// coarse (its entry and exit only); Why says why or why not.
	Exclude bool   `json:"exclude"`
	Coarse  bool   `json:"coarse"`
	Why     string `json:"why"`
}

// Suggestion is Suggest's answer: every function of the trace's state
// dictionary that recorded, by decreasing estimated cost.
type Suggestion struct {
	Options   SuggestOptions `json:"options"`
	Functions []FunctionCost `json:"functions"`
	// Records is the trace's block records and region enters and exits,
	// and Dropped the block events its recorder dropped.
	Records int64 `json:"records"`
	Dropped int64 `json:"dropped"`
}

// coarseShare is the smallest share of a trace's events (recorded and
// dropped) of a function the suggestion makes coarse, among the events the
// filtered program would still record (see coarsen); coarseMinCostNs is
// the smallest estimated recording cost (FunctionCost.CostNs) of one. A
// function that costs little is left as it is, whatever its calls'
// length.
const (
	coarseShare     = 0.01
	coarseMinCostNs = 1e6
)

// Suggest reads a first run's trace of a program rewritten by Package
// (its block dictionary is the trace's state dictionary) and suggests the
// functions to exclude with a filter file, as Score-P's scorep-score
// does. r must give each process's records in time order.
//
// The rule: a declared function (not main, not a function literal, which
// a filter cannot name) is excluded when it was called at least MinCalls
// times, its mean call (entry block to exit block) is shorter than
// MaxCallNs, and its calls carry little information: the mean modified
// entropy of a call (Özmen 2002, Table 4's table, K = 1, uniform
// probabilities) is at most MaxEntropy. A call is the sequence of the
// function's own blocks from its entry to its exit; each process's
// stream of one function's calls, as ids of distinct sequences, is one
// stream of the modified entropy, so a function whose calls repeat one
// path has calls of almost no entropy, and one whose calls change path
// has peaks. Such a function costs much (CostNs, from its records) and
// its records say little more than its count.
//
// A function called at least ThrottleCalls times (recorded or dropped),
// each call shorter than MaxCallNs, is excluded whatever its entropy:
// that is TAU's throttle rule, which the recorder of a rewritten program
// applies at run time anyway (DefaultThrottle), dropping the events one
// by one after that many calls; excluding the function saves the cost of
// the drops and of the calls before them.
//
// A function it does not exclude is made coarse (recording its entry and
// exit only, Options.Coarse) when its calls run at least MinBlocksPerCall
// block events each on average, recorded or dropped by the recorder's
// filter and throttle (the trace's metadata), its events are at least 1%
// of those the filtered program would still record (the trace's, less
// the excluded functions' and the loops of the larger functions made
// coarse), and recording them costs at least a millisecond (CostNs): its
// loops, not its calls, are what recording it costs, and a call's path
// through them is what the coarse rule gives up.
func Suggest(ctx context.Context, h *trace.Header, r trace.Reader, o SuggestOptions) (*Suggestion, error) {
	if o.MinCalls == 0 {
		o.MinCalls = DefaultSuggestMinCalls
	}
	if o.MaxCallNs == 0 {
		o.MaxCallNs = DefaultSuggestMaxCallNs
	}
	if o.MaxEntropy == 0 {
		o.MaxEntropy = DefaultSuggestMaxEntropy
	}
	if o.RecordCostNs == 0 {
		o.RecordCostNs = DefaultRecordCostNs
	}
	if o.DropCostNs == 0 {
		o.DropCostNs = DefaultDropCostNs
	}
	if o.MinBlocksPerCall == 0 {
		o.MinBlocksPerCall = DefaultSuggestMinBlocksPerCall
	}
	if o.ThrottleCalls == 0 {
		o.ThrottleCalls = DefaultSuggestThrottleCalls
	}
	dropped, err := instrument.DroppedStates(h.Meta.Extra)
	if err != nil {
		return nil, err
	}
	funcOf, isEntry, isExit, names := blockFunctions(h.States)
	regionFunc := map[int32]int{}
	index := map[string]int{}
	for i, n := range names {
		index[n] = i
	}
	for _, g := range h.Regions {
		if i, ok := index[g.Function]; ok {
			regionFunc[g.ID] = i
		}
	}
	type stat struct {
		calls, records, timed, dropped int64
		droppedCalls                   int64
		callNs                         float64
		paths                          map[uint64]int32
		streams                        map[[2]int32][]int32 // (run, proc) → path ids
	}
	stats := make([]stat, len(names))
	for i := range stats {
		stats[i].paths = map[uint64]int32{}
		stats[i].streams = map[[2]int32][]int32{}
	}
	for id, n := range dropped {
		if fn, ok := funcOf[id]; ok {
			stats[fn].dropped += n
			if isEntry[id] {
				stats[fn].droppedCalls += n
			}
		}
	}
	type frame struct {
		fn    int
		t     int64
		path  []int32
		owner [2]int32
	}
	stacks := map[[2]int32][]frame{}
	var total int64
	endCall := func(fr frame, t int64, exited bool) {
		s := &stats[fr.fn]
		if exited {
			s.timed++
			s.callNs += float64(t - fr.t)
		}
		hs := fnv.New64a()
		for _, b := range fr.path {
			fmt.Fprint(hs, b, ",")
		}
		k := hs.Sum64()
		id, ok := s.paths[k]
		if !ok {
			id = int32(len(s.paths))
			s.paths[k] = id
		}
		s.streams[fr.owner] = append(s.streams[fr.owner], id)
	}
	err = trace.Each(r, func(rec *trace.Record) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		key := [2]int32{rec.Run, rec.Proc}
		switch rec.Kind {
		case trace.KindEnter, trace.KindExit:
			total++
			if i, ok := regionFunc[rec.ID]; ok {
				stats[i].records++
			}
			return nil
		case trace.KindState:
		default:
			return nil
		}
		total++
		fn, ok := funcOf[rec.ID]
		if !ok {
			return nil
		}
		stats[fn].records++
		st := stacks[key]
		if isEntry[rec.ID] {
			stats[fn].calls++
			stacks[key] = append(st, frame{fn: fn, t: rec.T, path: []int32{rec.ID}, owner: key})
			return nil
		}
		// The innermost open call of the block's function takes it; calls
		// above it that never recorded their exit (a panic) end here.
		j := len(st) - 1
		for j >= 0 && st[j].fn != fn {
			j--
		}
		if j < 0 {
			return nil
		}
		for k := len(st) - 1; k > j; k-- {
			endCall(st[k], rec.T, false)
		}
		st = st[:j+1]
		st[j].path = append(st[j].path, rec.ID)
		if isExit[rec.ID] {
			endCall(st[j], rec.T, true)
			st = st[:j]
		}
		stacks[key] = st
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, st := range stacks {
		for _, fr := range st {
			endCall(fr, fr.t, false)
		}
	}
	c := instrument.DefaultEntropyConfig()
	c.K = 1
	events := total // block events and region enters, recorded or dropped
	for _, n := range dropped {
		events += n
	}
	out := &Suggestion{Options: o, Records: total, Dropped: events - total}
	for i, n := range names {
		s := &stats[i]
		if s.records == 0 {
			continue
		}
		fc := FunctionCost{Function: n, Calls: s.calls, AllCalls: s.calls + s.droppedCalls, Records: s.records, Dropped: s.dropped,
			CostNs: float64(s.records)*o.RecordCostNs + float64(s.dropped)*o.DropCostNs, Paths: len(s.paths)}
		if s.timed > 0 {
			fc.MeanCallNs = s.callNs / float64(s.timed)
		}
		var sum float64
		var ncalls int
		for _, stream := range s.streams {
			m, err := mentropy.NewMeter(c, mentropy.UniformProbs(len(s.paths)))
			if err != nil {
				return nil, err
			}
			for _, id := range stream {
				st, err := m.Next(id)
				if err != nil {
					return nil, err
				}
				sum += st.H
			}
			ncalls += len(stream)
		}
		if ncalls > 0 {
			fc.Entropy = sum / float64(ncalls)
		}
		fc.Exclude, fc.Why = suggestRule(fc, o)
		out.Functions = append(out.Functions, fc)
	}
	coarsen(out.Functions, events, o)
	slices.SortStableFunc(out.Functions, func(a, b FunctionCost) int {
		if a.CostNs != b.CostNs {
			if a.CostNs > b.CostNs {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Function, b.Function)
	})
	return out, nil
}

// coarsen applies Suggest's coarse rule to the functions it does not
// exclude, the ones with the most events first. A function's share is
// taken of the events that remain once the excluded functions' are gone
// and the larger functions made coarse keep only their entries and exits:
// what the filtered program would still record. So a function that is
// small beside one made coarse, but the largest cost left after it, is
// made coarse too (fasta's Repeat beside Random).
func coarsen(fcs []FunctionCost, events int64, o SuggestOptions) {
	size := func(fc *FunctionCost) float64 { return float64(fc.Records + fc.Dropped) }
	left := float64(events)
	var order []int
	for i := range fcs {
		if fcs[i].Exclude {
			left -= size(&fcs[i])
		} else if !strings.Contains(fcs[i].Function, ".func@") && fcs[i].Calls > 0 {
			order = append(order, i)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(size(&fcs[b]), size(&fcs[a])) })
	for _, i := range order {
		fc := &fcs[i]
		n := size(fc)
		per := n / float64(fc.Calls)
		if per < o.MinBlocksPerCall || n < coarseShare*max(left, 0) || fc.CostNs < coarseMinCostNs {
			continue
		}
		fc.Coarse, fc.Why = true, fmt.Sprintf("coarse: %.0f block events a call", per)
		left -= n - 2*float64(fc.Calls)
	}
}

// suggestRule applies Suggest's rule to one function.
func suggestRule(fc FunctionCost, o SuggestOptions) (bool, string) {
	switch {
	case fc.Function == "main" || strings.Contains(fc.Function, ".func@"):
		return false, "kept: a filter cannot exclude it"
	case fc.AllCalls < o.MinCalls:
		return false, fmt.Sprintf("kept: %d calls < %d", fc.AllCalls, o.MinCalls)
	case fc.MeanCallNs >= o.MaxCallNs:
		return false, fmt.Sprintf("kept: %.0f ns a call ≥ %.0f", fc.MeanCallNs, o.MaxCallNs)
	case fc.Entropy > o.MaxEntropy && o.ThrottleCalls > 0 && fc.AllCalls >= o.ThrottleCalls:
		return true, fmt.Sprintf("%d calls of %.0f ns ≥ %d (TAU's throttle rule), entropy %.4g a call", fc.AllCalls, fc.MeanCallNs, o.ThrottleCalls, fc.Entropy)
	case fc.Entropy > o.MaxEntropy:
		return false, fmt.Sprintf("kept: entropy %.4g a call > %.4g", fc.Entropy, o.MaxEntropy)
	}
	return true, fmt.Sprintf("%d calls of %.0f ns, entropy %.4g a call", fc.AllCalls, fc.MeanCallNs, fc.Entropy)
}

// blockFunctions maps each block of a rewritten program's state
// dictionary to its function (an index into names), and marks entry and
// exit blocks. A function's blocks are numbered from its entry block to
// its exit block, with its function literals' blocks in between.
func blockFunctions(states []trace.StateDef) (funcOf map[int32]int, isEntry, isExit map[int32]bool, names []string) {
	sorted := slices.Clone(states)
	slices.SortFunc(sorted, func(a, b trace.StateDef) int { return int(a.ID) - int(b.ID) })
	funcOf, isEntry, isExit = map[int32]int{}, map[int32]bool{}, map[int32]bool{}
	index := map[string]int{}
	var stack []int
	for _, s := range sorted {
		if name, ok := strings.CutPrefix(s.Description, "entry of "); ok && s.Name == "entry" {
			i, seen := index[name]
			if !seen {
				i = len(names)
				index[name] = i
				names = append(names, name)
			}
			stack = append(stack, i)
			funcOf[s.ID], isEntry[s.ID] = i, true
			continue
		}
		if len(stack) == 0 {
			continue
		}
		funcOf[s.ID] = stack[len(stack)-1]
		if _, ok := strings.CutPrefix(s.Description, "exit of "); ok && s.Name == "exit" {
			isExit[s.ID] = true
			stack = stack[:len(stack)-1]
		}
	}
	return funcOf, isEntry, isExit, names
}

// WriteFilter writes the excluded functions as a filter file (see
// ReadFilter), one "exclude" line each with the reason as a comment; a
// name's path.Match metacharacters are escaped so that the pattern
// matches that function only.
func (s *Suggestion) WriteFilter(w io.Writer) error {
	o := s.Options
	if _, err := fmt.Fprintf(w, "# parscope filter suggest: functions of at least %d calls, under %.0f ns a call,\n# at most %.4g nats of modified entropy a call (Özmen 2002, Table 4, K = 1)\n",
		o.MinCalls, o.MaxCallNs, o.MaxEntropy); err != nil {
		return err
	}
	if _, err := fmt.Fprintf(w, "# coarse: functions whose calls run at least %.0f block events each record their entry and exit only\n# costs: %.3g ns a record, %.3g ns a dropped event\n", o.MinBlocksPerCall, o.RecordCostNs, o.DropCostNs); err != nil {
		return err
	}
	for _, f := range s.Functions {
		rule := "exclude"
		switch {
		case f.Coarse:
			rule = "coarse"
		case !f.Exclude:
			continue
		}
		if _, err := fmt.Fprintf(w, "%s %s # %s, %d records, %d dropped, est. %.3g ms\n", rule, escapePattern(f.Function), f.Why, f.Records, f.Dropped, f.CostNs/1e6); err != nil {
			return err
		}
	}
	return nil
}

// escapePattern escapes path.Match's metacharacters in a function name.
func escapePattern(name string) string {
	var b strings.Builder
	for _, r := range name {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
